package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/inputs"
	"github.com/tracegap/tracegap/internal/render"
	irun "github.com/tracegap/tracegap/internal/run"
	"github.com/tracegap/tracegap/internal/untrusted"
)

func init() {
	commands["analyze"] = command{
		summary: "verdict, idle by cause, longest gaps, steps, findings (default)",
		run:     runAnalyze,
	}
}

const analyzeUsage = `Usage: tracegap analyze [flags] FILE|DIR...

Reads each profiler trace (PyTorch/Kineto JSON, JAX/TensorFlow XPlane
.xplane.pb, gzipped or not, or an Nsight Systems SQLite export; a directory is
searched for traces; "-" is standard input), finds where each device sat idle
and what the host was doing meanwhile, and says how the run behaved:
parallel, sequential, data-bound, host-bound or stalled (no-device: the trace
holds no device work), with the evidence and the fix.

Examples:
  tracegap analyze run.pt.trace.json.gz
  tracegap analyze --format json -o report.json run.xplane.pb
  tracegap analyze --format html -o report.html run.pt.trace.json.gz
  tracegap analyze --format markdown logs/ >> "$GITHUB_STEP_SUMMARY"
  tracegap analyze --quiet traces/*.json.gz
  gsutil cat gs://bucket/run.xplane.pb | tracegap analyze -
  tracegap analyze --min-gap 50us --input-pattern 'my_loader' run.json.gz

Several inputs are analysed concurrently and reported in input order; as JSON
they make an array of reports, one object per trace read: an array whenever
more than one argument or a directory is given, the object for one file.
An input that cannot be read prints one line on stderr and makes the exit
status 2; the others are still reported. The ranks of a distributed job make
one report (--job); a rank may be given as its summary (tracegap summarize),
and a directory of *.summary.json.gz files as the job's ranks.

Exit status: 0 success, 2 unusable input or usage.

Flags:
`

// analyzeFlags are the flags of the analyze command.
type analyzeFlags struct {
	analysis *analysisFlags
	format   string
	out      string
	quiet    bool
	color    string
	jobs     int
	maxSteps int
	allSteps bool
	// many is set when the arguments could name several traces: JSON is
	// then an array, however many were found or read.
	many bool
}

func runAnalyze(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("analyze", pflag.ContinueOnError)
	f := &analyzeFlags{analysis: addAnalysisFlags(fs)}
	fs.Lookup("top").Hidden = false // analyze's reports list the longest gaps
	jf := addJobFlags(fs)
	dbg := addDebugFlags(fs)
	fs.StringVar(&f.format, "format", "", "report format: "+render.FormatNames(render.OfRuns)+" (default: the one -o's ending names, else text)")
	fs.StringVarP(&f.out, "output", "o", "", "write the report to this file (atomically) instead of stdout; "+render.SuffixNames(render.OfRuns)+" picks the format, .gz gzips")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "print only the one-line verdict of each input")
	addColorFlag(fs, &f.color)
	parallelVar(fs, &f.jobs, runtime.NumCPU(), "how many inputs to analyse at once")
	intVar(fs, &f.maxSteps, "steps", "", 0, "most step rows in text and Markdown reports (0: 40 for text, 12 for Markdown)")
	fs.BoolVar(&f.allSteps, "all-steps", false, "list every step and device in every report (by default JSON and HTML list 1000, HTML draws 64 device timelines)")
	if status, done := parseFlags("analyze", analyzeUsage, fs, args, stdout, stderr); done {
		return status
	}
	format, err := f.check(fs)
	if err != nil {
		fmt.Fprintf(stderr, "tracegap analyze: %s\n", safe(err))
		return exitUsage
	}
	stop, err := dbg.start()
	if err != nil {
		fmt.Fprintf(stderr, "tracegap analyze: %s\n", safe(err))
		return exitUsage
	}
	defer func() {
		if err := stop(); err != nil {
			fmt.Fprintf(stderr, "tracegap analyze: %s\n", safe(err))
		}
	}()
	args = fs.Args()
	hintStdin(args, stderr)
	warnSkipped(args, stderr)
	if status, ok := runJob(args, f, jf, format, stdout, stderr); ok {
		return status
	}
	if wantProgress(format == render.JSON, f.quiet, stderr) {
		f.analysis.progress = newProgress(stderr, time.Now)
	}
	f.many = manyInputs(args)
	outcomes := f.analysis.engine(f.jobs).AnalyzeArgs(context.Background(), args)
	f.analysis.progress.done()
	var results []*analyze.Result
	status := exitOK
	for _, o := range outcomes {
		if o.Err != nil {
			fmt.Fprintf(stderr, "tracegap: %s\n", inputError(o.Path, o.Err))
			status = exitUsage
			continue
		}
		results = append(results, o.Result)
	}
	if len(results) == 0 {
		return status
	}
	if err := f.write(results, format, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "tracegap analyze: %s\n", safe(err))
		return exitUsage
	}
	return status
}

