package render

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/internal/untrusted"
	"github.com/tracegap/tracegap/report"
)

// stackedCopyLoop is analyze's scenario n with Python stacks: a 704-byte
// pageable device-to-host copy inside the input, called from input.py:12,
// blamed for 2 ms of idle in each of five kept steps.
func stackedCopyLoop(t *testing.T) *analyze.Result {
	t.Helper()
	l := tracetest.Loop{Steps: 6, Input: 3 * ms, InputName: "## sparse_data_dist ##", PageableCopy: ms, Dispatch: ms, Compute: 10 * ms, Stacks: true}
	res, err := advice.Analyze(tracetest.Build(l.Spec()), analyze.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestJSONInsights decodes a report with call sites, copies and structured
// findings, unknown fields disallowed, and checks the new fields.
func TestJSONInsights(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, stackedCopyLoop(t), JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var r report.Report
	dec := json.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("decoding the report into report.Report: %v", err)
	}
	site := report.CallSiteV1{File: tracetest.CopyFile, Line: tracetest.CopyLine, Function: "fetch_lengths", Call: "cudaMemcpyAsync",
		Via: "torch/_tensor.py:1087 to", Cause: "sync", Count: 5, IdleNs: 10 * ms, Share: 0.1538}
	if !reflect.DeepEqual(r.CallSites, []report.CallSiteV1{site}) || r.StackHint != "" {
		t.Errorf("call sites %+v, hint %q", r.CallSites, r.StackHint)
	}
	wantCopy := report.CopyV1{Direction: "DtoH", Memory: "pageable", Count: 5, Bytes: 5 * 704, DeviceNs: 5 * ms, Blocking: true,
		HostBlockedNs: 45 * ms, IdleNs: 10 * ms, Share: 0.1538,
		Top: &report.CopySizeV1{Bytes: 704, Count: 5, HostBlockedNs: 45 * ms, IdleNs: 10 * ms, Call: "cudaMemcpyAsync", Site: "input.py:12 fetch_lengths"}}
	if len(r.Copies) != 1 || !reflect.DeepEqual(r.Copies[0], wantCopy) {
		t.Errorf("copies %+v", r.Copies)
	}
	var found bool
	for _, f := range r.Findings {
		if f.ID == "blocking-copy" {
			found = true
			if f.IdleNs != 10*ms || !reflect.DeepEqual(f.Sites, []report.CallSiteV1{site}) || !reflect.DeepEqual(f.Settings, []report.SettingV1{{Name: "pin_memory", Value: "True"}}) {
				t.Errorf("blocking-copy %+v", f)
			}
		}
	}
	if !found {
		t.Errorf("no blocking-copy finding in %+v", r.Findings)
	}
}

// TestTimeline: each step's bar is as wide as the others and shows its
// busy time and idle causes in proportion (scenario n: 11 of 13 ms busy,
// 1 ms in-sync, 1 ms after-sync).
func TestTimeline(t *testing.T) {
	lines := timelineLines(stackedCopyLoop(t), 10, untrusted.Terminal, nil)
	if len(lines) != 5 {
		t.Fatalf("%d lines, want 5", len(lines))
	}
	bar := strings.Repeat("#", 33) + "SSS" + "ssss"
	for _, l := range lines {
		if !strings.Contains(l, "|"+bar+"|") {
			t.Errorf("line %q, want bar %q", l, bar)
		}
	}
}
