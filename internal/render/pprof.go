package render

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/tracegap/tracegap/internal/analyze"
)

// Profile builds a pprof profile of device-idle time. Its sample types are
// gaps/count and idle/nanoseconds, idle last: viewers that ignore the
// default sample type (speedscope) show the last. Each sample is the idle
// time spent with one host stack on the waited-for thread, labelled with
// the device, the cause, the thread and the step. A sample's stack is the
// host events enclosing the gap segment, outermost at the root, with the
// cause as the leaf frame, so that a flame graph splits by cause under
// each host call. Step markers are one frame whatever the step
// (ProfilerStep#N) with the step's number as the "step" label, so that
// steps do not split the graph into one root each. A gap counts once, on
// its longest segment.
func Profile(res *analyze.Result) (*profile.Profile, error) {
	if res.Window.Dur() < 0 {
		return nil, fmt.Errorf("report: window ends before it starts (%d..%d ns)", res.Window.Start, res.Window.End)
	}
	b := &profileBuilder{
		res: res,
		at:  map[stackOf]int{},
		p: &profile.Profile{
			SampleType: []*profile.ValueType{
				{Type: "gaps", Unit: "count"},
				{Type: "idle", Unit: "nanoseconds"},
			},
			DefaultSampleType: "idle",
			PeriodType:        &profile.ValueType{Type: "idle", Unit: "nanoseconds"},
			Period:            1,
			DurationNanos:     res.Window.Dur(),
			Comments: []string{
				"tracegap: device idle by host stack on the waited-for thread",
				"source: " + res.Source.Path,
				"verdict: " + string(res.Verdict) + " (" + string(res.Confidence) + " confidence)",
			},
		},
		steps:   res.Steps,
		funcs:   map[string]*profile.Function{},
		locs:    map[string]*profile.Location{},
		samples: map[string]*profile.Sample{},
	}
	for i := range res.Gaps {
		b.gap(&res.Gaps[i])
	}
	if err := b.p.CheckValid(); err != nil {
		return nil, fmt.Errorf("report: building the idle profile: %w", err)
	}
	return b.p, nil
}

type profileBuilder struct {
	res     *analyze.Result
	p       *profile.Profile
	steps   []analyze.Step
	funcs   map[string]*profile.Function
	locs    map[string]*profile.Location
	samples map[string]*profile.Sample
	// at and totals sum one gap's segments (see gap).
	at     map[stackOf]int
	totals []stackTotal
}

// gap adds the idle of g, summed by cause and stack: a gap of a long trace
// has thousands of segments and few stacks.
func (b *profileBuilder) gap(g *analyze.Gap) {
	b.totals = b.totals[:0]
	clear(b.at)
	longest, li := analyze.Segment{Dur: -1}, -1
	for s := range b.res.Segments(g) {
		k := stackOf{s.Cause, s.Stack}
		i, ok := b.at[k]
		if !ok {
			i = len(b.totals)
			b.at[k] = i
			b.totals = append(b.totals, stackTotal{of: k})
		}
		b.totals[i].ns += s.Dur
		if s.Dur > longest.Dur {
			longest, li = s, i
		}
	}
	if li < 0 {
		// A gap the analysis did not split: all of it under its cause.
		b.add(g, g.Cause, nil, g.Dur, 1)
		return
	}
	b.totals[li].gaps = 1
	for _, t := range b.totals {
		b.add(g, t.of.cause, b.res.Stack(t.of.stack), t.ns, t.gaps)
	}
}

// stackTotal is the idle of a gap under one cause and stack, and whether
// the gap counts there (its longest segment's).
type stackTotal struct {
	of       stackOf
	ns, gaps int64
}

// add adds idle ns and n gaps to the sample for (device, cause, thread,
// step, stack), creating it the first time.
func (b *profileBuilder) add(g *analyze.Gap, c analyze.Cause, stack []string, ns, n int64) {
	stack, step := b.stepless(g, stack)
	key := strings.Join(append([]string{g.Device, c.String(), g.Thread, step}, stack...), "\x00")
	if s := b.samples[key]; s != nil {
		s.Value[0] += n
		s.Value[1] += ns
		return
	}
	// pprof wants the leaf first: the cause, then the stack innermost
	// first.
	locs := []*profile.Location{b.location("[" + c.String() + "]")}
	for _, name := range slices.Backward(stack) {
		locs = append(locs, b.location(name))
	}
	s := &profile.Sample{
		Location: locs,
		Value:    []int64{n, ns},
		Label: map[string][]string{
			"device": {g.Device},
			"cause":  {c.String()},
			"thread": {g.Thread},
		},
	}
	if step != "" {
		s.Label["step"] = []string{step}
	}
	b.samples[key] = s
	b.p.Sample = append(b.p.Sample, s)
}

// stepless returns stack with its step markers named without their
// number, and the number of the step: the gap's, else the one a marker
// names.
func (b *profileBuilder) stepless(g *analyze.Gap, stack []string) ([]string, string) {
	step := ""
	if g.Step >= 0 && g.Step < len(b.steps) {
		step = strconv.FormatInt(b.steps[g.Step].Num, 10)
	}
	var out []string
	for i, name := range stack {
		m := stepMarker.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		if out == nil {
			out = slices.Clone(stack)
		}
		out[i] = m[1] + "#N"
		if step == "" {
			step = m[2]
		}
	}
	if out == nil {
		out = stack
	}
	return out, step
}

// stepMarker matches the name of a numbered step marker, as PyTorch's
// profiler writes them.
var stepMarker = regexp.MustCompile(`^(ProfilerStep)#(\d+)$`)

func (b *profileBuilder) location(name string) *profile.Location {
	if l := b.locs[name]; l != nil {
		return l
	}
	f := b.funcs[name]
	if f == nil {
		f = &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: name, SystemName: name}
		b.funcs[name] = f
		b.p.Function = append(b.p.Function, f)
	}
	l := &profile.Location{ID: uint64(len(b.p.Location) + 1), Line: []profile.Line{{Function: f}}}
	b.locs[name] = l
	b.p.Location = append(b.p.Location, l)
	return l
}
