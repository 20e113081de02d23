package render

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tracegap/tracegap/internal/analyze"
)

// sarifInputs are checks to write as SARIF: a failure at two call sites
// with Python lines (one through a library frame), a failure whose trace
// names no line, one whose sync site names only the program waited on, an
// unusable input and a passing one.
func sarifInputs() []SARIFFile {
	withLines := &analyze.Result{Window: analyze.Window{Start: 0, End: 100_000_000}, CallSites: []analyze.CallSite{
		{Frame: analyze.Frame{File: "train.py", Line: 42, Function: "step"}, Via: analyze.Frame{File: "api.py", Line: 3154, Function: "block_until_ready"},
			Call: "block_until_ready", Cause: analyze.InSync, Count: 5, Idle: 30_000_000},
		{Frame: analyze.Frame{File: "my data/load #1.py", Line: 7, Function: "next"}, Call: "enumerate(DataLoader)#x", Cause: analyze.Input, Count: 5, Idle: 10_000_000},
		{Call: "aten::linear", Cause: analyze.Host, Count: 5, Idle: 1_000_000},
	}}
	program := &analyze.Result{Window: analyze.Window{End: 100_000_000}, CallSites: []analyze.CallSite{
		{Call: "api.py:3154 block_until_ready", Cause: analyze.InSync, Count: 5, Idle: 50_000_000,
			Program: analyze.ProgramLine{Name: "jit_step", File: "/w/train.py", Line: 23, Op: "jit(step)/dot_general"}},
		{Call: "Build buffer allocations", Cause: analyze.Runtime, Count: 3, Idle: 20_000_000},
	}}
	noLines := &analyze.Result{Window: analyze.Window{End: 1}, StackHint: "The trace has no Python frames: record them with torch.profiler.profile(..., with_stack=True)."}
	return []SARIFFile{
		{Path: "a.pt.trace.json", Result: withLines, Failures: []SARIFFailure{{Rule: "verdict", Message: "verdict: measured sequential, limit not sequential"}}},
		{Path: "b.pt.trace.json", Result: noLines, Failures: []SARIFFailure{{Rule: "max-idle", Message: "max-idle: measured 40.0%, limit 10.0%"}}},
		{Path: "e.xplane.pb", Result: program, Failures: []SARIFFailure{{Rule: "max-sync-idle", Message: "max-sync-idle: measured 50.0%, limit 5.0%"}}},
		{Path: "c.json", Err: "c.json: unrecognised format"},
		{Path: "d.json", Result: noLines},
	}
}

// TestSARIF: a failure is located at each Python line that held the
// device idle, most idle first, with what it did; a trace without lines
// gets a result without a location that says how to record them; an
// unusable input is a result of its own.
func TestSARIF(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSARIF(&buf, "0.1.0.dev0", sarifInputs(), ""); err != nil {
		t.Fatal(err)
	}
	var log sarifLog
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	res := log.Runs[0].Results
	if len(res) != 5 {
		t.Fatalf("%d results, want 5: %s", len(res), buf.String())
	}
	loc := func(r sarifResult) string {
		if len(r.Locations) == 0 {
			return ""
		}
		p := r.Locations[0].PhysicalLocation
		return p.ArtifactLocation.URI + ":" + strconv.Itoa(p.Region.StartLine)
	}
	for i, want := range []struct{ rule, loc, text string }{
		{"verdict", "train.py:42", "held the device idle for 30.0 ms (30.0% of the window, in-sync, 5 calls): block_until_ready via api.py:3154 block_until_ready"},
		{"verdict", "my%20data/load%20%231.py:7", "10.0 ms (10.0% of the window, input"},
		{"max-idle", "", "with_stack=True"},
		{"max-sync-idle", "/w/train.py:23", "api.py:3154 block_until_ready held the device idle for 50.0 ms (50.0% of the window, in-sync, 5 calls) waiting on the program jit_step, whose ops come from this line (jit(step)/dot_general): this is where the waited-on program's code is, not the blocking call"},
		{"input", "", "c.json: unrecognised format"},
	} {
		if res[i].RuleID != want.rule || loc(res[i]) != want.loc || !strings.Contains(res[i].Message.Text, want.text) {
			t.Errorf("result %d: %s at %q: %q; want %s at %q with %q", i, res[i].RuleID, loc(res[i]), res[i].Message.Text, want.rule, want.loc, want.text)
		}
	}
	if rules := log.Runs[0].Tool.Driver.Rules; len(rules) != 4 {
		t.Errorf("rules %+v, want input, max-idle, max-sync-idle and verdict", rules)
	}
}

// TestSARIFSourceRoot: with the source root the code ran from, a location
// under it is relative to it, against %SRCROOT% (code scanning then finds
// the file in the repository); one elsewhere stays as the trace names it.
func TestSARIFSourceRoot(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSARIF(&buf, "0.1.0.dev0", sarifInputs(), "/w/"); err != nil {
		t.Fatal(err)
	}
	var log sarifLog
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	var got []sarifArtifact
	for _, r := range log.Runs[0].Results {
		if len(r.Locations) > 0 {
			got = append(got, r.Locations[0].PhysicalLocation.ArtifactLocation)
		}
	}
	want := []sarifArtifact{{URI: "train.py"}, {URI: "my%20data/load%20%231.py"}, {URI: "train.py", URIBaseID: "%SRCROOT%"}}
	if !slices.Equal(got, want) {
		t.Errorf("locations %+v, want %+v", got, want)
	}
}

// TestSARIFSchema validates the log against SARIF 2.1.0's published JSON
// schema, which .ci/run fetches (npm's @microsoft/jest-sarif ships it) and
// names in TRACEGAP_SARIF_SCHEMA; without it the test is skipped, except
// under CI.
func TestSARIFSchema(t *testing.T) {
	path := os.Getenv("TRACEGAP_SARIF_SCHEMA")
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("TRACEGAP_SARIF_SCHEMA is not set: .ci/run fetches SARIF's schema and sets it")
		}
		t.Skip("TRACEGAP_SARIF_SCHEMA not set (.ci/run sets it): SARIF's schema not checked")
	}
	c := jsonschema.NewCompiler()
	sch, err := c.Compile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The schema tells a log from what is not one.
	if bad, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"version": "2.1.0", "runs": [{"results": []}]}`)); sch.Validate(bad) == nil {
		t.Fatal("a run without its tool passed the schema: it checks nothing")
	}
	for i, files := range [][]SARIFFile{sarifInputs(), nil, sarifInputs()[3:], sarifInputs()} {
		root := ""
		if i == 3 {
			root = "/w" // locations against %SRCROOT%
		}
		var buf bytes.Buffer
		if err := WriteSARIF(&buf, "0.1.0.dev0", files, root); err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(doc); err != nil {
			t.Errorf("%d inputs: %v", len(files), err)
		}
	}
}
