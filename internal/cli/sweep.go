package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/compare"
	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/inputs"
	"github.com/tracegap/tracegap/internal/render"
	irun "github.com/tracegap/tracegap/internal/run"
)

func init() {
	commands["sweep"] = command{
		summary: "runs of one job with different settings: the table, the knee",
		run:     runSweep,
	}
}

const sweepUsage = `Usage: tracegap sweep [flags] RUN RUN...

Analyses a few runs of one job that differ in one setting (loader workers,
batch size) and prints their step times and idle side by side, the knee (the
cheapest setting within --tolerance of the best step time) and the advice.
Each RUN is a trace, a TensorBoard log directory or a directory of one job's
rank traces.

Examples:
  tracegap sweep w1.json.gz w2.json.gz w4.json.gz w8.json.gz
  tracegap sweep --label k=1,2,4,8 run1/ run2/ run4/ run8/
  tracegap sweep --labels bs64,bs128 --format html -o sweep.html a b

Exit status: 0 success, 2 unusable input or usage.

Flags:
`

type sweepFlags struct {
	analysis  *analysisFlags
	label     string
	labels    string
	tolerance float64
	format    string
	out       string
	color     string
}

func runSweep(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	f := &sweepFlags{analysis: addAnalysisFlags(fs)}
	fs.StringVar(&f.label, "label", "", `the setting and its value per run, in order: "k=1,2,4,8" (default: the worker count each trace shows)`)
	fs.StringVar(&f.labels, "labels", "", `a label per run, in order, comma-separated, when the runs differ in something other than a number`)
	f.tolerance = compare.DefaultTolerance
	fs.Var((*percentFlag)(&f.tolerance), "tolerance", `how much slower than the best step time the knee may be ("5%" or 0.05)`)
	fs.StringVar(&f.format, "format", "text", "output format: "+render.FormatNames(render.OfSweep))
	fs.StringVarP(&f.out, "output", "o", "", "write the sweep to this file instead of standard output; "+render.SuffixNames(render.OfSweep)+" picks the format, .gz gzips")
	addColorFlag(fs, &f.color)
	if status, done := parseFlags("sweep", sweepUsage, fs, args, stdout, stderr); done {
		return status
	}
	format, setting, labels, err := f.finish(fs)
	if err != nil {
		fmt.Fprintf(stderr, "tracegap sweep: %s\n", safe(err))
		return exitUsage
	}
	runs, ok := f.analyzeRuns(fs.Args(), stderr)
	if !ok {
		return exitUsage
	}
	if setting, err = labelRuns(runs, setting, labels); err != nil {
		fmt.Fprintf(stderr, "tracegap sweep: %s\n", safe(err))
		return exitUsage
	}
	s, err := compare.NewSweep(setting, runs, f.tolerance)
	if err == nil {
		opt := textOptions(format, f.out, f.color, stdout)
		write := func(w io.Writer) error { return render.WriteSweep(w, s, format, opt) }
		if f.out != "" {
			err = writeOutput(f.out, write)
		} else {
			err = write(stdout)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "tracegap sweep: %s\n", safe(err))
		return exitUsage
	}
	return exitOK
}

// finish checks the flags and arguments and splits the labels.
func (f *sweepFlags) finish(fs *pflag.FlagSet) (render.Format, string, []string, error) {
	if err := f.analysis.configure(fs, nil); err != nil {
		return "", "", nil, err
	}
	if fs.NArg() < 2 {
		return "", "", nil, fmt.Errorf("expected two runs or more, got %d", fs.NArg())
	}
	if err := stdinOnce(fs.Args()); err != nil {
		return "", "", nil, err
	}
	if f.label != "" && f.labels != "" {
		return "", "", nil, fmt.Errorf("--label and --labels both given: expected one")
	}
	setting, list := "", f.labels
	if f.label != "" {
		var ok bool
		if setting, list, ok = strings.Cut(f.label, "="); !ok || setting == "" {
			return "", "", nil, fmt.Errorf("--label %q: expected NAME=V1,V2,... such as k=1,2,4,8", f.label)
		}
	}
	var labels []string
	if list != "" {
		labels = strings.Split(list, ",")
		if len(labels) != fs.NArg() {
			return "", "", nil, fmt.Errorf("%s for %s: expected one per run", human.Count(len(labels), "label"), human.Count(fs.NArg(), "run"))
		}
	}
	if err := validColor(f.color); err != nil {
		return "", "", nil, err
	}
	format, err := outputFormat(fs, "sweep", f.format, f.out, render.OfSweep)
	if err == nil {
		err = format.For(render.OfSweep)
	}
	if err != nil {
		return "", "", nil, err
	}
	return format, setting, labels, f.analysis.validate()
}

// labelRuns labels the runs from labels, else from the worker count each
// trace shows, else from the file names; it returns the setting's name.
func labelRuns(runs []compare.SweepRun, setting string, labels []string) (string, error) {
	if labels != nil {
		for i := range runs {
			runs[i].Label = strings.TrimSpace(labels[i])
		}
		return setting, nil
	}
	known := true
	for i := range runs {
		known = known && runs[i].Summary.WorkersKnown
	}
	for i := range runs {
		sm := &runs[i].Summary
		if known {
			runs[i].Label = strconv.Itoa(sm.Workers)
		} else {
			runs[i].Label = filepath.Base(sm.Path)
		}
	}
	if known {
		return "workers", nil
	}
	return "", nil
}

// analyzeRuns analyses each run: a file, or a directory holding one trace,
// a TensorBoard log directory (its newest run) or a job's rank traces.
func (f *sweepFlags) analyzeRuns(args []string, stderr io.Writer) ([]compare.SweepRun, bool) {
	e := f.analysis.engine(2)
	runs := make([]compare.SweepRun, len(args))
	ok := true
	for i, a := range args {
		res, err := analyzeRun(e, a, stderr)
		if err == nil && res.Verdict == analyze.NoDevice {
			err = errNoDevice
		}
		if err != nil {
			fmt.Fprintf(stderr, "tracegap sweep: %s\n", safe(irun.Named(a, err)))
			ok = false
			continue
		}
		runs[i].Summary = compare.Summarize(res)
		runs[i].Summary.Path = a
	}
	return runs, ok
}

func analyzeRun(e *irun.Engine, arg string, stderr io.Writer) (*analyze.Result, error) {
	ctx := context.Background()
	if !inputs.IsDir(arg) {
		o := e.AnalyzeFiles(ctx, []string{arg})[0]
		return o.Result, o.Err
	}
	paths, _, err := irun.ExpandArgs([]string{arg})
	switch {
	case err != nil:
		return nil, err
	case len(paths) == 0:
		return nil, fmt.Errorf("no traces in the directory: expected a trace, a TensorBoard log directory or rank traces")
	case len(paths) > 1 && irun.JobInputs(paths):
		jr, err := e.AnalyzeJob(ctx, paths)
		if err != nil {
			return nil, err
		}
		return &jr.Overall, nil
	case len(paths) > 1:
		fmt.Fprintf(stderr, "tracegap sweep: %s: %d traces, using the newest run's %s\n", safe(arg), len(paths), safe(paths[0]))
	}
	o := e.AnalyzeFiles(ctx, paths[:1])[0]
	return o.Result, o.Err
}
