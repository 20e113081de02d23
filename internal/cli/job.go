package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/internal/analyze/job"
	"github.com/tracegap/tracegap/internal/render"
	irun "github.com/tracegap/tracegap/internal/run"
)

// jobFlags are the analyze command's flags for distributed jobs; clash,
// once paths has looked, is two inputs naming the same rank, which kept
// them from being one job.
type jobFlags struct {
	job, noJob bool
	clash      *irun.RankClash
}

func addJobFlags(fs *pflag.FlagSet) *jobFlags {
	f := &jobFlags{}
	fs.BoolVar(&f.job, "job", false, "analyse the inputs as the ranks of one distributed job: one verdict, a row per rank, the straggler of each step (the default when every trace names its rank and they share a world size, or when ranks are given as summaries: tracegap summarize)")
	fs.BoolVar(&f.noJob, "no-job", false, "analyse each input on its own, even the ranks of one job")
	return f
}

// paths expands args as every command finds its inputs (irun.ExpandArgs)
// and reports whether they are analysed as one job: when --job asks for
// it, or, unless --no-job forbids it, when irun.JobInputs says so. err is
// expanding's, returned only when --job asks: else the analysis of each
// input reports it.
func (jf *jobFlags) paths(args []string) (paths []string, isJob bool, err error) {
	if jf.noJob {
		return nil, false, nil
	}
	paths, _, err = irun.ExpandArgs(args)
	switch {
	case err != nil:
		return nil, jf.job, err
	case jf.job:
		return paths, true, nil
	}
	if isJob, jf.clash = irun.JobInputsClash(paths); isJob {
		return paths, true, nil
	}
	return nil, false, nil
}

// warnClash says on stderr that two inputs name the same rank, so they
// were not analysed as one job.
func (jf *jobFlags) warnClash(stderr io.Writer) {
	if c := jf.clash; c != nil {
		fmt.Fprintf(stderr, "tracegap: warning: %s and %s both name rank %d of %d: not analysed as one job; give one trace per rank\n",
			safe(c.First), safe(c.Second), c.Rank, c.World)
	}
}

// runJob analyses the inputs as one job when --job asks for it, or when
// they look like the ranks of one job and --no-job does not forbid it. ok
// reports whether it did; status is then the exit status.
func runJob(args []string, f *analyzeFlags, jf *jobFlags, format render.Format, stdout, stderr io.Writer) (status int, ok bool) {
	if jf.job && jf.noJob {
		fmt.Fprintln(stderr, "tracegap analyze: --job and --no-job contradict each other: give one")
		return exitUsage, true
	}
	paths, isJob, err := jf.paths(args)
	if !isJob {
		jf.warnClash(stderr)
		return 0, false
	}
	if err == nil {
		err = format.For(render.OfJob) // before reading a rank
	}
	if err != nil {
		fmt.Fprintf(stderr, "tracegap analyze: %s\n", safe(err))
		return exitUsage, true
	}
	jr, err := f.analysis.engine(f.jobs).AnalyzeJob(context.Background(), paths)
	if err != nil {
		for _, line := range strings.Split(errorLines(errorList(err)), "\n") {
			fmt.Fprintf(stderr, "tracegap: %s\n", line)
		}
		return exitUsage, true
	}
	if err := writeJobReport(jr, f, format, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "tracegap analyze: %s\n", safe(err))
		return exitUsage, true
	}
	return exitOK, true
}

// writeJobReport renders the job to stdout or, with -o, to a file; with
// --quiet, one line.
func writeJobReport(jr *job.Result, f *analyzeFlags, format render.Format, stdout, stderr io.Writer) error {
	opt := render.Options{Top: f.analysis.top, MaxSteps: f.maxSteps, AllSteps: f.allSteps}
	if f.quiet {
		if _, err := fmt.Fprintf(stdout, "%s: %s\n", safe(jr.Overall.Source.Path), safe(render.JobSummary(jr))); err != nil || f.out == "" {
			return err
		}
	}
	if f.out == "" {
		opt.Color = format == render.Text && useColor(f.color, stdout)
		opt.Width = textWidth(stdout)
		return render.WriteJob(stdout, jr, format, opt)
	}
	err := writeOutput(f.out, func(w io.Writer) error { return render.WriteJob(w, jr, format, opt) })
	if err == nil && !f.quiet {
		fmt.Fprintf(stderr, "tracegap: wrote %s job report to %s\n", format, safe(f.out))
	}
	return err
}
