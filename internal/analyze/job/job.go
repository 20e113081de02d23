// Package job analyses a distributed job: one trace per rank, aligned on a
// common clock, with every collective split into the time its ranks spent
// waiting for the slowest one and the transfer, and the waits counted as
// idle caused by what held the slowest rank back. It builds on the
// analysis of each rank's trace (analyze.Analysis) and reaches one verdict
// for the job by analyze's rule.
package job

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/trace"
)

// Result is what the analysis found in a distributed job: one trace per
// rank, aligned on a common clock, with the time each rank spent waiting in
// collectives for the slowest rank counted as idle caused by that rank.
type Result struct {
	// Overall is the job seen as one run, on the job's timeline (ns from
	// the earliest rank's trace start, clocks aligned): the job's verdict,
	// confidence, reasons and findings; every rank's devices (ids such as
	// "rank 3 GPU:0") and gaps; idle averaged over the ranks, collective
	// waits included; the steps common to all ranks. Reports render it as
	// they render a single run.
	Overall analyze.Result
	// WorldSize is the job's size as the traces give it (the number of
	// traces when they do not say).
	WorldSize int
	// Ranks are sorted by rank number.
	Ranks []Rank
	// Steps are the steady-state steps common to all ranks, in order.
	Steps []Step
	// Wait is the window time all ranks spent waiting in collectives,
	// summed over the ranks, by what held the slowest rank back.
	Wait WaitSplit
	// Rest is the part of Overall's window that is neither device busy
	// (Overall's utilization) nor idle by cause (Overall.Idle), averaged
	// over the ranks with device work as they are: with it the window
	// adds up.
	Rest Rest
	// Transfer is the window time all ranks' collectives spent not
	// waiting, summed over the ranks.
	Transfer int64
	// Collectives counts the collectives matched across ranks in the
	// window's steps.
	Collectives int
	// Clock says how the ranks' clocks were aligned: package
	// advice/jobadvice writes it from Facts.Clock.
	Clock string
	// Facts are what the job's findings are written from beyond these
	// figures; package advice/jobadvice writes the findings
	// (Overall.Findings).
	Facts Facts
}

// Facts are the plain data a job's findings, reasons and clock sentence
// need beyond its figures.
type Facts struct {
	// Active indexes Result.Ranks: the ranks with device work.
	Active []int
	// ClockFixed is set when a rank's clock needed a correction; Clock
	// is how the clocks were aligned.
	ClockFixed bool
	Clock      ClockFacts
	// Notes are what the job analysis could not see or match, in the
	// order found.
	Notes []Note
	// Decision is what decided Overall's verdict.
	Decision analyze.Decision
}

// ClockFacts say how the ranks' clocks were aligned: on Matched
// collectives, the largest correction Worst (ns) of rank WorstRank; the
// ranks Unmatched share no matched collective with rank Ref.
type ClockFacts struct {
	Matched   int
	Worst     int64
	WorstRank int64
	Unmatched []string
	Ref       int
}

// Note is something the job analysis could not see or match, with its
// figures (N, M: see the kinds).
type Note struct {
	Kind NoteKind
	N, M int
}

// NoteKind is a kind of Note.
type NoteKind int

const (
	// NoteInputOrder: not every trace names its rank; the input order
	// numbers them.
	NoteInputOrder NoteKind = iota
	// NoteMissingRanks: N of the job's M ranks were given.
	NoteMissingRanks
	// NoteFewActive: fewer than 2 ranks have device work.
	NoteFewActive
	// NoteNoStepMarkers: not every rank has step markers.
	NoteNoStepMarkers
	// NoteNoCommonStep: the ranks share no step number.
	NoteNoCommonStep
	// NoteMismatch: in N steps the ranks ran different numbers of
	// collectives.
	NoteMismatch
)

// note adds a Note to the job's facts.
func (j *analysis) note(k NoteKind, n, m int) {
	j.res.Facts.Notes = append(j.res.Facts.Notes, Note{k, n, m})
}

