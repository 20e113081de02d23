package main

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/analyze"
	"github.com/tracegap/tracegap/analyze/job"
	"github.com/tracegap/tracegap/report"
	"github.com/tracegap/tracegap/trace"
)

// jobFlags are the analyze command's flags for distributed jobs.
type jobFlags struct{ job, noJob bool }

func addJobFlags(fs *pflag.FlagSet) *jobFlags {
	f := &jobFlags{}
	fs.BoolVar(&f.job, "job", false, "analyse the inputs as the ranks of one distributed job: one verdict, a row per rank, the straggler of each step (the default when every trace names its rank and they share a world size)")
	fs.BoolVar(&f.noJob, "no-job", false, "analyse each input on its own, even the ranks of one job")
	return f
}

// runJob analyses the inputs as one job when --job asks for it, or when
// they look like the ranks of one job and --no-job does not forbid it. ok
// reports whether it did; status is then the exit status.
func runJob(args []string, f *analyzeFlags, jf *jobFlags, format report.Format, stdout, stderr io.Writer) (status int, ok bool) {
	if jf.job && jf.noJob {
		fmt.Fprintln(stderr, "tracegap analyze: --job and --no-job contradict each other: give one")
		return exitUsage, true
	}
	if jf.noJob {
		return 0, false
	}
	paths, err := trace.Expand(args)
	if err != nil || (!jf.job && !looksLikeJob(paths)) {
		if jf.job {
			fmt.Fprintf(stderr, "tracegap analyze: %v\n", err)
			return exitUsage, true
		}
		return 0, false // the per-file analysis reports the error
	}
	jr, err := analyzeJobFiles(paths, f.analysis, f.jobs)
	if err != nil {
		fmt.Fprintf(stderr, "tracegap: %v\n", err)
		return exitUsage, true
	}
	if err := writeJobReport(jr, f, format, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "tracegap analyze: %v\n", err)
		return exitUsage, true
	}
	return exitOK, true
}

// looksLikeJob reports whether the files are the ranks of one job: at
// least two, each naming near its start a different rank of the same world
// size.
func looksLikeJob(paths []string) bool {
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

// analyzeJobFiles reads every rank's trace, at most jobs at a time, and
// analyses them as one job. Every file that cannot be read is named in the
// error, one line each.
func analyzeJobFiles(paths []string, af *analysisFlags, jobs int) (*job.Result, error) {
	ts := make([]*trace.Trace, len(paths))
	errs := make([]error, len(paths))
	sem := make(chan struct{}, max(jobs, 1))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() {
				if v := recover(); v != nil {
					errs[i] = fmt.Errorf("internal error while reading: %v", v)
				}
				<-sem
				wg.Done()
			}()
			ts[i], errs[i] = openTrace(p, af.readOptions())
		}()
	}
	wg.Wait()
	var all []error
	for i, err := range errs {
		if err != nil {
			all = append(all, errors.New(inputError(paths[i], err)))
		}
	}
	if len(all) > 0 {
		return nil, errors.Join(all...)
	}
	for _, t := range ts { // all ranks are in memory at once
		defer memLimit.hold(t)()
	}
	return analyzeJob(ts, af.options())
}

// analyzeJob is job.Analyze with a panic turned into an error.
func analyzeJob(ts []*trace.Trace, opt analyze.Options) (jr *job.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			jr, err = nil, fmt.Errorf("internal error while analysing the job: %v", v)
		}
	}()
	return job.Analyze(ts, opt)
}

// writeJobReport renders the job to stdout or, with -o, to a file; with
// --quiet, one line.
func writeJobReport(jr *job.Result, f *analyzeFlags, format report.Format, stdout, stderr io.Writer) error {
	opt := report.Options{Top: f.analysis.top, MaxSteps: f.maxSteps}
	if f.quiet {
		if _, err := fmt.Fprintf(stdout, "%s: %s\n", jr.Overall.Source.Path, report.JobSummary(jr)); err != nil || f.out == "" {
			return err
		}
	}
	if f.out == "" {
		opt.Color = format == report.Text && useColor(f.color, stdout)
		return report.WriteJob(stdout, jr, format, opt)
	}
	err := report.WriteFile(f.out, func(w io.Writer) error { return report.WriteJob(w, jr, format, opt) })
	if err == nil && !f.quiet {
		fmt.Fprintf(stderr, "tracegap: wrote %s job report to %s\n", format, f.out)
	}
	return err
}
