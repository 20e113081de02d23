package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/check"
	"github.com/tracegap/tracegap/internal/inputs"
	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/internal/untrusted"
)

func init() {
	commands["check"] = command{
		summary: "gate CI on captured traces: exit 1 when a rule fails",
		run:     runCheck,
	}
}

// addRuleFlags defines the rule flags on fs, writing into r, which starts
// as check's default rules. The flags are check's Params, which the
// service's query parameters also set.
func addRuleFlags(fs *pflag.FlagSet, r *check.Rules) {
	*r = check.DefaultRules()
	for _, p := range r.Params() {
		f := fs.VarPF(p.Value, p.Name, "", p.Usage)
		if p.Value.Type() == "bool" {
			f.NoOptDefVal = "true" // --allow-no-device alone turns it on
		}
	}
}

// checkKeys are the flags a [check] config section may set.
var checkKeys = flagNames(func(fs *pflag.FlagSet) { addRuleFlags(fs, &check.Rules{}) })

// checkResult is what checking one input gave.
type checkResult struct {
	path     string
	res      *analyze.Result
	err      error
	outcomes []check.Outcome
	seconds  float64
}

func (c *checkResult) failed() bool {
	return slices.ContainsFunc(c.outcomes, func(o check.Outcome) bool { return o.Failed })
}

type checkFlags struct {
	// rules are the rules the flags and the config file give.
	rules    check.Rules
	analysis *analysisFlags
	junit    string
	format   string
	color    string
	jobs     int
	job      *jobFlags
	// sourceRoot is where the traced code sat when it ran (SARIF).
	sourceRoot string
}

const checkUsage = `Usage: tracegap check [flags] FILE|DIR...

Analyses each trace (as analyze does) and holds it against rules: by default
a sequential or data-bound run fails. One line per input: ok, or FAIL with
the rule and the figure; --format github writes workflow annotations, sarif
a code-scanning log, --junit a JUnit file. Rules may also come from a
tracegap.toml or a pyproject.toml [tool.tracegap.check] table (docs/ci.md).

Examples:
  tracegap check profiles/
  tracegap check --max-idle 10% --min-utilization 80% run.pt.trace.json.gz
  tracegap check --fail-on sequential,data-bound,host-bound run.xplane.pb
  tracegap check --format github --junit tracegap.xml profiles/

Exit status: 0 every rule passed, 1 a rule failed, 2 unusable input or usage.

Flags:
`

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
	f := &checkFlags{}
	addRuleFlags(fs, &f.rules)
	f.analysis = addAnalysisFlags(fs)
	fs.StringVar(&f.junit, "junit", "", "also write the results as JUnit XML to this file")
	fs.StringVar(&f.sourceRoot, "source-root", "", `with --format sarif: the folder the traced code ran from ("/workspace/"); files under it are located relative to the repository`)
	fs.StringVar(&f.format, "format", "text", "output: text, github for workflow annotations, or sarif (SARIF 2.1.0 for code scanning: each failure at the Python lines that held the device idle)")
	addColorFlag(fs, &f.color)
	parallelVar(fs, &f.jobs, runtime.GOMAXPROCS(0), "how many files to check at once")
	f.job = addJobFlags(fs)
	if status, done := parseFlags("check", checkUsage, fs, args, stdout, stderr); done {
		return status
	}
	if err := f.finish(fs); err != nil {
		fmt.Fprintf(stderr, "tracegap check: %s\n", safe(err))
		return exitUsage
	}
	hintStdin(fs.Args(), stderr)
	warnSkipped(fs.Args(), stderr)
	var results []checkResult
	if r, ok := f.checkJob(fs.Args()); ok {
		results = []checkResult{r}
	} else {
		f.job.warnClash(stderr)
		results = f.checkAll(fs.Args())
	}
	status := f.print(results, stdout, stderr)
	if f.junit != "" {
		err := writeOutput(f.junit, func(w io.Writer) error {
			return render.WriteJUnit(w, "tracegap check", junitCases(results))
		})
		if err != nil {
			fmt.Fprintf(stderr, "tracegap check: %s\n", safe(err))
			return exitUsage
		}
	}
	return status
}