// Rank is one rank's figures within the job. Times are ns on the rank's
// own timeline (as in analyze.Result); add Offset for the job's.
type Rank struct {
	// Rank is the rank's number in the job.
	Rank int
	// From is what the rank was read from: its summary's file, or its
	// trace's path (Result.Source.Path).
	From string
	// Result is the analysis of the rank's trace alone.
	Result *analyze.Result
	// Offset puts the rank's times on the job's timeline.
	Offset int64
	// StepTime is the rank's pace: the mean time from one step to the
	// next (a lone step's length), as analyze.Result.StepTime.
	StepTime int64
	// Busy is the window's device busy time with collective waits taken
	// out, averaged over the rank's devices.
	Busy int64
	// Idle is the window's idle time by cause: the rank's own idle plus
	// its collective waits, each by what the slowest rank was doing
	// meanwhile (Wait.Idle); averaged over devices.
	Idle analyze.Breakdown
	// Wait is the window time spent waiting in collectives, averaged over
	// devices; Transfer the rest of the collectives' time.
	Wait     WaitSplit
	Transfer int64
	// Input and Sync are the window's time in the input pipeline and in
	// blocking calls on the launching threads.
	Input, Sync int64
	// Verdict is the rank's verdict with its collective waits counted as
	// idle; Result.Verdict is the verdict of the rank alone.
	Verdict analyze.Verdict
	// Straggles counts the window's steps in which this rank held the
	// others back.
	Straggles int
	// Waits are the stretches its devices waited in collectives, in time
	// order, for timelines.
	Waits []analyze.Interval
}

// WaitSplit splits time spent waiting in collectives by what held the
// slowest rank (the straggler) back meanwhile.
type WaitSplit struct {
	// Idle is the part explained by the straggler's device sitting idle,
	// by the cause of that idle (BelowMinGap is unused).
	Idle analyze.Breakdown
	// Compute is the part explained by the straggler's device having more
	// work than the waiting rank's: load imbalance.
	Compute int64
	// Late is the part the straggler carried in: it finished its previous
	// collective, or started the step, later than the waiting rank, so the
	// cause lies before (an earlier step, or before the trace began).
	Late int64
}

// MostlyLate reports whether most of the wait was carried in from before
// the stretch it was measured over (Late outweighs Compute and Idle).
func (w *WaitSplit) MostlyLate() bool {
	return w.Late > 0 && w.Late >= w.Compute && w.Late >= w.Idle.Attributed()
}

// Total returns the whole wait.
func (w *WaitSplit) Total() int64 { return w.Idle.Attributed() + w.Compute + w.Late }

// Add adds o to w.
func (w *WaitSplit) Add(o WaitSplit) {
	for c := analyze.InSync; c < analyze.NumCauses; c++ {
		w.Idle.Add(c, o.Idle.Of(c))
	}
	w.Compute += o.Compute
	w.Late += o.Late
}

// Rest is the time of a job's stretch (its window, or a step) that is
// neither a rank's device busy time nor idle by cause, averaged over the
// ranks: the collective waits no idle cause explains, and the stretch
// outside the rank's own.
type Rest struct {
	// Compute and Late are collective waits (WaitSplit.Compute and
	// WaitSplit.Late): counted as idle, but with no idle cause.
	Compute, Late int64
	// Outside is the stretch's time outside the rank's own: the job's
	// window starts at the earliest rank's and ends at the latest's, a
	// job step at the earliest rank's start and the latest rank's end.
	Outside int64
}

// Total returns the whole rest.
func (r Rest) Total() int64 { return r.Compute + r.Late + r.Outside }

// WaitPart is one part of a wait, named as Doing names it.
type WaitPart struct {
	Name string
	Ns   int64
}

// Parts splits the wait into its parts, in a fixed order: "sync" (in-sync
// and after-sync together), every other cause by its name ("input",
// "runtime", "host", "untraced"), "compute" and "late".
func (w *WaitSplit) Parts() []WaitPart {
	parts := []WaitPart{{"sync", w.Idle.Sync()}}
	for _, c := range analyze.Causes() {
		if c != analyze.InSync && c != analyze.AfterSync {
			parts = append(parts, WaitPart{c.String(), w.Idle.Of(c)})
		}
	}
	return append(parts, WaitPart{"compute", w.Compute}, WaitPart{"late", w.Late})
}

