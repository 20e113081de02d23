package render_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

// TestAnnotateFlows annotates a loop that loads its batches inline, as
// Chrome JSON copied through, and a JAX loop that blocks every step, as
// its XPlane written from the model: each gap spent inside a host event
// has one flow, from the gap's slice to that event on its thread, the
// innermost event enclosing the flow's end being the one the gap's
// longest stretch was inside (the loader's for every gap of the first).
func TestAnnotateFlows(t *testing.T) {
	for _, tc := range []struct {
		file string
		spec *tracetest.Spec
		want string
	}{
		{"input.pt.trace.json", tracetest.Loop{Steps: 4, Input: 60 * ms, Dispatch: ms / 10, Kernels: 30, Compute: 3 * ms / 2}.Spec(), tracetest.SingleProcessLoader},
		{"block.xplane.pb", tracetest.JAXLoop{Steps: 4, Dispatch: ms, Kernels: 4, Compute: 2 * ms, Block: true, Host: ms}.Spec(), ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := writeSpec(t, tc.file, tc.spec)
			tr, err := trace.Open(path, trace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := advice.Analyze(tr, analyze.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			var src io.Reader
			if tr.Format == "chrome" {
				f, err := os.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				src = f
			}
			var out bytes.Buffer
			if err := render.Annotate(&out, tr, src, res); err != nil {
				t.Fatal(err)
			}
			checkFlows(t, out.Bytes(), res, tc.want)
		})
	}
}

// checkFlows checks the flows of an annotated trace against res: one per
// gap whose waited-for thread was inside a host event, starting at the
// gap, ending inside the event named by the gap's longest such stretch
// (want, when set, names it for every gap).
func checkFlows(t *testing.T, annotated []byte, res *analyze.Result, want string) {
	t.Helper()
	var doc struct{ TraceEvents []flowEvent }
	if err := json.Unmarshal(annotated, &doc); err != nil {
		t.Fatal(err)
	}
	slices := map[string][]flowEvent{} // host slices by "pid/tid"
	starts, ends := map[int]flowEvent{}, map[int]flowEvent{}
	gapAt := map[string]bool{} // "tid@ts" of each gap slice
	for _, e := range doc.TraceEvents {
		switch {
		case e.Ph == "X" && e.Cat == "tracegap.gap":
			gapAt[fmt.Sprint(e.Tid)+"@"+string(e.Ts)] = true
		case e.Ph == "X" && !strings.HasPrefix(e.Cat, "tracegap."):
			slices[fmt.Sprint(e.Pid)+"/"+fmt.Sprint(e.Tid)] = append(slices[fmt.Sprint(e.Pid)+"/"+fmt.Sprint(e.Tid)], e)
		case e.Ph == "s" && e.Cat == "tracegap.flow":
			starts[e.ID] = e
		case e.Ph == "f" && e.Cat == "tracegap.flow" && e.Bp == "e":
			ends[e.ID] = e
		}
	}
	n := 0
	for i := range res.Gaps {
		g := &res.Gaps[i]
		var longest analyze.Segment
		for s := range res.Segments(g) {
			if s.Stack != 0 && s.Dur > longest.Dur {
				longest = s
			}
		}
		s, e := starts[i+1], ends[i+1]
		if longest.Dur == 0 {
			if s.Ph != "" || e.Ph != "" {
				t.Errorf("gap %d: a flow, but its thread was inside nothing", i)
			}
			continue
		}
		n++
		if !gapAt[fmt.Sprint(s.Tid)+"@"+string(s.Ts)] {
			t.Errorf("gap %d: flow starts at tid %v, %s us: not at the gap's slice", i, s.Tid, s.Ts)
		}
		stack := res.Stack(longest.Stack)
		name := innermost(slices[fmt.Sprint(e.Pid)+"/"+fmt.Sprint(e.Tid)], e.Ts)
		if name != stack[len(stack)-1] || want != "" && name != want {
			t.Errorf("gap %d: flow ends inside %q on %v/%v, want %q", i, name, e.Pid, e.Tid, stack[len(stack)-1])
		}
	}
	if n == 0 || len(starts) != n || len(ends) != n {
		t.Errorf("%d flow starts and %d ends for %d gaps inside a host event; want one each, and some", len(starts), len(ends), n)
	}
}

// flowEvent is what checkFlows reads of a trace event.
type flowEvent struct {
	Ph, Cat, Name, Bp string
	Pid, Tid          any
	Ts, Dur           json.Number
	ID                int
}

// innermost names the shortest of the slices enclosing ts.
func innermost(slices []flowEvent, ts json.Number) string {
	at, _ := ts.Float64()
	name, best := "", math.Inf(1)
	for _, s := range slices {
		start, _ := s.Ts.Float64()
		dur, _ := s.Dur.Float64()
		if start <= at && at < start+dur && dur < best {
			name, best = s.Name, dur
		}
	}
	return name
}
