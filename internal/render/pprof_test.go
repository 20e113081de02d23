package render

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/tracegap/tracegap/internal/analyze"
)

func TestProfile(t *testing.T) {
	res := fixtureResult()
	p, err := Profile(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	if p.DefaultSampleType != "idle" || len(p.SampleType) != 2 || p.SampleType[1].Type != "idle" || p.SampleType[1].Unit != "nanoseconds" ||
		p.SampleType[0].Type != "gaps" || p.SampleType[0].Unit != "count" {
		t.Fatalf("sample types %v %v", p.SampleType[0], p.SampleType[1])
	}
	// One sample per segment here (no two share a stack); idle and gap
	// counts add up to the gaps'.
	var idle, gaps int64
	byCause := map[string]int64{}
	for _, s := range p.Sample {
		idle += s.Value[1]
		gaps += s.Value[0]
		byCause[s.Label["cause"][0]] += s.Value[1]
		if s.Label["device"][0] != "GPU:0" || s.Label["thread"][0] != "thread 7 (python)" {
			t.Errorf("sample labels %v", s.Label)
		}
	}
	if idle != 2_600_000 || gaps != 3 || len(p.Sample) != 4 {
		t.Errorf("%d samples, %d ns idle, %d gaps; want 4, 2600000, 3", len(p.Sample), idle, gaps)
	}
	if byCause["input"] != 1_500_000 || byCause["host"] != 500_000 || byCause["in-sync"] != 500_000 || byCause["untraced"] != 100_000 {
		t.Errorf("idle by cause %v", byCause)
	}
	// Leaf first: the cause, then the stack innermost first.
	want := map[string]string{
		"input":    "[input];enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__;ProfilerStep#N",
		"in-sync":  "[in-sync];cudaStreamSynchronize;aten::item;ProfilerStep#N",
		"untraced": "[untraced]",
	}
	for _, s := range p.Sample {
		var names []string
		for _, l := range s.Location {
			names = append(names, l.Line[0].Function.Name)
		}
		if w, ok := want[s.Label["cause"][0]]; ok && strings.Join(names, ";") != w {
			t.Errorf("stack %v, want %s", names, w)
		}
	}
}

// TestProfileSteps checks that steps are a label, not a frame each: the
// fixture's gaps fall in steps 1 and 2 (Gap.Step 0 and 1), and a gap
// outside any step takes the number its ProfilerStep marker names.
func TestProfileSteps(t *testing.T) {
	res := fixtureResult()
	g := res.Gaps[1]
	g.Step = -1
	res.SetSegments(&g, analyze.NamedSegment{Start: g.Start, Dur: g.Dur, Cause: analyze.Host, Stack: []string{"ProfilerStep#7", "aten::mm"}})
	res.Gaps = append(res.Gaps, g)
	p, err := Profile(res)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, s := range p.Sample {
		root := s.Location[len(s.Location)-1].Line[0].Function.Name
		got[s.Label["cause"][0]+" "+root] = append(got[s.Label["cause"][0]+" "+root], s.Label["step"]...)
	}
	want := map[string][]string{
		"input ProfilerStep#N":   {"1"},
		"host ProfilerStep#N":    {"1", "7"},
		"in-sync ProfilerStep#N": {"2"},
		"untraced [untraced]":    {"2"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("steps by cause and root frame: %v, want %v", got, want)
	}
}

func TestProfileMergesStacks(t *testing.T) {
	res := fixtureResult()
	g := res.Gaps[1]
	g.Start += 3 * ms
	res.Gaps = append(res.Gaps, g) // a second sync gap with the same stack
	p, err := Profile(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Sample {
		if s.Label["cause"][0] == "in-sync" && (s.Value[1] != 1_000_000 || s.Value[0] != 2) {
			t.Errorf("in-sync sample %v, want both gaps merged: [2 1000000]", s.Value)
		}
	}
	empty, err := Profile(&analyze.Result{})
	if err != nil || len(empty.Sample) != 0 {
		t.Errorf("profile of a result without gaps: %v, %v", empty, err)
	}
}

// TestProfileGoToolPprof checks that the pprof tool itself reads the
// profile written as gzipped protobuf.
func TestProfileGoToolPprof(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	p, err := Profile(fixtureResult())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "idle.pb.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if back, err := os.ReadFile(path); err != nil {
		t.Fatal(err)
	} else if _, err := profile.Parse(bytes.NewReader(back)); err != nil {
		t.Fatalf("profile.Parse: %v", err)
	}
	out, err := exec.Command(gobin, "tool", "pprof", "-top", path).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -top: %v\n%s", err, out)
	}
	for _, w := range []string{"Type: idle", "[input]", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "1500us 57.69%"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("pprof -top output lacks %q:\n%s", w, out)
		}
	}
}