// Doing names the largest part of the wait (see Parts): what the straggler
// was mostly doing while the others waited; empty for no wait. Ties go to
// the earlier part.
func (w *WaitSplit) Doing() string {
	best := WaitPart{}
	for _, p := range w.Parts() {
		if p.Ns > best.Ns {
			best = p
		}
	}
	return best.Name
}

// Step is one step of the job across its ranks.
type Step struct {
	// Num and Name are the step's number and marker name, as the ranks
	// mark it.
	Num  int64
	Name string
	// Start and End bound the step on the job's timeline: the earliest
	// rank's start and the latest rank's end.
	Start, End int64
	// Dur holds each rank's step length, indexed as Result.Ranks.
	Dur []int64
	// Straggler indexes Result.Ranks: the rank whose collectives
	// started last and made the others wait longest; -1 when the step
	// has no collective wait.
	Straggler int
	// Doing is what held the straggler back (see WaitSplit.Doing).
	Doing string
	// Wait is the time the other ranks waited for the straggler in this
	// step, summed over them.
	Wait int64
	// Rest is the part of the step that is neither busy nor idle by
	// cause in Overall's step (see Result.Rest).
	Rest Rest
	// Collectives are the step's collectives, in the order every rank
	// ran them.
	Collectives []Collective
}

// Waited returns the time rank i (an index in Result.Ranks) waited in the
// step's collectives.
func (s *Step) Waited(i int) int64 {
	var w int64
	for _, c := range s.Collectives {
		w += c.Waits[i]
	}
	return w
}

// Collective is the k-th collective of a step on every rank.
type Collective struct {
	// Index is k: the collective's place in its step, from 0.
	Index int
	// Name is the straggler's kernel or op name.
	Name string
	// Straggler indexes Result.Ranks: the rank that started it last.
	Straggler int
	// Start is the latest start, on the job's timeline; Spread the time
	// from the earliest start to it.
	Start, Spread int64
	// Waits hold each rank's wait in it as the job counts waits (inside
	// the rank's window, where its device did nothing else), Transfers
	// the time from the straggler's start to the end; both summed over
	// the rank's devices, indexed as Result.Ranks.
	Waits, Transfers []int64
	// Split is the waits, summed over the ranks, by what held the
	// straggler back.
	Split WaitSplit
}

// Analyze analyses the traces of one distributed job, one per rank (a
// rank's "rank" in Trace.Meta orders them; without it, their order does),
// aligns the ranks by step number, splits every collective into the time
// spent waiting for the slowest one and the transfer, and reaches one
// verdict for the job. It summarizes each trace (Summarize) and merges the
// summaries (Merge), as a job analysed in two phases is.
func Analyze(ranks []*trace.Trace, opt analyze.Options) (*Result, error) {
	if len(ranks) < 2 {
		return nil, fmt.Errorf("analyze job: %d trace(s) given: expected one per rank, at least 2", len(ranks))
	}
	ids := make([]rankID, len(ranks))
	for i, t := range ranks {
		if t == nil {
			return nil, fmt.Errorf("analyze job: trace %d is nil", i)
		}
		ids[i] = rankID{t.Meta, traceName(t.Path, i)}
	}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	nums, _, _, err := rankNumbers(ids)
	if err != nil {
		return nil, err
	}
	sums, err := summarizeRanks(ranks, nums, opt)
	if err != nil {
		return nil, err
	}
	return Merge(sums, opt)
}

