package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/inputs"
	"github.com/tracegap/tracegap/internal/render"
	irun "github.com/tracegap/tracegap/internal/run"
	"github.com/tracegap/tracegap/internal/untrusted"
)

func init() {
	commands["gaps"] = command{
		summary: "every device gap as rows (TSV or JSON lines), for scripts",
		run:     runGaps,
	}
}

const gapsUsage = `Usage: tracegap gaps [flags] FILE|DIR (a directory holding one trace)

Prints every device gap of at least --min-gap inside the window, in time
order, one per row: as tab-separated values with a header line (the default)
or as JSON lines (--format json, one object per gap with the fields of the
JSON report's top_gaps). Times are integer nanoseconds from the trace's start;
the stack is what the waited-for host thread was mostly doing, outermost
first, joined by ';'. The last column, clock_start_ns, is the gap's start on
the trace's own clock, the time a viewer of the file's timestamps shows: for
a Chrome trace it divided by 1000 is the "ts" (us) Perfetto and
chrome://tracing display; for XPlane, TensorBoard's and XProf's clock.

Examples:
  tracegap gaps run.pt.trace.json.gz | sort -t$'\t' -k3,3nr | head
  tracegap gaps --format json run.xplane.pb | jq 'select(.cause == "input")'
  tracegap gaps --min-gap 1ms -o gaps.tsv run.json.gz

Exit status: 0 success, 2 unusable input or usage.

Flags:
`

func runGaps(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("gaps", pflag.ContinueOnError)
	af := addAnalysisFlags(fs)
	var format, out string
	fs.StringVar(&format, "format", "tsv", "row format: tsv or json (JSON lines)")
	fs.StringVarP(&out, "output", "o", "", "write the rows to this file (atomically) instead of stdout; .tsv or .json picks the format, .gz gzips")
	if status, done := parseFlags("gaps", gapsUsage, fs, args, stdout, stderr); done {
		return status
	}
	if err := af.configure(fs, nil); err != nil {
		fmt.Fprintf(stderr, "tracegap gaps: %s\n", safe(err))
		return exitUsage
	}
	byName, err := endingFormat("gaps", out, gapsEndings)
	if err == nil {
		format, err = agreeFormat(fs, format, byName, out)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tracegap gaps: %s\n", safe(err))
		return exitUsage
	}
	var write func(io.Writer, *analyze.Result) error
	switch format {
	case "tsv":
		write = writeGapsTSV
	case "json", "jsonl":
		write = writeGapsJSON
	default:
		fmt.Fprintf(stderr, "tracegap gaps: unknown --format %q: expected tsv or json\n", format)
		return exitUsage
	}
	res, ok := analyzeOneArg("gaps", fs, af, stderr)
	if !ok {
		return exitUsage
	}
	if out != "" {
		err = writeOutput(out, func(w io.Writer) error { return write(w, res) })
	} else {
		err = write(stdout, res)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tracegap gaps: %s\n", safe(err))
		return exitUsage
	}
	return exitOK
}

// gapsEndings are the -o endings gaps writes.
var gapsEndings = []outputEnding{{".tsv", "tsv"}, {".jsonl", "json"}, {".json", "json"}}

func writeGapsTSV(w io.Writer, res *analyze.Result) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("device\tstart_ns\tdur_ns\tcause\tthread\tstack\tclock_start_ns\n")
	for i := range res.Gaps {
		g := &res.Gaps[i]
		stack := make([]string, 0, 8)
		for _, s := range render.HostStack(res, g) {
			stack = append(stack, strings.ReplaceAll(untrusted.TSV(s), ";", ","))
		}
		bw.WriteString(untrusted.TSV(g.Device) + "\t" +
			strconv.FormatInt(g.Start, 10) + "\t" + strconv.FormatInt(g.Dur, 10) + "\t" +
			g.Cause.String() + "\t" + untrusted.TSV(g.Thread) + "\t" + strings.Join(stack, ";") + "\t" +
			strconv.FormatInt(res.Source.ClockNs(g.Start), 10) + "\n")
	}
	return bw.Flush()
}

func writeGapsJSON(w io.Writer, res *analyze.Result) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(untrusted.JSONWriter(bw))
	enc.SetEscapeHTML(false)
	for i := range res.Gaps {
		if err := enc.Encode(render.JSONGap(res, &res.Gaps[i])); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// analyzeOne analyses the one trace path names: a trace file, "-", or a
// directory holding exactly one trace, as a TensorBoard run directory of
// one host does. A directory of several traces or of rank summaries is a
// job or several runs, which only analyze and check read.
func (f *analysisFlags) analyzeOne(path string) (*analyze.Result, error) {
	if path == "-" || !inputs.IsDir(path) {
		return f.analyzeFile(path) // reading it says what is wrong
	}
	paths, _, err := irun.ExpandArgs([]string{path})
	switch {
	case err != nil:
		return nil, err
	case len(paths) != 1 || irun.IsSummary(paths[0]):
		return nil, fmt.Errorf("a directory of %d inputs, expected one trace: give the trace file (analyze and check read several)", len(paths))
	}
	return f.analyzeFile(paths[0])
}

// analyzeOneArg analyses the one FILE argument of a command that takes
// exactly one, saying on stderr what was wrong otherwise.
func analyzeOneArg(cmd string, fs *pflag.FlagSet, af *analysisFlags, stderr io.Writer) (*analyze.Result, bool) {
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "tracegap %s: expected one FILE, got %s (see tracegap %s --help)\n", cmd, human.Count(fs.NArg(), "argument"), cmd)
		return nil, false
	}
	if err := af.validate(); err != nil {
		fmt.Fprintf(stderr, "tracegap %s: %s\n", cmd, safe(err))
		return nil, false
	}
	path := fs.Arg(0)
	hintStdin(fs.Args(), stderr)
	res, err := af.analyzeOne(path)
	if err != nil {
		fmt.Fprintf(stderr, "tracegap: %s\n", inputError(path, err))
		return nil, false
	}
	return res, true
}
