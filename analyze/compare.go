package analyze

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
)

// Comparison holds what changed between two analysed runs of the same job:
// a base (the reference) and a new run.
type Comparison struct {
	Base, New Summary
	// Rows are the compared figures, largest change first (see Row.Weight).
	Rows []Row
	// Synthetic is the synthetic-data test, set when the base ran without
	// an input pipeline (or CompareOptions.SyntheticBase forced it).
	Synthetic *Synthetic
	// Limit and Regressions are set by Check: the regression limit held
	// against the runs and the figures that grew past it.
	Limit       float64
	Regressions []Regression
}

// Summary is one run's figures, per step where steps are known.
type Summary struct {
	Path       string
	Format     string
	Verdict    Verdict
	Confidence Confidence
	// Steps is the number of steady steps the figures are averaged over.
	Steps int
	// PerWindow is set when the run has no steps: the "per step" figures
	// are then over the whole window, taken as one step.
	PerWindow bool
	// StepTime is the mean time from one steady step to the next (ns;
	// see stepTime); the window's length when there are no steps.
	StepTime int64
	// DeviceBusy, Input and Sync are per step (ns): device busy time
	// averaged over devices (Utilization * StepTime), input-pipeline time
	// and time in blocking calls on the launching thread(s).
	DeviceBusy int64
	Input      int64
	Sync       int64
	// Utilization is the device busy share of the window, averaged over
	// devices.
	Utilization float64
	// IdleShare is the attributed idle (gaps of at least MinGap) as a
	// share of the window.
	IdleShare float64
	// IdlePerStep is the window's idle by cause divided by Steps.
	IdlePerStep Breakdown
	// IdleShares is the window's idle by cause as shares of the window,
	// in Cause order, then below-min-gap idle last.
	IdleShares [NumCauses + 1]float64
}

// Unit says how a Row's values read.
type Unit string

// Row units.
const (
	UnitTime  Unit = "ns"    // nanoseconds per step
	UnitShare Unit = "share" // a fraction of the window's wall time
)

// Row is one figure of both runs side by side.
type Row struct {
	Metric    string
	Unit      Unit
	Base, New float64
	// Diff is New - Base.
	Diff float64
	// Ratio is New / Base; NaN when Base is 0.
	Ratio float64
	// Weight orders the rows: the change as a fraction of the base's
	// wall time, so that time and share rows compare (|Diff| / base step
	// time for a time row, |Diff| for a share row).
	Weight float64
}

// Synthetic is the synthetic-data test: a run fed synthetic data (no input
// pipeline) gives the step time the real run should reach. If the real
// run's input fits inside the compute and its step is still slower, the
// input pipeline is not the bottleneck, and a forced synchronization is the
// likely cause.
type Synthetic struct {
	// Forced is set when the caller declared the base synthetic rather
	// than it being detected.
	Forced bool
	// Target is the base step time; BaseCompute the base device busy
	// time per step; NewStep and NewInput the new run's step time and
	// input time per step (ns).
	Target      int64
	BaseCompute int64
	NewStep     int64
	NewInput    int64
	// NewSync is the new run's time in blocking calls per step, and
	// NewAfterSync its device idle per step right after they return.
	NewSync      int64
	NewAfterSync int64
	// InputFits is NewInput < BaseCompute.
	InputFits bool
	// Slower is set when NewStep exceeds Target by more than the
	// tolerance (CompareOptions.Tolerance).
	Slower bool
	// Syncs are the blocking calls found in the new run's gaps, most
	// time first.
	Syncs []SyncSite
	// Conclusion says in a sentence or two what the test shows.
	Conclusion string
}

// SyncSite is one blocking call the device waited on in a run's gaps.
type SyncSite struct {
	// Name is the blocking call: the innermost host event of in-sync
	// segments, or the call after-sync segments follow.
	Name string
	// Stack is the longest segment's stack, outermost first, with step
	// numbers replaced by N so that steps group together (for a call
	// known only from after-sync segments, the call alone).
	Stack []string
	// Time is the gap time spent inside the call or right after it
	// returned (ns); Gaps counts the gaps.
	Time int64
	Gaps int
}