// Merge analyses a distributed job from its ranks' summaries, one per
// rank, made with options opt: the result is the one Analyze gives for
// the ranks' traces.
func Merge(sums []*Summary, opt analyze.Options) (*Result, error) {
	if len(sums) < 2 {
		return nil, fmt.Errorf("analyze job: %d trace(s) given: expected one per rank, at least 2", len(sums))
	}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	ids := make([]rankID, len(sums))
	for i, s := range sums {
		if s == nil {
			return nil, fmt.Errorf("analyze job: summary %d is nil", i)
		}
		ids[i] = rankID{s.Meta, cmp.Or(s.File, traceName(s.Path, i))}
		if err := s.check(&opt); err != nil {
			return nil, fmt.Errorf("%s: %w", ids[i].name, err)
		}
		s.listGaps(opt.TopGaps)
	}
	nums, world, inputOrder, err := rankNumbers(ids)
	if err != nil {
		return nil, err
	}
	j := newAnalysis(sums, nums, opt)
	if inputOrder {
		j.note(NoteInputOrder, 0, 0)
	}
	j.res.WorldSize = world
	if world > len(sums) {
		j.note(NoteMissingRanks, len(sums), world)
	}
	if err := j.run(); err != nil {
		return nil, err
	}
	return j.res, nil
}

// rankID is what names a rank: its trace's metadata and name.
type rankID struct {
	meta map[string]string
	name string
}

// rankNumbers reads each rank's number and world size from its metadata.
// When not every rank names its number, the input order numbers them and
// inputOrder is set.
func rankNumbers(ids []rankID) (nums []int, world int, inputOrder bool, err error) {
	nums = make([]int, len(ids))
	seen := map[int]int{}
	for i, id := range ids {
		s, ok := id.meta["rank"]
		if !ok {
			for k := range nums {
				nums[k] = k
			}
			return nums, len(ids), true, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 {
			return nil, 0, false, fmt.Errorf("%s: rank %q: expected a number of 0 or more", id.name, s)
		}
		if k, dup := seen[n]; dup {
			return nil, 0, false, fmt.Errorf("%s and %s both hold rank %d: expected one trace per rank", ids[k].name, id.name, n)
		}
		seen[n], nums[i] = i, n
		if w, err := strconv.Atoi(strings.TrimSpace(id.meta["world_size"])); err == nil {
			switch {
			case w < 1 || w > maxWorld:
				return nil, 0, false, fmt.Errorf("%s: world size %d: expected 1 to %d ranks", id.name, w, maxWorld)
			case n >= w:
				return nil, 0, false, fmt.Errorf("%s: rank %d of a world of %d: expected a rank below the world size", id.name, n, w)
			case world != 0 && w != world:
				return nil, 0, false, fmt.Errorf("%s: world size %d, but another trace says %d: expected traces of one job", id.name, w, world)
			}
			world = w
		}
	}
	return nums, max(world, len(ids)), false, nil
}

// maxWorld is the largest world size taken from a trace: far above the
// largest jobs run (tens of thousands of ranks), far below a number that
// only a damaged trace gives.
const maxWorld = 1 << 24

func traceName(path string, i int) string {
	if path != "" {
		return path
	}
	return "trace " + strconv.Itoa(i)
}

// summarizeRanks summarizes every rank's trace, several at a time, and
// returns the summaries in input order. A panic in one becomes its error.
func summarizeRanks(ts []*trace.Trace, nums []int, opt analyze.Options) ([]*Summary, error) {
	sums := make([]*Summary, len(ts))
	errs := make([]error, len(ts))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i := range ts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() {
				if p := recover(); p != nil {
					errs[i] = fmt.Errorf("internal error: %v", p)
				}
				<-sem
				wg.Done()
			}()
			sums[i], errs[i] = Summarize(ts[i], opt)
		}()
	}
	wg.Wait()
	var all []error
	for i, err := range errs {
		if err != nil {
			all = append(all, fmt.Errorf("rank %d (%s): %w", nums[i], traceName(ts[i].Path, i), err))
		}
	}
	return sums, errors.Join(all...)
}

// analysis holds the state of one job analysis.
type analysis struct {
	opt   analyze.Options
	ranks []*rankState // sorted by rank number
	// groups are the collectives matched across ranks, by step and index.
	groups []*group
	// window holds the step numbers common to all ranks' windows.
	window []int64
	// clockFixed is set when a rank's clock needed a correction.
	clockFixed bool
	res        *Result
}

