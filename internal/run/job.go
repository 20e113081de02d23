package run

import (
	"context"
	"errors"
	"fmt"

	"github.com/tracegap/tracegap/analyze/job"
	"github.com/tracegap/tracegap/trace"
)

// AnalyzeJob reads every rank's trace ("-" is Stdin), at most Jobs at a
// time, and analyses them as one distributed job (AnalyzeJobInputs).
func (e *Engine) AnalyzeJob(ctx context.Context, paths []string) (*job.Result, error) {
	ins := make([]Input, len(paths))
	for i, p := range paths {
		ins[i] = e.input(p)
	}
	return e.AnalyzeJobInputs(ctx, ins)
}

// AnalyzeJobInputs reads every rank's input, at most Jobs at a time, and
// analyses them as one distributed job. Every rank is held in memory while
// the job is analysed, so the budget admits their needs together. Every
// input that cannot be read is named in the error, one line each.
func (e *Engine) AnalyzeJobInputs(ctx context.Context, ins []Input) (*job.Result, error) {
	ts := make([]*trace.Trace, len(ins))
	releases := make([]func(), len(ins))
	errs := make([]error, len(ins))
	defer func() {
		for _, r := range releases {
			if r != nil {
				r()
			}
		}
	}()
	ranks := *e
	if e.Budget != nil {
		release, err := e.admitJob(ctx, ins)
		if err != nil {
			return nil, err
		}
		defer release()
		ranks.Budget = nil // admitted together above
	}
	each(len(ins), e.Jobs, func(i int) {
		in := ins[i]
		err := Protect("reading", func() error {
			var err error
			ts[i], releases[i], err = ranks.read(ctx, in)
			return err
		})
		if err != nil {
			errs[i] = Named(in.name(), err)
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var jr *job.Result
	err := Protect("analysing the job", func() error {
		var err error
		jr, err = job.Analyze(ts, e.Analysis)
		return err
	})
	return jr, err
}

// admitJob acquires the needs of every rank at once.
func (e *Engine) admitJob(ctx context.Context, ins []Input) (release func(), err error) {
	release, err = e.Budget.Acquire(ctx, e.Need(ins...))
	if err != nil {
		return nil, fmt.Errorf("job of %d ranks: %w", len(ins), err)
	}
	return release, nil
}

// LooksLikeJob reports whether the files are the ranks of one job: at
// least two, each naming a different rank of the same world size in the
// distributedInfo near its start (where PyTorch writes it).
func LooksLikeJob(paths []string) bool {
	if len(paths) < 2 {
		return false
	}
	ranks := map[int]bool{}
	world := -1
	for _, p := range paths {
		r, w, ok := trace.ProbeRank(p)
		if !ok || ranks[r] || (world >= 0 && w != world) {
			return false
		}
		ranks[r], world = true, w
	}
	return true
}
