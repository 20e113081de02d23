package render

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

// junitDoc is the part of a JUnit report that CI systems read.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Cases    []struct {
			Class   string `xml:"classname,attr"`
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestWriteJUnit(t *testing.T) {
	cases := []JUnitCase{
		{Class: "a.json", Name: "verdict"},
		{Class: "a.json", Name: "max-idle", Failure: `measured 31.2%, limit 10% <"&">`, Detail: "idle\x01 by cause"},
		{Class: "b.pb", Name: "input", Error: "b.pb: not a trace: expected an XSpace at byte 0"},
	}
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, "tracegap check", cases); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "<?xml") {
		t.Errorf("report does not start with an XML declaration: %.40q", buf.String())
	}
	var doc junitDoc
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("report is not valid XML: %v\n%s", err, buf.String())
	}
	if doc.Tests != 3 || doc.Failures != 1 || doc.Errors != 1 || len(doc.Suites) != 1 {
		t.Fatalf("testsuites tests=%d failures=%d errors=%d suites=%d, want 3 1 1 1", doc.Tests, doc.Failures, doc.Errors, len(doc.Suites))
	}
	s := doc.Suites[0]
	if s.Name != "tracegap check" || s.Tests != 3 || s.Failures != 1 || s.Errors != 1 || len(s.Cases) != 3 {
		t.Fatalf("testsuite %q tests=%d failures=%d errors=%d cases=%d", s.Name, s.Tests, s.Failures, s.Errors, len(s.Cases))
	}
	if c := s.Cases[0]; c.Class != "a.json" || c.Name != "verdict" || c.Failure != nil || c.Error != nil {
		t.Errorf("case 0 = %+v, want a passing a.json verdict", c)
	}
	if c := s.Cases[1]; c.Failure == nil || c.Failure.Message != cases[1].Failure || c.Failure.Text != "idle\uFFFD by cause" {
		t.Errorf("case 1 failure = %+v, want message %q and the control byte replaced", c.Failure, cases[1].Failure)
	}
	if c := s.Cases[2]; c.Error == nil || c.Error.Message != cases[2].Error || c.Failure != nil {
		t.Errorf("case 2 = %+v, want an error %q", c, cases[2].Error)
	}
}

// TestJUnitEscapesControls: a name from a trace with a C1 control (U+009B,
// a terminal's CSI) and a bidi override reaches the XML escaped, as a CI
// log may show the file; names of other scripts stay as they are.
func TestJUnitEscapesControls(t *testing.T) {
	var b bytes.Buffer
	name := "run\u009b31m\u202e計算"
	if err := WriteJUnit(&b, "tracegap", []JUnitCase{{Class: "tracegap", Name: name, Failure: "verdict " + name}}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\u009b\u202e") {
		t.Errorf("a control reached the XML raw:\n%q", out)
	}
	if !strings.Contains(out, `run\u009b31m\u202e計算`) {
		t.Errorf("the name is not there, escaped:\n%s", out)
	}
	var doc junitDoc
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v", err)
	}
}
