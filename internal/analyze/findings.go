package analyze

import (
	"cmp"
	"fmt"
	"github.com/tracegap/tracegap/internal/human"
	"slices"
	"strings"

	"github.com/tracegap/tracegap/trace"
)

// tally sums gap time by cause: per event name (the blocking call, the
// input event, the host op the waited-for thread was in) and per thread.
// Its maps are keyed by distinct names and threads, never by event.
type tally struct {
	names   [NumCauses]map[trace.StrID]int64
	threads [NumCauses]map[int32]int64
	// pending sums adds of one cause, name and thread in a row (a gap's
	// segments mostly repeat the last one) before they reach the maps;
	// flush empties it.
	pending tallyKey
	sum     int64
}

type tallyKey struct {
	c     Cause
	name  trace.StrID
	track int32
	set   bool
}

func (t *tally) add(c Cause, name trace.StrID, track int32, d int64) {
	k := tallyKey{c, name, track, true}
	if k == t.pending {
		t.sum += d
		return
	}
	t.flush()
	t.pending, t.sum = k, d
}

// flush adds the pending sum to the maps; the maps are read only after.
func (t *tally) flush() {
	if t.pending.set {
		t.addNow(t.pending.c, t.pending.name, t.pending.track, t.sum)
	}
	t.pending, t.sum = tallyKey{}, 0
}

func (t *tally) addNow(c Cause, name trace.StrID, track int32, d int64) {
	if t.names[c] == nil {
		t.names[c] = map[trace.StrID]int64{}
		t.threads[c] = map[int32]int64{}
	}
	if name != 0 {
		t.names[c][name] += d
	}
	t.threads[c][track] += d
}

// culprit returns the name in stack that explains cause c (see culpritAt;
// for runtime, the outermost runtime work), 0 when none does.
func (a *analyzer) culprit(c Cause, th *thread, stack *hostStack) trace.StrID {
	if c == Runtime {
		if x := a.runtimeIn(stack); x >= 0 {
			return th.evs[x].Name
		}
		return 0
	}
	if i := culpritAt(c, th, stack); i >= 0 {
		return th.evs[stack.evs[i]].Name
	}
	return 0
}

// culpritAt returns the level in stack of the event that explains cause
// c: the blocking call for in-sync, the outermost input event for input,
// and for host work the outermost framework op (aten::linear rather than
// the Python frames around it or the launch calls inside it), else the
// innermost event; -1 when none does.
func culpritAt(c Cause, th *thread, stack *hostStack) int {
	f := stack.top()
	switch {
	case c == InSync:
		return int(f.sync)
	case c == Input:
		return int(f.input)
	case c == Host && f.op >= 0:
		return int(f.op)
	}
	// Else the innermost event, unless it is the step marker: a thread
	// inside nothing else runs Python the trace does not break down,
	// which the dispatch finding reports on its own.
	if n := len(stack.evs); c == Host && n > 0 && !th.evs[stack.evs[n-1]].Has(trace.FlagStep) {
		return n - 1
	}
	return -1
}

// top returns the names of m with the most time, most first, at most k.
func (a *analyzer) top(m map[trace.StrID]int64, k int) []string {
	ids := a.topIDs(m, k)
	names := make([]string, 0, len(ids))
	for _, id := range ids {
		names = append(names, a.t.Str(id))
	}
	return names
}

// topIDs is top with the names' ids.
func (a *analyzer) topIDs(m map[trace.StrID]int64, k int) []trace.StrID {
	ids := make([]trace.StrID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(x, y trace.StrID) int {
		if c := cmp.Compare(m[y], m[x]); c != 0 {
			return c
		}
		return cmp.Compare(a.t.Str(x), a.t.Str(y))
	})
	return ids[:min(k, len(ids))]
}

func topThread(m map[int32]int64) int32 {
	best, bt := int32(-1), int64(-1)
	for tr, v := range m {
		if v > bt || (v == bt && tr < best) {
			best, bt = tr, v
		}
	}
	return best
}