// check validates the flags and returns the report format.
func (f *analyzeFlags) check(fs *pflag.FlagSet) (render.Format, error) {
	if err := f.analysis.configure(fs, nil); err != nil {
		return "", err
	}
	format, err := outputFormat(fs, "analyze", f.format, f.out, render.OfRuns)
	if err == nil {
		err = format.For(render.OfRuns)
	}
	if err != nil {
		return "", err
	}
	if fs.NArg() == 0 {
		return "", errors.New("no trace given: expected FILE or DIR arguments (see tracegap analyze --help)")
	}
	if err := stdinOnce(fs.Args()); err != nil {
		return "", err
	}
	if err := validColor(f.color); err != nil {
		return "", err
	}
	if f.jobs < 1 {
		return "", fmt.Errorf("invalid --parallel %d: expected 1 or more", f.jobs)
	}
	if f.maxSteps < 0 {
		return "", fmt.Errorf("invalid --steps %d: expected 0 (the default) or more", f.maxSteps)
	}
	return format, f.analysis.validate()
}

// write renders the results to stdout or, with -o, to a file.
func (f *analyzeFlags) write(results []*analyze.Result, format render.Format, stdout, stderr io.Writer) error {
	opt := render.Options{Top: f.analysis.top, MaxSteps: f.maxSteps, AllSteps: f.allSteps, Array: f.many}
	if f.quiet {
		// One line per input, for a shell loop or a log.
		w := stdout
		for _, r := range results {
			if _, err := fmt.Fprintf(w, "%s: %s\n", safe(r.Source.Path), safe(render.Summary(r))); err != nil {
				return err
			}
		}
		if f.out == "" {
			return nil
		}
	}
	if f.out == "" {
		opt.Color = format == render.Text && useColor(f.color, stdout)
		opt.Width = textWidth(stdout)
		return render.WriteAll(stdout, results, format, opt)
	}
	err := writeOutput(f.out, func(w io.Writer) error {
		return render.WriteAll(w, results, format, opt)
	})
	if err == nil && !f.quiet {
		fmt.Fprintf(stderr, "tracegap: wrote %s report to %s\n", format, safe(f.out))
	}
	return err
}

// manyInputs reports whether args could name several traces: more than
// one argument, or a directory (which may hold one trace or many).
func manyInputs(args []string) bool {
	return len(args) > 1 || slices.ContainsFunc(args, inputs.IsDir)
}

// addColorFlag adds --color, which every command writing text takes.
func addColorFlag(fs *pflag.FlagSet, mode *string) {
	fs.StringVar(mode, "color", "auto", "colour text output: auto (on a terminal or with FORCE_COLOR, unless NO_COLOR is set or TERM=dumb), always or never")
}

// textOptions are the render options of a text report written to stdout
// (out empty) in colour mode: colour and the terminal's width; none for a
// file or another format.
func textOptions(format render.Format, out, mode string, stdout io.Writer) render.Options {
	if format != render.Text || out != "" {
		return render.Options{}
	}
	return render.Options{Color: useColor(mode, stdout), Width: textWidth(stdout)}
}