func newAnalysis(sums []*Summary, nums []int, opt analyze.Options) *analysis {
	j := &analysis{opt: opt, res: &Result{}}
	for i, s := range sums {
		rule := analyze.Rule{Options: s.Result.Options, LoaderInBackground: s.LoaderInBackground}
		j.ranks = append(j.ranks, &rankState{num: nums[i], sum: s, res: s.Result, rule: rule})
	}
	slices.SortFunc(j.ranks, func(x, y *rankState) int { return x.num - y.num })
	return j
}

// run analyses the job; it refuses ranks that cannot be one job's
// (apart).
func (j *analysis) run() error {
	for _, r := range j.ranks {
		r.collect()
	}
	j.match()
	j.align()
	if err := j.apart(); err != nil {
		return err
	}
	for _, g := range j.groups {
		g.waits()
	}
	for _, r := range j.ranks {
		for _, p := range r.parts {
			p.trimBusy()
		}
	}
	for _, g := range j.groups {
		g.attribute()
	}
	for _, r := range j.ranks {
		for _, p := range r.parts {
			p.countWaits(windowOf(r.res))
		}
	}
	j.rankFigures()
	j.steps()
	j.overall()
	j.facts()
	return nil
}

// facts completes what the job's findings and reasons are written from
// beyond its figures (package advice/jobadvice writes them).
func (j *analysis) facts() {
	f := &j.res.Facts
	f.ClockFixed = j.clockFixed
	for i, r := range j.ranks {
		if len(r.parts) > 0 {
			f.Active = append(f.Active, i)
		}
	}
}

// active returns the ranks with device work.
func (j *analysis) active() []*rankState {
	var rs []*rankState
	for _, r := range j.ranks {
		if len(r.parts) > 0 {
			rs = append(rs, r)
		}
	}
	return rs
}

// rankFigures fills Result.Ranks: each rank's window figures with its
// collective waits taken out of busy time and counted as idle.
func (j *analysis) rankFigures() {
	for i, r := range j.ranks {
		res := r.res
		rk := Rank{Rank: r.num, From: r.input(), Result: res, Offset: r.off}
		rk.StepTime, _ = res.StepTime()
		r.idx = i
		rk.Verdict = res.Verdict
		if len(r.parts) > 0 {
			r.windowFigures(&rk)
		}
		j.res.Ranks = append(j.res.Ranks, rk)
		j.res.Wait.Add(rk.Wait)
		j.res.Transfer += rk.Transfer
	}
	load, busy := j.slowestLoader()
	for i, r := range j.ranks {
		if rk := &j.res.Ranks[i]; len(r.parts) > 0 {
			rk.Verdict, _, _ = r.rule.Decide(&rk.Idle, r.res.Window.Dur(), load, busy)
		}
	}
}

// slowestLoader returns the loading and busy time of the rank that spends
// the most time loading. A rank waiting in a collective waits on the
// job's slowest rank, so whether loading keeps up with compute is that
// rank's question, for every rank's verdict and the job's.
func (j *analysis) slowestLoader() (load, busy int64) {
	for _, rk := range j.res.Ranks {
		if rk.Input > load {
			load, busy = rk.Input, rk.Busy
		}
	}
	return load, busy
}

// windowFigures computes a rank's busy, wait and transfer time inside its
// window, averaged over its devices.
func (r *rankState) windowFigures(rk *Rank) {
	res := r.res
	w := analyze.Interval{Start: res.Window.Start, End: res.Window.End}
	n := int64(len(r.parts))
	var v waitVec
	for _, p := range r.parts {
		rk.Busy += p.covered(w, p.d.WindowBusy)
		pv, transfer := p.windowWaits(w)
		v.add(pv)
		rk.Transfer += transfer
		for _, c := range p.colls {
			if c.wait > 0 {
				rk.Waits = append(rk.Waits, analyze.Interval{Start: c.Start, End: c.Start + c.wait})
			}
		}
	}
	slices.SortFunc(rk.Waits, func(x, y analyze.Interval) int { return cmp.Compare(x.Start, y.Start) })
	rk.Busy /= n
	rk.Transfer /= n
	rk.Wait = v.div(n).split()
	rk.Idle = res.Idle
	for c := analyze.InSync; c < analyze.NumCauses; c++ {
		rk.Idle.Add(c, rk.Wait.Idle.Of(c))
	}
	rk.Input, rk.Sync = r.sum.Input, r.sum.Sync
}