// finish applies the config file and checks the flags.
func (f *checkFlags) finish(fs *pflag.FlagSet) error {
	if err := f.analysis.configure(fs, map[string][]string{"check": checkKeys}); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("no trace given: expected FILE or DIR arguments")
	}
	if err := stdinOnce(fs.Args()); err != nil {
		return err
	}
	if f.job.job && f.job.noJob {
		return errors.New("--job and --no-job contradict each other: give one")
	}
	if err := validColor(f.color); err != nil {
		return err
	}
	if f.format != "text" && f.format != "github" && f.format != "sarif" {
		return fmt.Errorf("unknown --format %q: expected text, github or sarif", f.format)
	}
	if f.jobs < 1 {
		return fmt.Errorf("invalid --parallel %d: expected 1 or more", f.jobs)
	}
	if err := f.rules.Validate(); err != nil {
		return err
	}
	return f.analysis.validate()
}

// checkAll checks every input, at most f.jobs at a time, and returns the
// results in input order.
func (f *checkFlags) checkAll(args []string) []checkResult {
	outcomes := f.analysis.engine(f.jobs).AnalyzeArgs(context.Background(), args)
	results := make([]checkResult, len(outcomes))
	for i, o := range outcomes {
		results[i] = checkResult{path: o.Path, res: o.Result, err: o.Err, seconds: o.Elapsed.Seconds()}
		if o.Err == nil {
			results[i].outcomes = f.rules.Evaluate(o.Result)
		}
	}
	return results
}

// checkJob checks the inputs as the ranks of one job, as analyze does: when
// --job asks for it, or when they look like one job and --no-job does not
// forbid it. ok reports whether it did. The rules apply to the job as one
// run, whose idle includes the time ranks waited in collectives for the
// slowest one.
func (f *checkFlags) checkJob(args []string) (r checkResult, ok bool) {
	paths, isJob, err := f.job.paths(args)
	switch {
	case !isJob:
		return r, false // checking file by file reports any error
	case err != nil:
		return checkResult{path: strings.Join(args, " "), err: err}, true
	}
	r.path = jobName(paths)
	start := time.Now()
	jr, err := f.analysis.engine(f.jobs).AnalyzeJob(context.Background(), paths)
	r.seconds = time.Since(start).Seconds()
	if err != nil {
		r.err = err
		return r, true
	}
	r.res = &jr.Overall
	r.outcomes = f.rules.Evaluate(r.res)
	return r, true
}

// jobName names a job in check's output: the directory holding every
// rank's trace, or "job (N ranks)" when they are spread over several.
func jobName(paths []string) string {
	dir := inputs.Dir(paths[0])
	for _, p := range paths[1:] {
		if inputs.Dir(p) != dir {
			dir = "."
		}
	}
	if dir == "." {
		return fmt.Sprintf("job (%d ranks)", len(paths))
	}
	return dir
}

