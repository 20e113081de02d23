package analyze

import (
	"math"
	"regexp"
	"slices"

	"github.com/tracegap/tracegap/trace"
)

// A launch call that takes far longer than the run's typical launch is
// runtime work, not dispatch: a warm launch takes microseconds, and one
// that takes milliseconds is loading its kernel's code onto the device
// (lazy module loading, the default since CUDA 12.2, and HIP's first
// launches), compiling it, or waiting on the allocator. So is an
// allocation op (aten::empty) over the same bar: from a warm caching
// allocator it takes microseconds, as a launch does, and one that takes
// milliseconds is the allocator reserving device memory (cudaMalloc, which
// the profiler may not record). The bar is
// slowLaunchFactor times the median launch, and at least slowLaunchFloor:
// on a run of 3-10 us launches it is 0.3-1 ms, ten times what contention
// on a busy host stretches a launch to (a few times its length, not a
// hundred), and a tenth of the first launches of real traces (10-330 ms).
const (
	slowLaunchFactor = 100
	slowLaunchFloor  = 1_000_000 // ns
)

// launchFacts answer slowLaunch: the bar, and which names are launches.
type launchFacts struct {
	known  bool
	bar    int64
	launch []int8 // per StrID: 0 unknown, 1 a launch, -1 not
	alloc  []int8 // per StrID, the same for allocation ops
}

// slowLaunch reports whether e is a launch call or an allocation op slower
// than the bar.
func (a *analyzer) slowLaunch(e *trace.Event) bool {
	l := &a.launchFacts
	if !l.known {
		a.findLaunchBar()
	}
	return e.Dur() > l.bar && (a.isLaunch(e.Name) || matchName(&l.alloc, a.t, e.Name, allocNamePattern()))
}

// matchName reports whether name matches re, caching the answer per name
// in *cache.
func matchName(cache *[]int8, t *trace.Trace, name trace.StrID, re *regexp.Regexp) bool {
	if *cache == nil {
		*cache = make([]int8, len(t.Strings))
	}
	c := *cache
	if int(name) >= len(c) {
		return false
	}
	if c[name] == 0 {
		c[name] = -1
		if re.MatchString(t.Str(name)) {
			c[name] = 1
		}
	}
	return c[name] > 0
}

// isLaunch reports whether name is a launch call's, each name matched once.
func (a *analyzer) isLaunch(name trace.StrID) bool {
	return matchName(&a.launchFacts.launch, a.t, name, launchNamePattern())
}

// findLaunchBar sets the bar from the median of the trace's launch calls;
// without launches, no launch is slow.
func (a *analyzer) findLaunchBar() {
	l := &a.launchFacts
	l.known, l.bar = true, math.MaxInt64
	if a.links.dense == nil && a.links.byCorr == nil {
		return // no host event launches device work (a TPU trace)
	}
	var durs []int64
	for i := range a.t.Tracks {
		tr := &a.t.Tracks[i]
		if tr.Kind != trace.TrackHost {
			continue
		}
		for _, e := range a.t.TrackEvents(i) {
			if e.Corr != 0 && e.Flags&trace.FlagFlow == 0 && a.isLaunch(e.Name) {
				durs = append(durs, e.Dur())
			}
		}
	}
	if len(durs) == 0 {
		return
	}
	slices.Sort(durs)
	l.bar = max(slowLaunchFactor*durs[len(durs)/2], slowLaunchFloor)
}
