package analyze

import (
	"cmp"
	"math"
	"slices"

	"github.com/tracegap/tracegap/trace"
)

// A gap is stalled from the instant the launch call of the work that ends
// it returned, when that was more than the slack before the work started:
// from then on the work was queued and the device waited on something
// other than the host (another stream's event, other ranks in a
// collective, an earlier node of a replayed graph). A launch that returns
// within the slack of its work's start is the launch's own latency, and
// the instants before it are the host's. The rule is the trace's only
// evidence of a queue: a device with other work queued but not the work
// that ends the gap still waits for the host to launch that work.

// stallState is what the gap being attributed waited on once its work was
// queued.
type stallState struct {
	// from is the instant the gap's ending work was queued (its launch
	// returned), math.MaxInt64 when it was not queued before the gap
	// ended or the trace does not say.
	from int64
	dep  depKey
	// inSync sums, over the devices, stalled idle during which the
	// launching thread (or, showing nothing, another) was inside a
	// blocking call.
	inSync int64
	// deps sums stalled idle and gaps by dependency, per analysis.
	deps map[depKey]*depSum
	// names caches, per name, what depPatterns say of it (see matchName).
	names struct{ graph, collective, wait, launch []int8 }
}

// depSum is a dependency with its figures summed over the devices.
type depSum struct {
	waited *Waited
	idle   int64
	gaps   int
}

// depKey is a dependency as the trace shows it.
type depKey struct {
	kind   string
	call   trace.StrID
	stream int32
}

// noStall is the stallState.from of a gap not stalled.
const noStall = int64(math.MaxInt64)

// queuedWork returns when the work that ends the idle interval full was
// queued, given its launch call h: the call's return (at the earliest the
// interval's start), when the work started more than the slack after it;
// noStall otherwise.
func (a *analyzer) queuedWork(full Interval, h int32) int64 {
	ret := a.t.Events[h].End()
	if full.End-ret > a.opt.SyncSlack {
		return max(ret, full.Start)
	}
	return noStall
}

// setStall records that the gap being attributed is stalled from from on
// (noStall: not at all), waiting on what the trace shows of the dependency
// of work w, launched by host call h.
func (a *analyzer) setStall(from int64, w int, h int32) {
	a.stall.from = from
	if from == noStall {
		return
	}
	a.stall.dep = a.dependencyOf(w, h)
}

// maxWaitLook bounds how many calls before a launch dependencyOf looks at
// for a stream wait.
const maxWaitLook = 8

// dependencyOf names what the queued work w, launched by host call h,
// waited on, as far as the trace shows: the graph replay it is a node of,
// the collective it is, the event its stream was made to wait on by a
// call just before its launch (after the thread's previous launch), or
// nothing shown.
func (a *analyzer) dependencyOf(w int, h int32) depKey {
	p, c := depPatterns(), &a.stall.names
	stream := int32(a.t.TrackOf(w))
	work, launch := &a.t.Events[w], &a.t.Events[h]
	switch {
	case matchName(&c.graph, a.t, launch.Name, graphLaunchPattern()):
		return depKey{"graph", launch.Name, stream}
	case matchName(&c.collective, a.t, work.Name, p.collective):
		return depKey{"collective", work.Name, stream}
	}
	tr := a.trackOf(h)
	lo := int32(a.t.Tracks[tr].Lo)
	for i := h - 1; i >= lo && i >= h-maxWaitLook; i-- {
		name := a.t.Events[i].Name
		if matchName(&c.wait, a.t, name, p.wait) {
			return depKey{"event", name, stream}
		}
		if matchName(&c.launch, a.t, name, p.launch) {
			break
		}
	}
	return depKey{"unknown", 0, stream}
}

// addStalled adds gap g's stalled idle to its dependency's figures and
// names the dependency in g.
func (a *analyzer) addStalled(g *Gap) {
	d := g.Split.Of(Stall)
	if d == 0 {
		return
	}
	if a.stall.deps == nil {
		a.stall.deps = map[depKey]*depSum{}
	}
	k := a.stall.dep
	dep := a.stall.deps[k]
	if dep == nil {
		w := &Waited{Kind: k.kind, Stream: a.t.Tracks[k.stream].Name}
		if k.call != 0 {
			w.Call = a.t.Str(k.call)
		}
		dep = &depSum{waited: w}
		a.stall.deps[k] = dep
	}
	dep.idle += d
	dep.gaps++
	g.Waits = dep.waited
}

// dependencies returns the stalled idle by dependency, averaged over n
// devices, most idle first.
func (a *analyzer) dependencies(n int64) []Dependency {
	var out []Dependency
	for _, d := range a.stall.deps {
		out = append(out, Dependency{Waited: *d.waited, Idle: d.idle / n, Gaps: d.gaps})
	}
	slices.SortFunc(out, func(x, y Dependency) int {
		return cmp.Or(cmp.Compare(y.Idle, x.Idle), cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.Call, y.Call), cmp.Compare(x.Stream, y.Stream))
	})
	return out
}