// print reports every result in order and returns the exit status: 2 when
// an input was unusable, else 1 when a rule failed, else 0.
func (f *checkFlags) print(results []checkResult, stdout, stderr io.Writer) int {
	if f.format == "sarif" {
		return f.printSARIF(results, stdout, stderr)
	}
	status := exitOK
	// Whether each stream takes colour is asked once, not per line.
	outColor := f.format == "text" && useColor(f.color, stdout)
	errColor := f.format == "text" && useColor(f.color, stderr)
	paint := func(on bool, color, word string) string {
		if !on {
			return word
		}
		return color + word + ansiReset
	}
	for i := range results {
		r := &results[i]
		switch {
		case r.err != nil:
			status = exitUsage
			msg := errorText(r)
			if f.format == "github" {
				// Each line is escaped; GitHub shows %0A as a line break.
				lines := strings.Split(msg, "\n")
				for i, l := range lines {
					lines[i] = untrusted.AnnotationMessage(l)
				}
				fmt.Fprintf(stdout, "::error file=%s,title=tracegap input::%s\n", untrusted.AnnotationProperty(r.path), strings.Join(lines, "%0A"))
			}
			// A job names each unreadable rank on a line of its own; each
			// line is escaped already.
			for _, line := range strings.Split(msg, "\n") {
				fmt.Fprintf(stderr, "%s %s\n", paint(errColor, ansiRed, "ERROR"), line)
			}
		case r.failed():
			if status == exitOK {
				status = exitCheck
			}
			for _, o := range r.outcomes {
				if !o.Failed {
					continue
				}
				if f.format == "github" {
					fmt.Fprintf(stdout, "::error file=%s,title=tracegap %s::%s\n", untrusted.AnnotationProperty(r.path), untrusted.AnnotationProperty(o.Rule), untrusted.AnnotationMessage(r.path+": "+o.Message()))
				} else {
					fmt.Fprintf(stdout, "%s %s: %s\n", paint(outColor, ansiRed, "FAIL"), safe(r.path), safe(o.Message()))
				}
			}
		default:
			rules := "rules"
			if len(r.outcomes) == 1 {
				rules = "rule"
			}
			fmt.Fprintf(stdout, "%s   %s: %s (%s confidence), %d %s passed\n", paint(outColor, ansiGreen, "ok"), safe(r.path), r.res.Verdict, r.res.Confidence, len(r.outcomes), rules)
		}
	}
	return status
}

// errorText is the input error, naming the file once.
func errorText(r *checkResult) string { return inputError(r.path, r.err) }

// junitCases turns the results into one test case per file and rule, and
// one error case per unusable input.
func junitCases(results []checkResult) []render.JUnitCase {
	var cases []render.JUnitCase
	for i := range results {
		r := &results[i]
		if r.err != nil {
			cases = append(cases, render.JUnitCase{Class: r.path, Name: "input", Error: errorText(r), Seconds: r.seconds})
			continue
		}
		for _, o := range r.outcomes {
			c := render.JUnitCase{Class: r.path, Name: o.Rule, Seconds: r.seconds}
			if o.Failed {
				c.Failure = o.Message()
				c.Detail = fmt.Sprintf("%s: verdict %s (%s confidence)\n%s", r.path, r.res.Verdict, r.res.Confidence, strings.Join(r.res.Reasons, "\n"))
			}
			cases = append(cases, c)
		}
	}
	return cases
}

// printSARIF writes the results as one SARIF log and returns the exit
// status text would: 2 for an unusable input, 1 for a failed rule.
func (f *checkFlags) printSARIF(results []checkResult, stdout, stderr io.Writer) int {
	status := exitOK
	files := make([]render.SARIFFile, len(results))
	for i := range results {
		r := &results[i]
		files[i] = render.SARIFFile{Path: r.path, Result: r.res}
		switch {
		case r.err != nil:
			// SARIF is for the code-scanning upload; the log still says
			// what was wrong, as the text format does.
			files[i].Err = errorText(r)
			for _, line := range strings.Split(files[i].Err, "\n") {
				fmt.Fprintf(stderr, "tracegap: %s\n", line)
			}
			status = exitUsage
		case r.failed():
			if status == exitOK {
				status = exitCheck
			}
			for _, o := range r.outcomes {
				if o.Failed {
					files[i].Failures = append(files[i].Failures, render.SARIFFailure{Rule: o.Rule, Message: o.Message()})
				}
			}
		}
	}
	if err := render.WriteSARIF(stdout, version, files, f.sourceRoot); err != nil {
		fmt.Fprintf(stderr, "tracegap check: %s\n", safe(err))
		return exitUsage
	}
	return status
}