// useColor decides whether text output gets ANSI colours: "always" and
// "never" say so; "auto" colours a terminal, or any output when
// FORCE_COLOR is set (CI logs that show colours), unless NO_COLOR is set
// to anything non-empty (https://no-color.org wins over
// https://force-color.org). FORCE_COLOR of "0" or "false" forces nothing.
// A terminal with TERM=dumb (Emacs's shell, some CI runners) shows no
// colours, unless FORCE_COLOR says otherwise.
func useColor(mode string, w io.Writer) bool {
	return colorFor(mode, isTerminal(w))
}

// colorFor is useColor for an output that is a terminal or not.
func colorFor(mode string, terminal bool) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	if fc := os.Getenv("FORCE_COLOR"); fc != "" && fc != "0" && fc != "false" {
		return true
	}
	return os.Getenv("TERM") != "dumb" && terminal
}

// textWidth returns the width a text report written to w fits: COLUMNS
// when it is set to a width (as shells export it, and as a user sets it
// for a pipe), else the terminal's, else 0 for no limit (a file, a pipe).
// Narrower than minTextWidth is taken as minTextWidth.
func textWidth(w io.Writer) int {
	n, err := strconv.Atoi(os.Getenv("COLUMNS"))
	if err != nil || n <= 0 {
		n = ttyWidth(w)
	}
	if n <= 0 {
		return 0
	}
	return max(n, minTextWidth)
}

// minTextWidth is the narrowest width a text report is fitted to.
const minTextWidth = 60

// validColor checks a --color value.
func validColor(mode string) error {
	switch mode {
	case "auto", "always", "never":
		return nil
	}
	return fmt.Errorf("invalid --color %q: expected auto, always or never", mode)
}

// ANSI colours of check's words.
const (
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiReset = "\x1b[0m"
)

// isTerminal reports whether w is a terminal (not merely a character
// device: /dev/null is none).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// refuseTerminal reports on stderr, and returns true, when cmd's output
// out is "-" and stdout a terminal: what cmd writes is gzip-compressed,
// which would garble the terminal, so it asks for a redirection or a file
// instead, as gzip does.
func refuseTerminal(cmd, out string, stdout, stderr io.Writer) bool {
	if out != "-" || !isTerminal(stdout) {
		return false
	}
	fmt.Fprintf(stderr, "tracegap %s: not writing gzip-compressed output to a terminal: redirect stdout (-o - > FILE, or a pipe) or give -o FILE\n", cmd)
	return true
}

// stdinIsTerminal reports whether standard input is a terminal; tests
// replace it.
var stdinIsTerminal = func() bool {
	f, ok := stdin.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// hintStdin says on stderr, when args read standard input ("-") and it is
// a terminal, that a trace is awaited there: else the command would seem
// to hang.
func hintStdin(args []string, stderr io.Writer) {
	if slices.Contains(args, "-") && stdinIsTerminal() {
		fmt.Fprintln(stderr, "tracegap: reading a trace from standard input (a terminal): pipe or redirect one in, or press Ctrl-D to end, Ctrl-C to stop")
	}
}

// stdinOnce returns an error when args name standard input ("-") more
// than once: it can be read only once, and the second reading would find
// it empty after the first had been reported.
func stdinOnce(args []string) error {
	n := 0
	for _, a := range args {
		if a == "-" {
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("standard input (-) given %d times: it can be read only once", n)
	}
	return nil
}

// inputError writes an input's error once prefixed with its path.
func inputError(path string, err error) string {
	if path == "-" {
		path = irun.StdinName
	}
	errs := errorList(err)
	errs[0] = irun.Named(path, errs[0])
	return errorLines(errs)
}

// errorList returns the errors err joins (a job's: one per unreadable
// rank), or err alone.
func errorList(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 0 {
		return slices.Clone(j.Unwrap())
	}
	return []error{err}
}

// errorLines writes errs one a line, each escaped for a terminal.
func errorLines(errs []error) string {
	lines := make([]string, len(errs))
	for i, e := range errs {
		lines[i] = untrusted.Terminal(e.Error())
	}
	return strings.Join(lines, "\n")
}

// safe returns v (an error, a path, a line quoting a trace) as text for a
// terminal or a CI log: its control characters, line breaks included,
// escaped visibly, so that a file or event name cannot drive the terminal
// or start a line of its own.
func safe(v any) string { return untrusted.Terminal(fmt.Sprint(v)) }
