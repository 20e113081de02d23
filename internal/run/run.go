// Package run turns inputs into results under limits, for the command line
// and the service alike: it opens an input (a file, a stream, a directory of
// traces), admits it within a memory budget, reads and analyses it, keeps a
// panic in one input from taking the others down, analyses many inputs a
// bounded number at a time, and recognises the ranks of one distributed job.
package run

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/inputs"
	"github.com/tracegap/tracegap/trace"
)

// Engine analyses inputs with one set of options and limits. Fields left
// at zero read with the default limits, one input at a time, without a
// memory budget; Analysis is usually analyze.DefaultOptions(). An Engine
// is safe for concurrent use once set up. Whatever the budget, the
// runtime's soft memory limit follows the inputs being analysed (see
// heapBudget), unless GOMEMLIMIT is set.
type Engine struct {
	// Analysis are the analysis options.
	Analysis analyze.Options
	// Read bounds reading (its Progress is ignored: see Watch).
	Read trace.Options
	// Jobs is how many inputs are read and analysed at once (at least 1).
	Jobs int
	// Budget, when set, admits an input only once its estimated memory
	// fits (see Budget); nil admits everything.
	Budget *Budget
	// Stdin is read for the path "-", named StdinName; nil leaves "-" a
	// file name.
	Stdin io.Reader
	// Watch, when set, is called once per input for that input's
	// trace.Options.Progress.
	Watch func() func(read, total int64)
}

// StdinName names standard input in reports and errors.
const StdinName = "standard input"

// Input is one trace to analyse: a file, or a stream.
type Input struct {
	// Path is the file to read, unless R is set.
	Path string
	// R, when set, is read instead of Path; Size is its size as stored
	// (0 if unknown).
	R    io.Reader
	Size int64
	// Name names the input in errors and reports; empty means Path.
	Name string
	// Format forces a reader ("chrome", "xplane"); empty means sniff.
	Format string
}

func (in Input) name() string {
	if in.Name != "" {
		return in.Name
	}
	return in.Path
}

// Outcome is what analysing one input gave.
type Outcome struct {
	// Path is the input as given, or as found in a directory.
	Path string
	// Result is set when Err is nil.
	Result *analyze.Result
	Err    error
	// Elapsed is the time the input took to read and analyse.
	Elapsed time.Duration
}

// input returns the Input that path names: standard input for "-" when
// the engine has one, else the file.
func (e *Engine) input(path string) Input {
	if path == "-" && e.Stdin != nil {
		return Input{R: e.Stdin, Name: StdinName}
	}
	return Input{Path: path}
}

// Analyze reads and analyses one input. Reading stops early when ctx is
// cancelled, and a cancelled input is not analysed; an analysis, once
// begun, runs to its end. A panic
// while reading or analysing is returned as an error (a *PanicError)
// naming the input.
func (e *Engine) Analyze(ctx context.Context, in Input) (*analyze.Result, error) {
	var res *analyze.Result
	err := Protect("analysing", func() error {
		t, release, opt, err := e.read(ctx, in)
		if err != nil {
			return err
		}
		defer release()
		if err := ctx.Err(); err != nil { // the client went away while it was read
			return fmt.Errorf("%s: %w", t.Path, err)
		}
		if res, err = advice.Analyze(t, opt); err != nil {
			return fmt.Errorf("%s: %w", t.Path, err)
		}
		return nil
	})
	if _, ok := err.(*PanicError); ok { // the other errors name the input already
		return nil, Named(in.name(), err)
	}
	return res, err
}

// AnalyzeFiles analyses every path ("-" is Stdin), at most Jobs at a time,
// and returns the outcomes in the order of paths. One input's error or
// panic is its own outcome: the others are still analysed.
func (e *Engine) AnalyzeFiles(ctx context.Context, paths []string) []Outcome {
	out := make([]Outcome, len(paths))
	for i, p := range paths {
		out[i].Path = p
	}
	e.analyzeOutcomes(ctx, out)
	return out
}

// AnalyzeArgs analyses command-line arguments: files, "-", and
// directories, which expand to the inputs they hold (ExpandArgs). The
// outcomes are in argument order, a directory's traces in its place; an
// argument that cannot be expanded is an outcome with its error.
func (e *Engine) AnalyzeArgs(ctx context.Context, args []string) []Outcome {
	out := expand(args)
	e.analyzeOutcomes(ctx, out)
	return out
}

// analyzeOutcomes fills in every outcome that has no error yet.
func (e *Engine) analyzeOutcomes(ctx context.Context, out []Outcome) {
	each(len(out), e.Jobs, func(i int) {
		o := &out[i]
		if o.Err != nil {
			return
		}
		start := time.Now()
		o.Result, o.Err = e.Analyze(ctx, e.input(o.Path))
		o.Elapsed = time.Since(start)
	})
}

// expand turns arguments into outcomes to fill in, one per trace.
func expand(args []string) []Outcome {
	var out []Outcome
	for _, a := range args {
		if !inputs.IsDir(a) {
			out = append(out, Outcome{Path: a}) // reading it says what is wrong
			continue
		}
		paths, _, err := ExpandArgs([]string{a})
		if err != nil {
			out = append(out, Outcome{Path: a, Err: err})
			continue
		}
		for _, p := range paths {
			out = append(out, Outcome{Path: p})
		}
	}
	return out
}

// each calls f(i) for every i from 0 to n-1, at most jobs at once (at
// least one), and returns when every call has returned. It is the one
// bounded fan-out of the package: callers protect f against panics.
func each(n, jobs int, f func(i int)) {
	sem := make(chan struct{}, max(jobs, 1))
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f(i)
		})
	}
	wg.Wait()
}
