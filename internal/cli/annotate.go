package cli

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/analyze"
	irun "github.com/tracegap/tracegap/internal/run"
	"github.com/tracegap/tracegap/report"
	"github.com/tracegap/tracegap/trace"
)

func init() {
	commands["annotate"] = command{
		summary: "write the trace with its gaps, steps and verdict as tracks, for a trace viewer",
		run:     runAnnotate,
	}
}

const annotateUsage = `Usage: tracegap annotate [flags] FILE -o OUT.json.gz

Writes the trace as Chrome trace-event JSON with a "tracegap" process added:
one track per device holding a slice per gap (named by its cause, with its
figures and what the host was doing as args), a track with a slice per step
named by its verdict, and the run's verdict as an instant event. Times are on
the trace's own clock, so the slices line up with the events in Perfetto
(ui.perfetto.dev), chrome://tracing or TensorBoard's trace viewer.

A Chrome JSON input is copied through byte for byte with the annotation
appended to its events. An XPlane input becomes Chrome JSON of its device
and host tracks (its lines) with the annotation. OUT is gzipped when its name ends in .gz.

Examples:
  tracegap annotate run.pt.trace.json.gz -o run.annotated.json.gz
  tracegap annotate --min-gap 100us run.xplane.pb -o run.annotated.json.gz

Exit status: 0 success, 2 unusable input or usage.

Flags:
`

func runAnnotate(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("annotate", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	af := addAnalysisFlags(fs)
	var out string
	fs.StringVarP(&out, "output", "o", "", "write the annotated trace to this file (required; gzipped if it ends in .gz)")
	fs.Usage = func() {} // --help is printed below; errors get one line
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "%s%s", annotateUsage, fs.FlagUsages())
			return exitOK
		}
		fmt.Fprintf(stderr, "tracegap annotate: %s (see tracegap annotate --help)\n", safe(err))
		return exitUsage
	}
	switch {
	case out == "":
		fmt.Fprintln(stderr, "tracegap annotate: no output given: expected -o FILE")
		return exitUsage
	case fs.NArg() != 1:
		fmt.Fprintf(stderr, "tracegap annotate: expected one FILE, got %d arguments (see tracegap annotate --help)\n", fs.NArg())
		return exitUsage
	}
	if err := af.options().Validate(); err != nil {
		fmt.Fprintf(stderr, "tracegap annotate: %s\n", safe(err))
		return exitUsage
	}
	path := fs.Arg(0)
	res, err := annotateFile(path, out, af)
	if err != nil {
		fmt.Fprintf(stderr, "tracegap: %s\n", inputError(path, err))
		return exitUsage
	}
	fmt.Fprintf(stderr, "tracegap: wrote %s: %d gaps and %d steps over the trace; open it in https://ui.perfetto.dev or chrome://tracing\n",
		safe(out), len(res.Gaps), len(res.Steps))
	return exitOK
}

// annotateFile reads and analyses the trace at path and writes it,
// annotated, to out.
func annotateFile(path, out string, af *analysisFlags) (*analyze.Result, error) {
	var res *analyze.Result
	err := irun.Protect("annotating", func() error {
		t, err := trace.Open(path, af.readOptions())
		if err != nil {
			return err
		}
		if res, err = analyze.Analyze(t, af.options()); err != nil {
			return err
		}
		return report.WriteFile(out, func(w io.Writer) error {
			return writeAnnotated(w, out, path, t, res)
		})
	})
	return res, err
}

// writeAnnotated writes the annotated trace to w, gzipped when the output
// name says so. A complete Chrome JSON input is copied through.
func writeAnnotated(w io.Writer, out, path string, t *trace.Trace, res *analyze.Result) error {
	if strings.HasSuffix(out, ".gz") {
		zw := gzip.NewWriter(w)
		if err := writeAnnotated(zw, "", path, t, res); err != nil {
			return err
		}
		return zw.Close()
	}
	if t.Format != "chrome" || t.Truncated {
		return report.Annotate(w, t, nil, res)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	src, err := decompressed(f)
	if err != nil {
		return err
	}
	return report.Annotate(w, t, src, res)
}

// decompressed returns r, gunzipped when it starts with gzip's magic bytes.
func decompressed(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("reading gzip header: %w", err)
		}
		return zr, nil
	}
	return br, nil
}
