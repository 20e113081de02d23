package job

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
)

// ErrNotOneJob is the error for traces that cannot be one job's ranks: a
// rank's device work shares no time with any other rank's once the clocks
// are aligned, so no collective tied it to them either (collectives that
// align the clocks make the ranks' device work meet). Separate runs, or
// hosts whose clocks disagree with no collective to correct them: a merged
// timeline of them would be mostly time outside every rank, and its
// verdict wrong.
var ErrNotOneJob = errors.New("not one job's ranks")

// span returns the rank's device work on the job's timeline, from its
// first to its last; empty without device work.
func (r *rankState) span() analyze.Interval {
	var iv analyze.Interval
	for i, d := range r.res.Devices {
		if i == 0 || d.Start < iv.Start {
			iv.Start = d.Start
		}
		iv.End = max(iv.End, d.End)
	}
	if len(r.res.Devices) == 0 {
		return iv
	}
	return analyze.Interval{Start: iv.Start + r.off, End: iv.End + r.off}
}

// apart refuses the job when a rank's device work overlaps no other
// rank's in time (ErrNotOneJob), naming it and the rank nearest to it.
func (j *analysis) apart() error {
	spans := make([]analyze.Interval, len(j.ranks))
	for i, r := range j.ranks {
		spans[i] = r.span()
	}
	for i, a := range spans {
		if a.End <= a.Start {
			continue
		}
		near, dist := -1, int64(0)
		for k, b := range spans {
			if k == i || b.End <= b.Start {
				continue
			}
			if a.Start < b.End && b.Start < a.End {
				near = -1
				break
			}
			if d := max(b.Start-a.End, a.Start-b.End); near < 0 || d < dist {
				near, dist = k, d
			}
		}
		if near >= 0 {
			return apartError(j.ranks[i], j.ranks[near], dist)
		}
	}
	return nil
}

// apartError says that ranks r and o, dist apart in time, are not one
// job's.
func apartError(r, o *rankState, dist int64) error {
	first, second := r, o
	if o.span().Start < r.span().Start {
		first, second = o, r
	}
	return fmt.Errorf("%s and %s: %w: their device work does not overlap in time (the second's starts %s after the first's ends) and no collective aligns their clocks; expected the ranks of one job, traced together: analyse each trace on its own (--no-job)",
		first.name(), second.name(), ErrNotOneJob, human.Duration(dist))
}

// name names the rank in errors: what it was read from.
func (r *rankState) name() string { return cmp.Or(r.input(), fmt.Sprintf("rank %d", r.num)) }