// CompareOptions tune Compare.
type CompareOptions struct {
	// SyntheticBase reads the base as a synthetic-data run even when it
	// shows input-pipeline time.
	SyntheticBase bool
	// Tolerance is how much slower than the synthetic target a step may
	// be and still count as at the target (a fraction; default 5%).
	Tolerance float64
}

// syntheticInputShare is the input time per step, as a share of the step,
// below which a base counts as fed with synthetic data: such a run has no
// input events at all, so anything more than a trace of them (a pattern
// matching one stray event) means a real pipeline.
const syntheticInputShare = 0.005

// Compare compares two runs with the default options.
func Compare(base, next *Result) *Comparison {
	return CompareWith(base, next, CompareOptions{})
}

// CompareWith compares two runs.
func CompareWith(base, next *Result, opt CompareOptions) *Comparison {
	if opt.Tolerance <= 0 {
		opt.Tolerance = 0.05
	}
	c := &Comparison{Base: Summarize(base), New: Summarize(next)}
	c.Rows = compareRows(&c.Base, &c.New)
	if opt.SyntheticBase || c.Base.synthetic() {
		c.Synthetic = syntheticTest(&c.Base, &c.New, next, opt)
	}
	return c
}

// Summarize computes a run's per-step figures.
func Summarize(r *Result) Summary {
	s := Summary{
		Path:       r.Source.Path,
		Format:     r.Source.Format,
		Verdict:    r.Verdict,
		Confidence: r.Confidence,
		Steps:      len(r.Steps),
	}
	win := r.Window.Dur()
	if s.Steps == 0 {
		s.Steps = r.Window.Steps
	}
	if s.Steps == 0 {
		s.Steps, s.PerWindow = 1, true
	}
	n := int64(s.Steps)
	var busy int64
	for i := range r.Devices {
		busy += r.Devices[i].WindowBusy
	}
	if len(r.Devices) > 0 {
		busy /= int64(len(r.Devices))
	}
	if win > 0 {
		s.Utilization = float64(busy) / float64(win)
		s.IdleShare = float64(r.Idle.Attributed()) / float64(win)
		for c := range NumCauses {
			s.IdleShares[c] = float64(r.Idle.Of(c)) / float64(win)
		}
		s.IdleShares[NumCauses] = float64(r.Idle.BelowMinGap) / float64(win)
	}
	for c := range NumCauses {
		s.IdlePerStep.Add(c, r.Idle.Of(c)/n)
	}
	s.IdlePerStep.BelowMinGap = r.Idle.BelowMinGap / n
	if len(r.Steps) == 0 {
		// Without step rows the window is all there is; input and sync
		// are known only where they left the device idle.
		s.StepTime = win / n
		s.Input, s.Sync = r.Idle.Of(Input)/n, r.Idle.Sync()/n
	} else {
		for i := range r.Steps {
			s.Input += r.Steps[i].Input
			s.Sync += r.Steps[i].Sync
		}
		s.StepTime = stepTime(r.Steps)
		s.Input /= n
		s.Sync /= n
	}
	// Busy time per step at the run's pace. Summing the steps' own busy
	// time would count twice the work of a step that runs on under the
	// next one.
	s.DeviceBusy = int64(math.Round(s.Utilization * float64(s.StepTime)))
	return s
}

// stepTime is the pace the run trains at: the mean time from one step to
// the next, measured both between the steps' starts and between their ends
// (the end of the device work each step launched), whichever is longer.
// Neither a step's length (in a pipelined run a step overlaps the next)
// nor its starts alone (a host that runs ahead of the device starts steps
// faster than they finish) give it. A lone step's length is all there is.
func stepTime(steps []Step) int64 {
	n := len(steps)
	if n == 1 {
		return steps[0].Dur
	}
	first, last := &steps[0], &steps[n-1]
	starts := last.Start - first.Start
	ends := last.Start + last.Dur - first.Start - first.Dur
	return max(starts, ends) / int64(n-1)
}

func (s *Summary) synthetic() bool {
	return s.Verdict != NoDevice && s.StepTime > 0 &&
		float64(s.Input) <= syntheticInputShare*float64(s.StepTime) &&
		s.IdleShares[Input] <= syntheticInputShare
}

