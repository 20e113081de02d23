package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/tracegap/tracegap/internal/advice/jobadvice"
	"github.com/tracegap/tracegap/internal/analyze/job"
	"github.com/tracegap/tracegap/internal/inputs"
	"github.com/tracegap/tracegap/internal/objects"
)

// AnalyzeJob reads every rank's trace or summary ("-" is Stdin), at most
// Jobs at a time, and analyses them as one distributed job
// (AnalyzeJobInputs).
func (e *Engine) AnalyzeJob(ctx context.Context, paths []string) (*job.Result, error) {
	ins := make([]Input, len(paths))
	for i, p := range paths {
		ins[i] = e.input(p)
	}
	return e.AnalyzeJobInputs(ctx, ins)
}

// AnalyzeJobInputs analyses the inputs as the ranks of one distributed
// job, in two phases: each rank's summary is read from a summary file
// (job.ReadSummary) or made from its trace (Summarize), at most Jobs at a
// time, and the summaries are merged (job.Merge). A trace is dropped once
// summarized, so that no more than Jobs ranks' events are held at once,
// each admitted by the budget on its own; the merge holds the summaries.
// Every input that cannot be read is named in the error, one line each.
func (e *Engine) AnalyzeJobInputs(ctx context.Context, ins []Input) (*job.Result, error) {
	if len(ins) == 1 {
		in, head, closeIn, err := peek(ins[0])
		if err == nil {
			defer closeIn()
			if job.LooksLikeSummary(head) {
				return nil, Named(in.name(), ErrSummaryAlone)
			}
			ins = []Input{in}
		}
	}
	sums := make([]*job.Summary, len(ins))
	errs := make([]error, len(ins))
	each(len(ins), e.Jobs, func(i int) {
		in := ins[i]
		err := Protect("reading", func() error {
			var err error
			sums[i], err = e.rankSummary(ctx, in)
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
		if jr, err = job.Merge(sums, e.Analysis); err == nil {
			jobadvice.Add(jr)
		}
		return err
	})
	if err == nil {
		nameURLJob(jr)
	}
	return jr, err
}

// nameURLJob names a job whose ranks' inputs are objects by the URL of
// the directory they share: the merge names a job by filepath.Dir of its
// first rank's input when every rank's is in one directory, which would
// take a URL apart.
func nameURLJob(jr *job.Result) {
	if len(jr.Ranks) == 0 {
		return
	}
	first := jr.Ranks[0].From
	if objects.IsURL(first) && jr.Overall.Source.Path == filepath.Dir(first) {
		jr.Overall.Source.Path = objects.Dir(first)
	}
}

// rankSummary returns the summary of one rank: read, when the input is a
// summary, else made from its trace.
func (e *Engine) rankSummary(ctx context.Context, in Input) (*job.Summary, error) {
	in, head, closeIn, err := peek(in)
	if err != nil {
		return nil, openError(in, err)
	}
	defer closeIn()
	if !job.LooksLikeSummary(head) {
		return e.Summarize(ctx, in)
	}
	s, err := job.ReadSummary(in.R)
	if err == nil {
		// Checked here, not only by the merge, to name the summary's file
		// rather than the trace it was made from.
		err = s.CheckOptions(e.Analysis)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.name(), err)
	}
	s.File = in.name()
	return s, nil
}

// ErrSummaryAlone is the error for a rank's summary given where it cannot
// be read: alone, or to be analysed on its own.
var ErrSummaryAlone = errors.New("a rank's summary (tracegap summarize), read only as a rank of a job with the other ranks' summaries (at least 2): give every rank's summary, or this rank's trace to analyse it alone")

// summaryFiles are the rank summaries that a directory of inputs may hold.
var summaryFiles = inputs.Aside{Suffix: job.SummarySuffix, Title: "rank summaries"}

// ExpandArgs turns command-line arguments into input files, as every
// command finds its inputs: a file or "-" stays; a directory expands to
// the rank summaries it holds (job.SummarySuffix), else to its traces
// (inputs.ExpandSkipping, whose skipped files it returns for a warning).
func ExpandArgs(args []string) ([]string, []inputs.Skipped, error) {
	return inputs.ExpandSkipping(args, summaryFiles)
}

// JobInputs reports whether paths are analysed as one job unless a flag
// says otherwise: when any is a rank's summary, which is read only so, or
// when they look like the ranks of one job (LooksLikeJob). Each input is
// looked into once.
func JobInputs(paths []string) bool {
	isJob, _ := JobInputsClash(paths)
	return isJob
}

// RankClash is two inputs that name the same rank of a job of more than
// one rank: an annotated or renamed copy of a rank's trace, or ranks of
// two runs.
type RankClash struct {
	First, Second string
	Rank, World   int
}

// JobInputsClash is JobInputs that also returns, when the inputs are not
// a job, the first two that name the same rank of a world of more than
// one rank (nil when none do).
func JobInputsClash(paths []string) (bool, *RankClash) {
	heads := lookIntoAll(paths)
	for _, h := range heads {
		if h.summary {
			return true, nil
		}
	}
	if len(heads) < 2 {
		return false, nil
	}
	ranks := newRankSet()
	for i, h := range heads {
		if !ranks.add(h) {
			return false, clashOf(paths, heads, i)
		}
	}
	return true, nil
}

// clashOf returns the clash of input i with an earlier input naming the
// same rank of a world of more than one, or nil.
func clashOf(paths []string, heads []inputHead, i int) *RankClash {
	h := heads[i]
	if !h.ranked || h.world < 2 {
		return nil
	}
	for k, o := range heads[:i] {
		if o.ranked && o.rank == h.rank && o.world == h.world {
			return &RankClash{First: paths[k], Second: paths[i], Rank: h.rank, World: h.world}
		}
	}
	return nil
}

// SummarizeFile summarizes the trace at path ("-" is Stdin) as Summarize
// does.
func (e *Engine) SummarizeFile(ctx context.Context, path string) (*job.Summary, error) {
	return e.Summarize(ctx, e.input(path))
}

// Summarize reads one rank's trace and summarizes it for a job analysis
// (job.Summarize), dropping the trace once done.
func (e *Engine) Summarize(ctx context.Context, in Input) (*job.Summary, error) {
	t, release, opt, err := e.read(ctx, in)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", t.Path, err)
	}
	var s *job.Summary
	err = Protect("summarizing", func() (err error) {
		s, err = job.Summarize(t, opt)
		return err
	})
	if err != nil {
		return nil, Named(t.Path, err)
	}
	return s, nil
}