// findings writes the conclusions with their fixes, most severe first.
func (a *analyzer) findings() {
	r := a.res
	if r.Verdict == NoDevice {
		return
	}
	steps := int64(max(r.Window.Steps, 1))
	wd := float64(max(r.Window.Dur(), 1))
	var fs []Finding
	if v := float64(r.Idle.Sync()) / wd; v > a.opt.SyncThreshold {
		fs = append(fs, a.forcedSync(steps, v))
	}
	if v := float64(r.Idle.Of(Input)) / wd; v > a.opt.InputThreshold || r.Verdict == DataBound {
		input, busy, ok := r.PerStep()
		if !ok {
			input = r.Loading // over the window, without steps
			busy = a.avgWindowBusy()
		}
		fs = append(fs, a.slowInput(input, busy, v))
	}
	// Host work and runtime work share the host threshold; each has its
	// finding when it is the larger part, runtime work also when it alone
	// passes the input threshold or is what the devices waited on most
	// (see runtimeLargest).
	hostOver := float64(r.Idle.HostWork())/wd > a.opt.HostThreshold
	if v := float64(r.Idle.Of(Host)) / wd; hostOver && r.Idle.Of(Host) >= r.Idle.Of(Runtime) {
		fs = append(fs, a.dispatch(v))
	}
	if v := float64(r.Idle.Of(Runtime)) / wd; hostOver && r.Idle.Of(Runtime) > r.Idle.Of(Host) || v > a.opt.InputThreshold || a.runtimeLargest() {
		fs = append(fs, a.runtimeWork(v))
	}
	if v := float64(r.Idle.Of(Untraced)) / wd; v > a.opt.InputThreshold {
		fs = append(fs, a.untracedThread(v))
	}
	if v := float64(r.Idle.Of(Stall)) / wd; v > a.opt.StallThreshold || r.Verdict == Stalled {
		fs = append(fs, a.stalledFinding(v))
	}
	if v := float64(r.StalledInSync) / wd; v > a.opt.SyncThreshold {
		fs = append(fs, a.syncOnStalled(v))
	}
	if f := a.erraticFinding(); f != nil {
		fs = append(fs, *f)
	}
	// Untraced idle decides host-bound when no cause passes its threshold,
	// host work included.
	untracedDecided := r.Verdict == HostBound && float64(r.Idle.HostWork())/wd <= a.opt.HostThreshold
	for i := range fs {
		fs[i].Severity = "medium"
		if verdictOf(fs[i].ID) == r.Verdict || fs[i].ID == FindUntracedThread && untracedDecided {
			fs[i].Severity = "high"
		}
	}
	fs = a.structure(fs)
	slices.SortStableFunc(fs, func(x, y Finding) int { return cmp.Compare(severityRank(x.Severity), severityRank(y.Severity)) })
	r.Findings = fs
}

func severityRank(s string) int {
	switch s {
	case "high":
		return 0
	case "medium":
		return 1
	}
	return 2
}

func (a *analyzer) avgWindowBusy() int64 {
	var b int64
	for _, d := range a.devs {
		b += d.winBusy
	}
	return b / int64(len(a.devs))
}

func (a *analyzer) threadName(tr int32) string {
	if tr < 0 || int(tr) >= len(a.t.Tracks) {
		return "an unknown thread"
	}
	return a.t.Tracks[tr].Name
}

func (a *analyzer) forcedSync(steps int64, share float64) Finding {
	r := a.res
	names := a.top(mergeNames(a.tally.names[InSync], a.tally.names[AfterSync]), 3)
	calls := "blocking calls"
	if len(names) > 0 {
		calls = strings.Join(names, ", ")
	}
	thr, n := a.syncCallsInWindow()
	var often string
	switch {
	case r.Window.Steps == 0:
		often = plural(n, "blocking call") + " in the window"
	case int64(n)%steps == 0:
		often = plural(int(int64(n)/steps), "blocking call") + " per step"
	default:
		often = fmt.Sprintf("about %.1f blocking calls per step", float64(n)/float64(steps))
	}
	dev := a.deviceWord()
	return Finding{
		ID: FindForcedSync,
		// The thread's name is the trace's ("python/1", "thread 1
		// (python)"), never capitalized: "Python/1" is no thread.
		Message: fmt.Sprintf("On %s the host blocks on the %s in %s (%s). Each time the %s drains its queue and then idles until the host has returned and launched new work: %s of idle in all, %s of the window.",
			threadPhrase(a.threadName(thr)), dev, calls, often, dev, human.Duration(r.Idle.Sync()), human.Share(share)) +
			a.elsewhereNote(InSync, "the blocking call may be waiting on that work rather than on the "+dev),
		Fix: a.syncFix(),
	}
}

// syncCallsInWindow returns the thread that blocked most on the devices
// and how many blocking calls it started in the window. Calls are host
// figures: counted over the window on the host's clock (a step's sync can
// start before the device ends the step before).
func (a *analyzer) syncCallsInWindow() (int32, int) {
	thr := topThread(mergeThreads(a.tally.threads[InSync], a.tally.threads[AfterSync]))
	if thr < 0 {
		return thr, 0
	}
	return thr, countIn(a.thread(thr).syncs, a.hostWindow())
}