func compareRows(b, n *Summary) []Row {
	scale := float64(b.StepTime)
	if scale <= 0 {
		scale = float64(max(n.StepTime, 1))
	}
	var rows []Row
	addTime := func(metric string, bv, nv int64) {
		rows = append(rows, newRow(metric, UnitTime, float64(bv), float64(nv), scale))
	}
	addShare := func(metric string, bv, nv float64) {
		rows = append(rows, newRow(metric, UnitShare, bv, nv, 1))
	}
	addTime("step time", b.StepTime, n.StepTime)
	addTime("device busy per step", b.DeviceBusy, n.DeviceBusy)
	addShare("utilization", b.Utilization, n.Utilization)
	addShare("idle share", b.IdleShare, n.IdleShare)
	addTime("idle per step", b.IdlePerStep.Attributed(), n.IdlePerStep.Attributed())
	addTime("input per step", b.Input, n.Input)
	addTime("sync per step", b.Sync, n.Sync)
	for c := range NumCauses {
		addShare("idle "+c.String()+" share", b.IdleShares[c], n.IdleShares[c])
		addTime("idle "+c.String()+" per step", b.IdlePerStep.Of(c), n.IdlePerStep.Of(c))
	}
	addShare("idle below-min-gap share", b.IdleShares[NumCauses], n.IdleShares[NumCauses])
	addTime("idle below-min-gap per step", b.IdlePerStep.BelowMinGap, n.IdlePerStep.BelowMinGap)
	slices.SortStableFunc(rows, func(x, y Row) int { return cmp.Compare(y.Weight, x.Weight) })
	return rows
}

func newRow(metric string, u Unit, b, n, scale float64) Row {
	r := Row{Metric: metric, Unit: u, Base: b, New: n, Diff: n - b, Ratio: math.NaN()}
	if b != 0 {
		r.Ratio = n / b
	}
	r.Weight = math.Abs(r.Diff) / scale
	return r
}

// Row returns the row for metric, or nil.
func (c *Comparison) Row(metric string) *Row {
	for i := range c.Rows {
		if c.Rows[i].Metric == metric {
			return &c.Rows[i]
		}
	}
	return nil
}

// Regression is a figure that got worse past a limit.
type Regression struct {
	Metric string
	// Base and New are the figure in both runs; Change is the growth,
	// relative for step time, in share points for idle share.
	Base, New, Change, Limit float64
	Message                  string
}

// Check records limit and the regressions past it in c, and returns them.
func (c *Comparison) Check(limit float64) []Regression {
	c.Limit, c.Regressions = limit, c.FindRegressions(limit)
	return c.Regressions
}

// FindRegressions returns the figures that grew past limit (a fraction): the
// step time by more than limit relative to the base, the attributed idle
// share by more than limit in share points (a relative limit would flag
// 1% growing to 1.1%).
func (c *Comparison) FindRegressions(limit float64) []Regression {
	var out []Regression
	if b, n := c.Base.StepTime, c.New.StepTime; b > 0 && n > 0 {
		if ch := float64(n)/float64(b) - 1; ch > limit {
			out = append(out, Regression{
				Metric: "step time", Base: float64(b), New: float64(n), Change: ch, Limit: limit,
				Message: fmt.Sprintf("step time grew %s (%s -> %s), limit %s",
					pct(ch), formatDur(b), formatDur(n), pct(limit)),
			})
		}
	}
	if b, n := c.Base.IdleShare, c.New.IdleShare; n-b > limit {
		out = append(out, Regression{
			Metric: "idle share", Base: b, New: n, Change: n - b, Limit: limit,
			Message: fmt.Sprintf("attributed idle share grew %.1f points (%s -> %s), limit %.1f points",
				(n-b)*100, pct(b), pct(n), limit*100),
		})
	}
	return out
}

