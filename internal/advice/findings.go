package advice

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
)

// findings writes the conclusions with their fixes, most severe first.
func (a *adviser) findings() {
	r := a.r
	if r.Verdict == analyze.NoDevice {
		return
	}
	steps := int64(max(r.Window.Steps, 1))
	wd := float64(max(r.Window.Dur(), 1))
	var fs []analyze.Finding
	if v := float64(r.Idle.Sync()) / wd; v > a.r.Options.SyncThreshold {
		fs = append(fs, a.forcedSync(steps, v))
	}
	if v := float64(r.Idle.Of(analyze.Input)) / wd; v > a.r.Options.InputThreshold || r.Verdict == analyze.DataBound {
		input, busy, ok := r.PerStep()
		if !ok {
			input = r.Loading // over the window, without steps
			busy = r.WindowBusy()
		}
		fs = append(fs, a.slowInput(input, busy, v))
	}
	// Host work and runtime work share the host threshold; each has its
	// finding when it is the larger part, runtime work also when it alone
	// passes the input threshold or is what the devices waited on most
	// (see runtimeLargest).
	hostOver := float64(r.Idle.HostWork())/wd > a.r.Options.HostThreshold
	if v := float64(r.Idle.Of(analyze.Host)) / wd; hostOver && r.Idle.Of(analyze.Host) >= r.Idle.Of(analyze.Runtime) {
		fs = append(fs, a.hostWork(v))
	}
	if v := float64(r.Idle.Of(analyze.Runtime)) / wd; hostOver && r.Idle.Of(analyze.Runtime) > r.Idle.Of(analyze.Host) || v > a.r.Options.InputThreshold || a.runtimeLargest() {
		fs = append(fs, a.runtimeWork(v))
	}
	if v := float64(r.Idle.Of(analyze.Untraced)) / wd; v > a.r.Options.InputThreshold {
		fs = append(fs, a.untracedThread(v))
	}
	if v := float64(r.Idle.Of(analyze.Stall)) / wd; v > a.r.Options.StallThreshold || r.Verdict == analyze.Stalled {
		fs = append(fs, a.stalledFinding(v))
	}
	if v := float64(r.StalledInSync) / wd; v > a.r.Options.SyncThreshold {
		fs = append(fs, a.syncOnStalled(v))
	}
	if f := a.erraticFinding(); f != nil {
		fs = append(fs, *f)
	}
	// Untraced idle decides host-bound when no cause passes its threshold,
	// host work included.
	untracedDecided := r.Verdict == analyze.HostBound && float64(r.Idle.HostWork())/wd <= a.r.Options.HostThreshold
	for i := range fs {
		fs[i].Severity = "medium"
		if VerdictOf(fs[i].ID) == r.Verdict || fs[i].ID == FindUntracedThread && untracedDecided {
			fs[i].Severity = "high"
		}
	}
	fs = a.structure(fs)
	SortFindings(fs)
	r.Findings = fs
}

// threadName names thread th as the trace does.
func threadName(th analyze.Thread) string {
	if th.Track < 0 {
		return "an unknown thread"
	}
	return th.Name
}

func (a *adviser) forcedSync(steps int64, share float64) analyze.Finding {
	r := a.r
	names := a.f.Sync.Names(3)
	calls := "blocking calls"
	if len(names) > 0 {
		calls = strings.Join(names, ", ")
	}
	n := a.f.SyncCalls
	var often string
	switch {
	case r.Window.Steps == 0:
		often = human.Count(n, "blocking call") + " in the window"
	case int64(n)%steps == 0:
		often = human.Count(int(int64(n)/steps), "blocking call") + " per step"
	default:
		often = fmt.Sprintf("about %.1f blocking calls per step", float64(n)/float64(steps))
	}
	dev := a.deviceWord()
	return analyze.Finding{
		ID: FindForcedSync,
		// The thread's name is the trace's ("python/1", "thread 1
		// (python)"), never capitalized: "Python/1" is no thread.
		Message: fmt.Sprintf("On %s the host blocks on the %s in %s (%s). Each time the %s drains its queue and then idles until the host has returned and launched new work: %s of idle in all, %s of the window.",
			threadPhrase(threadName(a.f.Sync.Thread)), dev, calls, often, dev, human.Duration(r.Idle.Sync()), human.Share(share)) +
			a.elsewhereNote(analyze.InSync, "the blocking call may be waiting on that work rather than on the "+dev),
		Fix: a.syncFix(),
	}
}