// peekLen is how much of an input is looked at to tell a summary from a
// trace.
const peekLen = 512

// peek returns the first bytes of the input, the input to read from
// afterwards, and what closes it. A file is opened once here: the input
// returned reads from that open file, so that a pipe or FIFO, which can be
// read only once, continues after its head (a regular file is read at
// offsets and left at its start, for trace.Read's fast path).
func peek(in Input) (Input, []byte, func(), error) {
	closeIn := func() {}
	if in.R == nil {
		r, size, c, err := open(in)
		if err != nil {
			return in, nil, nil, err
		}
		in.Name, in.R, in.Size, closeIn = in.name(), r, size, c
	}
	head := make([]byte, peekLen)
	if f, ok := in.R.(io.ReaderAt); ok && in.Size > 0 && atStart(in.R) {
		n, _ := f.ReadAt(head, 0)
		return in, head[:n], closeIn, nil
	}
	n, _ := io.ReadFull(in.R, head)
	head = head[:n]
	in.R = io.MultiReader(bytes.NewReader(head), in.R)
	return in, head, closeIn, nil
}

// IsSummary reports whether the file at path is a rank's summary
// (job.ReadSummary) rather than a trace. Only a regular file is looked
// into: looking at a pipe's or FIFO's head would consume it.
func IsSummary(path string) bool { return lookInto(path).summary }

// LooksLikeJob reports whether the files are the ranks of one job: at
// least two, each a rank's summary or a trace naming a different rank of
// the same world size in the distributedInfo near its start (where
// PyTorch writes it).
func LooksLikeJob(paths []string) bool {
	if len(paths) < 2 {
		return false
	}
	ranks := newRankSet()
	for _, h := range lookIntoAll(paths) {
		if !ranks.add(h) {
			return false
		}
	}
	return true
}

// rankSet gathers the ranks of one job's inputs.
type rankSet struct {
	ranks map[int]bool
	world int
}

func newRankSet() *rankSet { return &rankSet{ranks: map[int]bool{}, world: -1} }

// add adds the input h, reporting false when it cannot be a rank of the
// job so far: it names no rank, one already seen, or another world size.
// A summary is taken as it is: the merge checks its rank.
func (s *rankSet) add(h inputHead) bool {
	if h.summary {
		return true
	}
	if !h.ranked || s.ranks[h.rank] || (s.world >= 0 && h.world != s.world) {
		return false
	}
	s.ranks[h.rank], s.world = true, h.world
	return true
}

// inputHead is what the start of an input says of it: a rank's summary,
// or a trace naming its rank and world size (ProbeRankReader).
type inputHead struct {
	summary     bool
	ranked      bool
	rank, world int
}

// lookAhead is how many inputs lookIntoAll looks into at once: a job's
// ranks in a bucket are thousands of requests, each waiting on the
// network more than on the machine.
const lookAhead = 16

// lookIntoAll looks into every input (lookInto), lookAhead at a time.
func lookIntoAll(paths []string) []inputHead {
	heads := make([]inputHead, len(paths))
	sem := make(chan struct{}, lookAhead)
	var wg sync.WaitGroup
	for i, p := range paths {
		sem <- struct{}{}
		wg.Go(func() {
			heads[i] = lookInto(p)
			<-sem
		})
	}
	wg.Wait()
	return heads
}

// lookInto opens the input at path once and reads what its start says. A
// path that is not a regular file or an object (a pipe or FIFO, whose head
// looking would consume) or cannot be read says nothing.
func lookInto(path string) inputHead {
	if !objects.IsURL(path) && !Regular(path) {
		return inputHead{}
	}
	in, head, closeIn, err := peek(Input{Path: path})
	if err != nil {
		return inputHead{}
	}
	defer closeIn()
	if job.LooksLikeSummary(head) {
		return inputHead{summary: true}
	}
	var h inputHead
	h.rank, h.world, h.ranked = ProbeRankReader(in.R)
	return h
}