func syntheticTest(b, n *Summary, next *Result, opt CompareOptions) *Synthetic {
	s := &Synthetic{
		Forced:       opt.SyntheticBase,
		Target:       b.StepTime,
		BaseCompute:  b.DeviceBusy,
		NewStep:      n.StepTime,
		NewInput:     n.Input,
		NewSync:      n.Sync,
		NewAfterSync: n.IdlePerStep.Of(AfterSync),
		Syncs:        SyncSites(next),
	}
	s.InputFits = s.NewInput < s.BaseCompute
	s.Slower = float64(s.NewStep) > float64(s.Target)*(1+opt.Tolerance)
	s.Conclusion = s.conclude()
	return s
}

func (s *Synthetic) conclude() string {
	in := fmt.Sprintf("the new run's input (%s per step) %s the synthetic run's compute (%s per step)",
		formatDur(s.NewInput), map[bool]string{true: "fits inside", false: "is longer than"}[s.InputFits],
		formatDur(s.BaseCompute))
	switch {
	case !s.InputFits:
		return in + ": the input pipeline is the bottleneck; add loader workers, prefetch, or preprocess offline."
	case !s.Slower:
		return in + fmt.Sprintf(" and its step (%s) reaches the target (%s): the input pipeline keeps up.",
			formatDur(s.NewStep), formatDur(s.Target))
	}
	msg := in + fmt.Sprintf(", yet its step (%s) is %s slower than the target (%s): the input pipeline is not the bottleneck, and a forced synchronization is the likely cause",
		formatDur(s.NewStep), pct(float64(s.NewStep)/float64(max(s.Target, 1))-1), formatDur(s.Target))
	if len(s.Syncs) == 0 {
		if s.NewSync > 0 || s.NewAfterSync > 0 {
			return msg + fmt.Sprintf(": the new run spends %s per step in blocking calls, and its device idles %s per step right after they return.",
				formatDur(s.NewSync), formatDur(s.NewAfterSync))
		}
		return msg + "; no blocking call was found in the new run, so look at the host work in its gaps."
	}
	names := make([]string, 0, 3)
	for _, site := range s.Syncs[:min(3, len(s.Syncs))] {
		gaps := "gaps"
		if site.Gaps == 1 {
			gaps = "gap"
		}
		names = append(names, fmt.Sprintf("%s (%s in %d %s)", site.Name, formatDur(site.Time), site.Gaps, gaps))
	}
	return msg + ": " + strings.Join(names, ", ") + "."
}

var stepNumber = regexp.MustCompile(`#\d+`)

// SyncSites names the blocking calls r's devices waited on: the innermost
// host event of the gaps' in-sync segments, and the call an after-sync
// segment follows where the analysis named it; most idle time first.
func SyncSites(r *Result) []SyncSite {
	index := map[string]int{}
	var sites []SyncSite
	var longest []int64 // per site, the longest in-sync segment seen
	for gi := range r.Gaps {
		seen := map[int]bool{}
		for _, seg := range r.Gaps[gi].Segments {
			name, stack := seg.Sync, []string{seg.Sync}
			switch {
			case seg.Cause == InSync && len(seg.Stack) > 0:
				name, stack = seg.Stack[len(seg.Stack)-1], seg.Stack
			case seg.Cause != AfterSync || seg.Sync == "":
				continue
			}
			i, ok := index[name]
			if !ok {
				i = len(sites)
				index[name] = i
				sites = append(sites, SyncSite{Name: name})
				longest = append(longest, -1)
			}
			sites[i].Time += seg.Dur
			if !seen[i] {
				seen[i] = true
				sites[i].Gaps++
			}
			// The longest in-sync stack shows where the call was
			// made; an after-sync segment knows only the call.
			if seg.Cause == InSync && seg.Dur > longest[i] {
				longest[i] = seg.Dur
				sites[i].Stack = normalizeStack(stack)
			} else if sites[i].Stack == nil {
				sites[i].Stack = stack
			}
		}
	}
	slices.SortStableFunc(sites, func(x, y SyncSite) int { return cmp.Compare(y.Time, x.Time) })
	return sites
}

func normalizeStack(stack []string) []string {
	out := make([]string, len(stack))
	for i, s := range stack {
		out[i] = stepNumber.ReplaceAllString(s, "#N")
	}
	return out
}

// formatDur is formatDuration with a bare "0", as the reports write it.
func formatDur(ns int64) string {
	if ns == 0 {
		return "0"
	}
	return formatDuration(ns)
}