// syncCountNote says why the sync call sites count other calls than the
// forced-sync finding, which counts the calls started in the window: a
// site counts the calls that held a device idle in it, among them a call
// made before the window whose return its first gap follows, and not the
// calls that found the device done. Empty when the counts agree.
func (a *analyzer) syncCountNote(sites []CallSite) string {
	var held int
	for _, s := range sites {
		held += s.Count
	}
	if _, n := a.syncCallsInWindow(); held != n && len(sites) > 0 {
		return fmt.Sprintf(" Of the %s started in the window, the call sites count those that held the %s idle, and a call made before the window if its first gap follows it: %s.",
			plural(n, "call"), a.deviceWord(), plural(held, "call"))
	}
	return ""
}

// threadPhrase names a thread in a sentence: "thread python" for a name
// that does not say it is a thread, the name itself when it does ("thread
// 1 (python)", as Kineto names them).
func threadPhrase(name string) string {
	if strings.HasPrefix(name, "thread ") || strings.HasPrefix(name, "an unknown thread") {
		return name
	}
	return "thread " + name
}

// plural returns "1 call", "3 calls".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// deviceWord names the devices in prose: "GPU", "TPU", or "device" when
// they are of several kinds or of an unknown kind.
func (a *analyzer) deviceWord() string {
	word := ""
	for _, d := range a.devs {
		kind, _, _ := strings.Cut(d.id, ":")
		if word != "" && kind != word {
			return "device"
		}
		word = kind
	}
	if word != "GPU" && word != "TPU" {
		return "device"
	}
	return word
}

func mergeThreads(x, y map[int32]int64) map[int32]int64 {
	m := map[int32]int64{}
	for k, v := range x {
		m[k] += v
	}
	for k, v := range y {
		m[k] += v
	}
	return m
}

// countIn returns how many of ivs start inside w.
func countIn(ivs []Interval, w Interval) int {
	n := 0
	for _, iv := range ivs {
		if iv.Start >= w.Start && iv.Start < w.End {
			n++
		}
	}
	return n
}