// syncCountNote says why the sync call sites count other calls than the
// forced-sync finding, which counts the calls started in the window: a
// site counts the calls that held a device idle in it, among them a call
// made before the window whose return its first gap follows, and not the
// calls that found the device done. Empty when the counts agree.
func (a *adviser) syncCountNote(sites []analyze.CallSite) string {
	var held int
	for _, s := range sites {
		held += s.Count
	}
	if n := a.f.SyncCalls; held != n && len(sites) > 0 {
		return fmt.Sprintf(" Of the %s started in the window, the call sites count those that held the %s idle, and a call made before the window if its first gap follows it: %s.",
			human.Count(n, "call"), a.deviceWord(), human.Count(held, "call"))
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

// deviceWord names the devices in prose: "GPU", "TPU", or "device" when
// they are of several kinds or of an unknown kind.
func (a *adviser) deviceWord() string {
	if k := a.f.DeviceKind; k == "GPU" || k == "TPU" {
		return k
	}
	return "device"
}

// slowInput explains input-bound idle; load and compute are per step.
func (a *adviser) slowInput(load, compute int64, share float64) analyze.Finding {
	loader, kind := "the "+analyze.LoaderAny, a.loaderKind()
	if name := a.f.InputName; name != "" {
		loader = fmt.Sprintf("the %s (%s)", kind, name)
	}
	dev := a.deviceWord()
	thr := threadName(a.f.InputThread)
	msg := fmt.Sprintf("%s takes %s per step on %s, the thread the %s waits on, against %s of %s work per step; ",
		Capitalize(loader), human.Duration(load), thr, dev, human.Duration(compute), dev)
	if a.r.Loader.Background {
		// The time is the wait on the workers' queue, not their pace.
		msg = fmt.Sprintf("%s runs in background workers, and %s, the thread the %s waits on, still waits %s per step on their queue, against %s of %s work per step: they deliver batches more slowly than the %s runs them; ",
			Capitalize(loader), thr, dev, human.Duration(load), human.Duration(compute), dev, dev)
	}
	if share > a.r.Options.InputThreshold {
		msg += fmt.Sprintf("the %s idles in it for %s of the window.", dev, human.Share(share))
	} else {
		// Data-bound through syncs: the idle is counted as the syncs'.
		msg += fmt.Sprintf("blocking calls expose it (see forced-sync), but it would not fit inside the %s work even without them.", dev)
	}
	msg += loaderOf(kind).note
	// An inline loader fast enough for compute is another finding than a
	// slow one: its fix is overlap, not more workers (the verdict rule).
	id := FindSlowInput
	if load <= compute && !a.r.Loader.Background {
		id = FindInlineInput
	}
	return analyze.Finding{ID: id, Message: msg, Fix: a.workerFix(workerAdvice(kind, load, compute)), Settings: a.workerSettings(kind, load, compute)}
}

// Capitalize returns s with its first letter upper-case, to open a
// sentence with a phrase.
func Capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// hostWork explains idle during other host work: communication when
// calls that wait on other processes (MPI_Recv, gloo) hold at least half
// of it, else dispatch.
func (a *adviser) hostWork(share float64) analyze.Finding {
	host := &a.f.Causes[analyze.Host]
	var comm int64
	for _, n := range host.Top {
		if analyze.IsCommWait(n.Name) {
			comm += n.Idle
		}
	}
	if comm > 0 && 2*comm >= host.All {
		return a.commWait(share)
	}
	return a.dispatch(share)
}

// commWait explains idle while the host waits on other processes: sends,
// receives and barriers, not the pace of launches.
func (a *adviser) commWait(share float64) analyze.Finding {
	calls := a.commCalls()
	dev := a.deviceWord()
	return analyze.Finding{
		ID: FindCommWait,
		Message: fmt.Sprintf("The %s idles for %s of the window while %s is in %s, calls that wait on other processes: communication, not launch overhead. The %s has no work queued until they return.",
			dev, human.Share(share), threadName(a.f.Causes[analyze.Host].Thread), strings.Join(calls, ", "), dev),
		Fix: a.commFix(),
	}
}

// commCalls returns the calls that wait on other processes among those
// the host idle was most spent in, at most 3, most idle first: the call
// sites' names, else the tally's.
func (a *adviser) commCalls() []string {
	var calls []string
	for _, c := range siteCalls(a.r.CallSites, analyze.Host, len(a.r.CallSites)) {
		if analyze.IsCommWait(c) && len(calls) < 3 {
			calls = append(calls, c)
		}
	}
	if len(calls) == 0 {
		for _, n := range a.f.Causes[analyze.Host].Names(analyze.MaxTopNames) {
			if analyze.IsCommWait(n) {
				calls = append(calls, n)
			}
		}
	}
	return calls
}

func (a *adviser) dispatch(share float64) analyze.Finding {
	ops := siteCalls(a.r.CallSites, analyze.Host, 3)
	if len(ops) == 0 {
		ops = a.f.Causes[analyze.Host].Names(3)
	}
	what := "host work"
	if len(ops) > 0 {
		what = strings.Join(ops, ", ")
	}
	// Time with the thread in nothing but the step marker has no name
	// in the tally.
	named, all := a.f.Causes[analyze.Host].Named, a.f.Causes[analyze.Host].All
	between := ""
	if all > 0 && float64(all-named) >= 0.1*float64(all) {
		between = fmt.Sprintf(" (%s of it between ops, in Python the trace does not break down)", human.Share(float64(all-named)/float64(all)))
	}
	dev := a.deviceWord()
	return analyze.Finding{
		ID: FindDispatch,
		Message: fmt.Sprintf("The %s waits on host work other than input and syncs for %s of the window%s, mostly while %s is in %s: the host issues work more slowly than the %s runs it.",
			dev, human.Share(share), between, threadName(a.f.Causes[analyze.Host].Thread), what, dev),
		Fix: a.dispatchFix(),
	}
}

// siteCalls returns the calls of the first k distinct call sites of cause
// c, most idle first: the names the call sites table shows, so that a
// finding and the table name the same work (a call site is blamed on a
// known cost such as zero_grad rather than the op inside it).
func siteCalls(sites []analyze.CallSite, c analyze.Cause, k int) []string {
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
func (a *adviser) runtimeLargest() bool {
	b := &a.r.Idle
	rt := b.Of(analyze.Runtime)
	return rt > b.Sync() && rt > b.Of(analyze.Input) && rt > b.Of(analyze.Host) &&
		float64(b.Attributed())/float64(max(a.r.Window.Dur(), 1)) > a.r.Options.InputThreshold
}

// runtimeWork explains idle during runtime work: compilation, program
// loading, allocation, defragmentation. It names the work the idle was
// most spent in, with the idle each caused, and the thread doing most of
// it: on JAX often an execute thread while the loop thread waits inside
// its dispatch.
func (a *adviser) runtimeWork(share float64) analyze.Finding {
	rt := &a.f.Causes[analyze.Runtime]
	ndev := int64(max(len(a.r.Devices), 1))
	what := "runtime work"
	if top := rt.Top; len(top) > 0 {
		parts := make([]string, len(top))
		for i, n := range top {
			parts[i] = fmt.Sprintf("%s (%s)", n.Name, human.Duration(n.Idle/ndev))
		}
		what = strings.Join(parts, ", ")
	}
	where := ""
	if thr := rt.Thread; thr.Track >= 0 {
		where = "; the largest part on " + threadName(thr)
		if loop := a.f.Loop; loop.Track >= 0 && thr.Track != loop.Track {
			where += fmt.Sprintf(", while the loop thread %s waited inside its dispatch", threadName(loop))
		}
	}
	dev := a.deviceWord()
	return analyze.Finding{
		ID: FindRuntimeWork,
		Message: fmt.Sprintf("The %s waits on runtime work for %s of the window, mostly in %s%s. Compilation, program loading, allocation or defragmentation holds the next work back.",
			dev, human.Share(share), what, where),
		Fix: a.runtimeFix(),
	}
}

func (a *adviser) untracedThread(share float64) analyze.Finding {
	return analyze.Finding{
		ID: FindUntracedThread,
		Message: fmt.Sprintf("For %s of the window the %s waits on %s while that thread shows no traced event, so the cause cannot be told.%s",
			human.Share(share), a.deviceWord(), threadName(a.f.Causes[analyze.Untraced].Thread), a.untracedBetween()) +
			a.elsewhereNote(analyze.Untraced, "the thread may be waiting on that work"),
		Fix: a.untracedFix(),
	}
}

// grain's own tuning, named beside a worker count tracegap computes.
const (
	grainBufferKnob = "grain_per_worker_buffer_size (MaxText; grain's worker_buffer_size)"
	grainAutoTune   = "grain can also pick the count itself: grain.experimental.pick_performance_config (MaxText's grain_worker_count=-1) sizes workers and buffers to a RAM budget, not to the step's pace, so compare its count with this one."
)

// elsewhereNote names the work of another host thread during the longest
// gap of cause c (Facts.Elsewhere), and what it may mean (why); "" when
// none covered half of it.
func (a *adviser) elsewhereNote(c analyze.Cause, why string) string {
	w := a.f.Elsewhere[c]
	if w == nil {
		return ""
	}
	return fmt.Sprintf(" During the longest such gap (%s on %s), %s ran %s for %s of it: %s.",
		human.Duration(w.GapDur), w.Device, w.Thread, w.Work, human.Duration(w.Overlap), why)
}

// untracedBetween says what the longest untraced stretch of idle is, as a
// sentence for the untraced-thread finding: the calls on the waited-for
// thread it falls between. Empty when no gap has untraced idle.
func (a *adviser) untracedBetween() string {
	st := a.f.Untraced
	if st == nil {
		return ""
	}
	what := fmt.Sprintf(" The longest stretch, %s of a %s gap on %s,", human.Duration(st.Dur), human.Duration(st.GapDur), st.Device)
	switch {
	case st.HasBefore && st.HasAfter:
		what += fmt.Sprintf(" falls after %s returned and before %s began:", st.Before, st.After)
	case st.HasBefore:
		what += fmt.Sprintf(" falls after %s returned, with no event after it:", st.Before)
	case st.HasAfter:
		what += fmt.Sprintf(" falls before %s began, with no event before it:", st.After)
	default:
		what += " falls where the thread shows no event at all:"
	}
	return what + " host code runs there between those calls that the profile does not show."
}
