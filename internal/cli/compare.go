package cli

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/check"
	"github.com/tracegap/tracegap/internal/compare"
	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/render"
)

func init() {
	commands["compare"] = command{
		summary: "what changed between two runs; the synthetic-data test",
		run:     runCompare,
	}
}

type compareFlags struct {
	analysis   *analysisFlags
	regression check.Limit
	synthetic  bool
	format     string
	out        string
	color      string
}

// compareKeys are the flags a [compare] config section may set.
var compareKeys = []string{"fail-on-regression", "synthetic-base", "format"}

const compareUsage = `Usage: tracegap compare [flags] BASE NEW

Analyses two runs of the same job (each a trace, or a directory holding one)
and says what changed: step time, device idle by cause, the busiest device
work, and whether NEW's verdict differs. A BASE fed synthetic data shows how
much of NEW's idle the input pipeline costs (the synthetic-data test).

Examples:
  tracegap compare main.pt.trace.json.gz branch.pt.trace.json.gz
  tracegap compare --fail-on-regression 5% main.xplane.pb branch.xplane.pb
  tracegap compare --synthetic-base synthetic.json.gz real.json.gz
  tracegap compare --format markdown -o diff.md base.json.gz new.json.gz

Exit status: 0 no regression, 1 a regression past --fail-on-regression,
2 unusable input or usage.

Flags:
`

func runCompare(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("compare", pflag.ContinueOnError)
	f := &compareFlags{analysis: addAnalysisFlags(fs)}
	fs.Var(&f.regression, "fail-on-regression", "exit 1 when the step time grew by more than this, or the attributed idle share by more than this many points")
	fs.BoolVar(&f.synthetic, "synthetic-base", false, "read BASE as a run fed with synthetic data even if it shows input time")
	fs.StringVar(&f.format, "format", "text", "output format: "+render.FormatNames(render.OfComparison))
	fs.StringVarP(&f.out, "output", "o", "", "write the comparison to this file instead of standard output; "+render.SuffixNames(render.OfComparison)+" picks the format, .gz gzips")
	addColorFlag(fs, &f.color)
	if status, done := parseFlags("compare", compareUsage, fs, args, stdout, stderr); done {
		return status
	}
	format, err := f.finish(fs)
	if err != nil {
		fmt.Fprintf(stderr, "tracegap compare: %s\n", safe(err))
		return exitUsage
	}
	base, next, ok := f.analyzeBoth(fs.Arg(0), fs.Arg(1), stderr)
	if !ok {
		return exitUsage
	}
	c := compare.Compare(compare.Summarize(base), compare.Summarize(next), compare.Options{SyntheticBase: f.synthetic})
	var regressions []compare.Regression
	if f.regression.On {
		regressions = c.Check(f.regression.Share)
	}
	opt := textOptions(format, f.out, f.color, stdout)
	write := func(w io.Writer) error { return render.WriteComparison(w, c, format, opt) }
	if f.out != "" {
		err = writeOutput(f.out, write)
	} else {
		err = write(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tracegap compare: %s\n", safe(err))
		return exitUsage
	}
	for _, r := range regressions {
		fmt.Fprintf(stderr, "REGRESSION %s\n", safe(render.RegressionMessage(r)))
	}
	if len(regressions) > 0 {
		return exitCheck
	}
	return exitOK
}

// finish applies the config file and checks the flags and arguments.
func (f *compareFlags) finish(fs *pflag.FlagSet) (render.Format, error) {
	if err := f.analysis.configure(fs, map[string][]string{"compare": compareKeys}); err != nil {
		return "", err
	}
	if fs.NArg() != 2 {
		return "", fmt.Errorf("expected two traces, BASE and NEW, got %s", human.Count(fs.NArg(), "argument"))
	}
	if err := stdinOnce(fs.Args()); err != nil {
		return "", err
	}
	if err := validColor(f.color); err != nil {
		return "", err
	}
	format, err := outputFormat(fs, "compare", f.format, f.out, render.OfComparison)
	if err == nil {
		err = format.For(render.OfComparison)
	}
	if err != nil {
		return "", err
	}
	return format, f.analysis.validate()
}

// errNoDevice refuses a trace without device work where runs are compared
// by their device figures (compare, sweep): there is nothing to compare.
var errNoDevice = errors.New("no device activity in the trace: expected device work to compare (analyze shows what a host-only trace holds)")

// analyzeBoth analyses the two traces (each a file, "-" or a directory
// holding one trace) at once and reports each one that is unusable: once
// when BASE and NEW are the same input.
func (f *compareFlags) analyzeBoth(basePath, newPath string, stderr io.Writer) (base, next *analyze.Result, ok bool) {
	paths := []string{basePath, newPath}
	res := make([]*analyze.Result, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Go(func() { res[i], errs[i] = f.analysis.analyzeOne(p) })
	}
	wg.Wait()
	for i := range res {
		if errs[i] == nil && res[i].Verdict == analyze.NoDevice {
			errs[i] = errNoDevice
		}
	}
	switch {
	case errs[0] != nil && basePath == newPath:
		fmt.Fprintf(stderr, "tracegap compare: BASE and NEW: %s\n", inputError(basePath, errs[0]))
	default:
		for i, err := range errs {
			if err != nil {
				fmt.Fprintf(stderr, "tracegap compare: %s: %s\n", []string{"BASE", "NEW"}[i], inputError(paths[i], err))
			}
		}
	}
	return res[0], res[1], errs[0] == nil && errs[1] == nil
}
