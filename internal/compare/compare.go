package compare

import (
	"cmp"
	"math"
	"slices"

	"github.com/tracegap/tracegap/internal/analyze"
)

// Comparison holds what changed between two runs of the same job: a base
// (the reference) and a new run.
type Comparison struct {
	Base, New Summary
	// Rows are the compared figures, largest change first (see
	// Row.Weight).
	Rows []Row
	// Synthetic is the synthetic-data test, set when the base ran without
	// an input pipeline (or Options.SyntheticBase forced it).
	Synthetic *Synthetic
	// Limit and Regressions are set by Check: the regression limit held
	// against the runs and the figures that grew past it.
	Limit       float64
	Regressions []Regression
}

// Unit says how a Row's values read.
type Unit string

// Row units.
const (
	UnitTime  Unit = "ns"    // nanoseconds per step
	UnitShare Unit = "share" // a fraction of the window's wall time
)

// The metrics that Check holds against a limit.
const (
	MetricStepTime  = "step time"
	MetricIdleShare = "idle share"
)

// MetricAttributedIdle is the idle per step in gaps of at least the
// minimum gap, the idle share's time per step.
const MetricAttributedIdle = "attributed idle per step"

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

// Options tune Compare. The zero value gives the defaults.
type Options struct {
	// SyntheticBase reads the base as a synthetic-data run even when it
	// shows input-pipeline time.
	SyntheticBase bool
	// Tolerance is how much slower than the synthetic target a step may
	// be and still count as at the target (a fraction; default 5%).
	Tolerance float64
}

// Compare compares two runs.
func Compare(base, next Summary, opt Options) *Comparison {
	if opt.Tolerance <= 0 {
		opt.Tolerance = 0.05
	}
	c := &Comparison{Base: base, New: next}
	c.Rows = rows(&c.Base, &c.New)
	if opt.SyntheticBase || c.Base.synthetic() {
		c.Synthetic = syntheticTest(&c.Base, &c.New, opt)
	}
	return c
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

// causes are the idle causes compared, in order: analyze's, then
// BelowMinGap.
func causes() []string {
	names := make([]string, 0, analyze.NumCauses+1)
	for c := range analyze.NumCauses {
		names = append(names, c.String())
	}
	return append(names, BelowMinGap)
}

func rows(b, n *Summary) []Row {
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
	addTime(MetricStepTime, b.StepTime, n.StepTime)
	addTime("device busy per step", b.DeviceBusy, n.DeviceBusy)
	addShare("utilization", b.Utilization, n.Utilization)
	addShare(MetricIdleShare, b.IdleShare, n.IdleShare)
	// Attributed, as the idle share is: analyze's Steps table's idle
	// column also holds the idle below the minimum gap.
	addTime(MetricAttributedIdle, b.attributedPerStep(), n.attributedPerStep())
	addTime("input per step", b.Input, n.Input)
	addTime("sync per step", b.Sync, n.Sync)
	for _, c := range causes() {
		bi, ni := b.IdleOf(c), n.IdleOf(c)
		addShare("idle "+c+" share", bi.Share, ni.Share)
		addTime("idle "+c+" per step", bi.PerStep, ni.PerStep)
	}
	slices.SortStableFunc(rows, func(x, y Row) int { return cmp.Compare(y.Weight, x.Weight) })
	return rows
}

// attributedPerStep is the idle per step in gaps of at least the minimum
// gap: every cause's but BelowMinGap.
func (s *Summary) attributedPerStep() int64 {
	var sum int64
	for _, ci := range s.Idle {
		if ci.Cause != BelowMinGap {
			sum += ci.PerStep
		}
	}
	return sum
}

func newRow(metric string, u Unit, b, n, scale float64) Row {
	r := Row{Metric: metric, Unit: u, Base: b, New: n, Diff: n - b, Ratio: math.NaN()}
	if b != 0 {
		r.Ratio = n / b
	}
	r.Weight = math.Abs(r.Diff) / scale
	return r
}

// Regression is a figure that got worse past a limit.
type Regression struct {
	// Metric is MetricStepTime or MetricIdleShare.
	Metric string
	// Base and New are the figure in both runs; Change is the growth,
	// relative for the step time, in share points for the idle share.
	Base, New, Change, Limit float64
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
			out = append(out, Regression{Metric: MetricStepTime, Base: float64(b), New: float64(n), Change: ch, Limit: limit})
		}
	}
	if b, n := c.Base.IdleShare, c.New.IdleShare; n-b > limit {
		out = append(out, Regression{Metric: MetricIdleShare, Base: b, New: n, Change: n - b, Limit: limit})
	}
	return out
}