// slowInput explains input-bound idle; load and compute are per step.
func (a *analyzer) slowInput(load, compute int64, share float64) Finding {
	names := a.inputNames()
	loader, kind := "the "+anyLoader, a.loaderKind("")
	if len(names) > 0 {
		kind = a.loaderKind(names[0])
		loader = fmt.Sprintf("the %s (%s)", kind, names[0])
	}
	dev := a.deviceWord()
	thr := topThread(a.tally.threads[Input])
	if thr < 0 {
		thr = topThread(mergeThreads(a.tally.threads[InSync], a.tally.threads[AfterSync]))
	}
	msg := fmt.Sprintf("%s takes %s per step on %s, the thread the %s waits on, against %s of %s work per step; ",
		capitalize(loader), human.Duration(load), a.threadName(thr), dev, human.Duration(compute), dev)
	if a.res.Loader.Background {
		// The time is the wait on the workers' queue, not their pace.
		msg = fmt.Sprintf("%s runs in background workers, and %s, the thread the %s waits on, still waits %s per step on their queue, against %s of %s work per step: they deliver batches more slowly than the %s runs them; ",
			capitalize(loader), a.threadName(thr), dev, human.Duration(load), human.Duration(compute), dev, dev)
	}
	if share > a.opt.InputThreshold {
		msg += fmt.Sprintf("the %s idles in it for %s of the window.", dev, human.Share(share))
	} else {
		// Data-bound through syncs: the idle is counted as the syncs'.
		msg += fmt.Sprintf("blocking calls expose it (see forced-sync), but it would not fit inside the %s work even without them.", dev)
	}
	msg += loaderOf(kind).note
	// An inline loader fast enough for compute is another finding than a
	// slow one: its fix is overlap, not more workers (the verdict rule).
	id := FindSlowInput
	if load <= compute && !a.loaderInBackground() {
		id = FindInlineInput
	}
	return Finding{ID: id, Message: msg, Fix: a.workerFix(workerAdvice(kind, load, compute)), Settings: a.workerSettings(kind, load, compute)}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func (a *analyzer) dispatch(share float64) Finding {
	ops := siteCalls(a.res.CallSites, Host, 3)
	if len(ops) == 0 {
		ops = a.top(a.tally.names[Host], 3)
	}
	what := "host work"
	if len(ops) > 0 {
		what = strings.Join(ops, ", ")
	}
	// Time with the thread in nothing but the step marker has no name
	// in the tally.
	var named, all int64
	for _, v := range a.tally.names[Host] {
		named += v
	}
	for _, v := range a.tally.threads[Host] {
		all += v
	}
	between := ""
	if all > 0 && float64(all-named) >= 0.1*float64(all) {
		between = fmt.Sprintf(" (%s of it between ops, in Python the trace does not break down)", human.Share(float64(all-named)/float64(all)))
	}
	dev := a.deviceWord()
	return Finding{
		ID: FindDispatch,
		Message: fmt.Sprintf("The %s waits on host work other than input and syncs for %s of the window%s, mostly while %s is in %s: the host issues work more slowly than the %s runs it.",
			dev, human.Share(share), between, a.threadName(topThread(a.tally.threads[Host])), what, dev),
		Fix: a.dispatchFix(),
	}
}

// siteCalls returns the calls of the first k distinct call sites of cause
// c, most idle first: the names the call sites table shows, so that a
// finding and the table name the same work (a call site is blamed on a
// known cost such as zero_grad rather than the op inside it).
func siteCalls(sites []CallSite, c Cause, k int) []string {
	var out []string
	for _, s := range sites {
		if s.Cause == c && !slices.Contains(out, s.Call) {
			if out = append(out, s.Call); len(out) == k {
				break
			}
		}
	}
	return out
}

// runtimeLargest reports whether runtime work is the traced cause the
// devices waited on most (more than sync, input or other host work) in a
// window whose attributed idle passes the input threshold: below every
// threshold as each cause may be, the report then names that work rather
// than leave the untraced idle beside it as the only explanation.
func (a *analyzer) runtimeLargest() bool {
	b := &a.res.Idle
	rt := b.Of(Runtime)
	return rt > b.Sync() && rt > b.Of(Input) && rt > b.Of(Host) &&
		float64(b.Attributed())/float64(max(a.res.Window.Dur(), 1)) > a.opt.InputThreshold
}

// runtimeWork explains idle during runtime work: compilation, program
// loading, allocation, defragmentation. It names the work the idle was
// most spent in, with the idle each caused, and the thread doing most of
// it: on JAX often an execute thread while the loop thread waits inside
// its dispatch.
func (a *analyzer) runtimeWork(share float64) Finding {
	names := a.tally.names[Runtime]
	ndev := int64(max(len(a.devs), 1))
	what := "runtime work"
	if top := a.topIDs(names, 3); len(top) > 0 {
		parts := make([]string, len(top))
		for i, id := range top {
			parts[i] = fmt.Sprintf("%s (%s)", a.t.Str(id), human.Duration(names[id]/ndev))
		}
		what = strings.Join(parts, ", ")
	}
	where := ""
	if thr := topThread(a.tally.threads[Runtime]); thr >= 0 {
		where = "; the largest part on " + a.threadName(thr)
		if a.loop >= 0 && thr != a.loop {
			where += fmt.Sprintf(", while the loop thread %s waited inside its dispatch", a.threadName(a.loop))
		}
	}
	dev := a.deviceWord()
	return Finding{
		ID: FindRuntimeWork,
		Message: fmt.Sprintf("The %s waits on runtime work for %s of the window, mostly in %s%s. Compilation, program loading, allocation or defragmentation holds the next work back.",
			dev, human.Share(share), what, where),
		Fix: a.runtimeFix(),
	}
}

func (a *analyzer) untracedThread(share float64) Finding {
	return Finding{
		ID: FindUntracedThread,
		Message: fmt.Sprintf("For %s of the window the %s waits on %s while that thread shows no traced event, so the cause cannot be told.%s",
			human.Share(share), a.deviceWord(), a.threadName(topThread(a.tally.threads[Untraced])), a.untracedBetween()) +
			a.elsewhereNote(Untraced, "the thread may be waiting on that work"),
		Fix: a.untracedFix(),
	}
}

func mergeNames(x, y map[trace.StrID]int64) map[trace.StrID]int64 {
	m := map[trace.StrID]int64{}
	for k, v := range x {
		m[k] += v
	}
	for k, v := range y {
		m[k] += v
	}
	return m
}

// grain's own tuning, named beside a worker count tracegap computes.
const (
	grainBufferKnob = "grain_per_worker_buffer_size (MaxText; grain's worker_buffer_size)"
	grainAutoTune   = "grain can also pick the count itself: grain.experimental.pick_performance_config (MaxText's grain_worker_count=-1) sizes workers and buffers to a RAM budget, not to the step's pace, so compare its count with this one."
)

// elsewhereNote names the work of another host thread during the longest
// gap of cause c (see workElsewhere), and what it may mean (why); "" when
// none covered half of it.
func (a *analyzer) elsewhereNote(c Cause, why string) string {
	w, ok := a.workElsewhere(c)
	if !ok {
		return ""
	}
	return fmt.Sprintf(" During the longest such gap (%s on %s), %s ran %s for %s of it: %s.",
		human.Duration(w.gap.Dur), w.gap.Device, a.threadName(w.track), a.t.Str(w.name), human.Duration(w.overlap), why)
}
