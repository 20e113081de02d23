package render

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"

	"github.com/tracegap/tracegap/internal/untrusted"
)

// JUnitCase is one test case of a JUnit report: one rule held against one
// trace file, or the reading of a file that turned out unusable.
type JUnitCase struct {
	// Class is the file checked; Name is the rule ("verdict",
	// "max-idle", ...).
	Class, Name string
	// Failure, when set, says why the rule failed; Error, when set, why
	// the input could not be checked. Detail is the longer text of
	// either.
	Failure string
	Error   string
	Detail  string
	// Seconds is the time spent on the file, shared by its cases.
	Seconds float64
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Class   string        `xml:"classname,attr"`
	Name    string        `xml:"name,attr"`
	Time    string        `xml:"time,attr"`
	Failure *junitProblem `xml:"failure,omitempty"`
	Error   *junitProblem `xml:"error,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes cases as a JUnit XML report with one test suite named
// suite, the form Jenkins, GitLab and the GitHub test-report actions read.
func WriteJUnit(w io.Writer, suite string, cases []JUnitCase) error {
	s := junitSuite{Name: suite, Tests: len(cases)}
	for _, c := range cases {
		jc := junitCase{Class: c.Class, Name: c.Name, Time: fmt.Sprintf("%.3f", c.Seconds)}
		switch {
		case c.Error != "":
			s.Errors++
			jc.Error = &junitProblem{Message: c.Error, Type: "unusable input", Text: c.Detail}
		case c.Failure != "":
			s.Failures++
			jc.Failure = &junitProblem{Message: c.Failure, Type: "rule failed", Text: c.Detail}
		}
		s.Cases = append(s.Cases, jc)
	}
	doc := junitSuites{Name: suite, Tests: s.Tests, Failures: s.Failures, Errors: s.Errors, Suites: []junitSuite{s}}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	b.WriteString("\n")
	// encoding/xml writes the C1 controls and bidi characters of names
	// from traces as they are, and a CI log shows this file: escaped
	// whole, so that no character is split across writes.
	_, err := w.Write(untrusted.Markup(b.Bytes()))
	return err
}