// steps fills Result.Steps with the window's steps common to all ranks.
func (j *analysis) steps() {
	for _, num := range j.window {
		js := Step{Num: num, Straggler: -1, Dur: make([]int64, len(j.ranks))}
		first := true
		for i, r := range j.ranks {
			s := r.windowStep(num)
			if s == nil {
				continue
			}
			js.Name = s.Name
			js.Dur[i] = s.Dur
			start, end := s.Start+r.off, s.Start+s.Dur+r.off
			if first || start < js.Start {
				js.Start = start
			}
			if first || end > js.End {
				js.End = end
			}
			first = false
		}
		j.stepCollectives(&js)
		j.res.Steps = append(j.res.Steps, js)
		if js.Straggler >= 0 {
			j.res.Ranks[js.Straggler].Straggles++
		}
	}
}

// stepCollectives fills a step's collectives and names its straggler: the
// rank whose late collectives made the others wait longest.
func (j *analysis) stepCollectives(js *Step) {
	imposed := make([]waitVec, len(j.ranks))
	for _, g := range j.groups {
		if g.num != js.Num {
			continue
		}
		c := Collective{
			Index: g.k, Straggler: g.straggler().r.idx, Start: g.latest, Spread: g.latest - g.earliest(),
			Waits: make([]int64, len(j.ranks)), Transfers: make([]int64, len(j.ranks)),
		}
		s := g.straggler()
		c.Name = s.r.sum.Names[s.coll().Name]
		var v waitVec
		for _, m := range g.members {
			cl := m.coll()
			c.Waits[m.r.idx] += cl.idle.total()
			c.Transfers[m.r.idx] += cl.End - cl.Start - cl.wait
			v.add(cl.idle)
		}
		c.Split = v.split()
		imposed[c.Straggler].add(v)
		js.Collectives = append(js.Collectives, c)
		j.res.Collectives++
	}
	for i, v := range imposed {
		if t := v.total(); t > 0 && (js.Straggler < 0 || t > js.Wait) {
			js.Straggler, js.Wait = i, t
		}
	}
	if js.Straggler >= 0 {
		sp := imposed[js.Straggler].split()
		js.Doing = sp.Doing()
	}
}

// windowStep returns the rank's window step numbered num, or nil.
func (r *rankState) windowStep(num int64) *analyze.Step {
	for i := range r.res.Steps {
		if r.res.Steps[i].Num == num {
			return &r.res.Steps[i]
		}
	}
	return nil
}

// sourceOf describes the job's inputs as one source: the directory they
// share (or the first input and how many more), their sizes summed, every
// rank's warnings prefixed with its rank. A rank read from a summary file
// is named by that file (input), not by the trace it was made from: the job
// is named after what was given.
func (j *analysis) sourceOf() analyze.Source {
	var s analyze.Source
	dirs := map[string]bool{}
	for _, r := range j.ranks {
		src := &r.res.Source
		s.Bytes += src.Bytes
		s.Events += src.Events
		s.Tracks += src.Tracks
		s.Truncated = s.Truncated || src.Truncated
		s.Invalid = s.Invalid || src.Invalid
		if s.Format == "" {
			s.Format = src.Format
		}
		for _, w := range src.Warnings {
			s.Warnings = append(s.Warnings, fmt.Sprintf("rank %d: %s", r.num, w))
		}
		dirs[filepath.Dir(r.input())] = true
	}
	first := j.ranks[0].input()
	switch {
	case len(dirs) == 1 && first != "":
		s.Path = filepath.Dir(first)
	case first != "":
		s.Path = fmt.Sprintf("%s and %d more", first, len(j.ranks)-1)
	}
	return s
}

// input returns what the rank was read from: its summary's file, else its
// trace's path.
func (r *rankState) input() string { return cmp.Or(r.sum.File, r.res.Source.Path) }
