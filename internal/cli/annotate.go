package cli

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/objects"
	"github.com/tracegap/tracegap/internal/render"
	irun "github.com/tracegap/tracegap/internal/run"
	"github.com/tracegap/tracegap/internal/trace/tracefile"
	"github.com/tracegap/tracegap/internal/trace/trackname"
	"github.com/tracegap/tracegap/trace"
)

func init() {
	commands["annotate"] = command{
		summary: "the trace with its gaps, steps and verdict as tracks, for a viewer",
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
appended to its events. An XPlane input written to OUT.xplane.pb stays an
XPlane, byte for byte, with a "/device:CUSTOM:tracegap" plane appended (a
line of gaps per device and one of steps, their figures as stats), which
XProf and TensorBoard's profile plugin open from a run's folder; written to
OUT.json it becomes Chrome JSON of its device and host tracks (its lines)
with the annotation. OUT is gzipped when its name ends in .gz; the folders it
needs are created.

Examples:
  tracegap annotate run.pt.trace.json.gz -o run.annotated.json.gz
  tracegap annotate --min-gap 100us run.xplane.pb -o run.annotated.json.gz
  tracegap annotate run.xplane.pb \
      -o logs/plugins/profile/annotated/host.xplane.pb

Exit status: 0 success, 2 unusable input or usage.

Flags:
`

func runAnnotate(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("annotate", pflag.ContinueOnError)
	af := addAnalysisFlags(fs)
	var out string
	fs.StringVarP(&out, "output", "o", "", "write the annotated trace to this file (required): .json for Perfetto, or from an XPlane .xplane.pb for XProf and TensorBoard; gzipped if it ends in .gz")
	if status, done := parseFlags("annotate", annotateUsage, fs, args, stdout, stderr); done {
		return status
	}
	if err := af.configure(fs, nil); err != nil {
		fmt.Fprintf(stderr, "tracegap annotate: %s\n", safe(err))
		return exitUsage
	}
	switch {
	case out == "":
		fmt.Fprintln(stderr, "tracegap annotate: no output given: expected -o FILE")
		return exitUsage
	case fs.NArg() != 1:
		fmt.Fprintf(stderr, "tracegap annotate: expected one FILE, got %s (see tracegap annotate --help)\n", human.Count(fs.NArg(), "argument"))
		return exitUsage
	}
	if err := af.validate(); err != nil {
		fmt.Fprintf(stderr, "tracegap annotate: %s\n", safe(err))
		return exitUsage
	}
	xp, err := annotatedFormat(out)
	if err != nil { // said before the input is read
		fmt.Fprintf(stderr, "tracegap annotate: %s\n", safe(err))
		return exitUsage
	}
	path := fs.Arg(0)
	res, err := annotateFile(path, out, xp, af, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tracegap: %s\n", inputError(path, err))
		return exitUsage
	}
	viewer := "https://ui.perfetto.dev or chrome://tracing"
	if xp {
		viewer = "XProf or TensorBoard's profile plugin (as a run's .xplane.pb)"
	}
	fmt.Fprintf(stderr, "tracegap: wrote %s: %s and %s over the trace; open it in %s\n",
		safe(out), human.Count(len(res.Gaps), "gap"), human.Count(len(res.Steps), "step"), viewer)
	return exitOK
}

// errNotAnnotatable refuses an Nsight Systems export: an annotated trace
// is written in the input's format or, from the model, as Chrome JSON
// whose processes and threads the Chrome reader classifies by the names
// Kineto and XProf give them, which an export's tracks do not have.
var errNotAnnotatable = errors.New("an Nsight Systems export cannot be annotated: annotate writes Kineto JSON or XPlane traces only; " +
	"use tracegap analyze --format html for a timeline of the gaps, or open the .nsys-rep in Nsight Systems")

// errAnnotatedAlready refuses a trace annotate wrote: annotated again, it
// would carry two annotations.
var errAnnotatedAlready = errors.New("already carries tracegap's annotation (tracegap annotate wrote it): expected the original trace, which annotate copies with the annotation added")

// annotateFile reads and analyses the trace at path ("-" is standard
// input) as every command reads its input, and writes it, annotated, to
// out, as an XPlane when xp is set, else as Chrome JSON. The warnings of
// reading go to stderr.
func annotateFile(path, out string, xp bool, af *analysisFlags, stderr io.Writer) (*analyze.Result, error) {
	e := af.engine(1)
	in, cleanup, err := annotateInput(path, e.Read.MaxBytes)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	t, release, err := e.ReadTrace(context.Background(), in)
	if err != nil {
		return nil, err
	}
	defer release()
	if t.Format == "nsight" {
		return nil, errNotAnnotatable
	}
	if carriesAnnotation(t) {
		return nil, errAnnotatedAlready
	}
	if xp && t.Format != "xplane" {
		return nil, fmt.Errorf("-o %s asks for an XPlane, which annotate writes from an XPlane input only: expected -o X.json or X.json.gz for this %s trace", out, t.Format)
	}
	var res *analyze.Result
	err = irun.Protect("annotating", func() error {
		if res, err = advice.Analyze(t, e.Analysis); err != nil {
			return err
		}
		for _, w := range t.Warnings {
			fmt.Fprintf(stderr, "tracegap: warning: %s: %s\n", safe(t.Path), safe(w))
		}
		src := &copySource{path: in.Path}
		if err := makeParent(out); err != nil {
			return err
		}
		err := writeOutput(out, func(w io.Writer) error {
			return writeAnnotated(w, out, xp, src, t, res)
		})
		if err != nil && src.err != nil { // the input's fault, not the output's
			return fmt.Errorf("%s: %w", t.Path, src.err)
		}
		return err
	})
	return res, err
}

// carriesAnnotation reports whether t is an annotated trace: it has the
// plane an annotated XPlane adds, or, in Chrome JSON, tracks (of the
// "tracegap" process, read as context) whose events are in the
// annotation's categories. Annotated again, it would carry two.
func carriesAnnotation(t *trace.Trace) bool {
	for i := range t.Tracks {
		tr := &t.Tracks[i]
		if tr.Process == trackname.AnnotationPlane {
			return true
		}
		if tr.Kind == trace.TrackOther && tr.Hi > tr.Lo && strings.HasPrefix(t.Str(t.Cat(tr.Lo)), trackname.AnnotationCategory) {
			return true
		}
	}
	return false
}

// makeParent creates the folders a local output path needs: XProf and
// TensorBoard open an annotated XPlane from a run's folder
// (logs/plugins/profile/RUN/HOST.xplane.pb), which is usually new.
func makeParent(out string) error {
	if out == "-" || objects.IsURL(out) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("creating the folder of %s: %w", out, err)
	}
	return nil
}

// annotateInput returns the input that path names, and what removes what
// it made. A Chrome input is read twice, to analyse it and then to copy it
// through, so a stream (standard input, a pipe, a FIFO), whose bytes come
// once, is first saved to a temporary file, at most maxBytes of it; so is
// an object named by a URL.
func annotateInput(path string, maxBytes int64) (irun.Input, func(), error) {
	name := path
	var r io.Reader = stdin
	if path == "-" {
		name = irun.StdinName
	} else if objects.IsURL(path) {
		o, err := objects.Open(context.Background(), path)
		if err != nil {
			return irun.Input{}, nil, fmt.Errorf("%s: %w", path, err)
		}
		defer o.Close()
		r = o
	} else if st, err := os.Stat(path); err != nil || st.Mode().IsRegular() || st.IsDir() {
		return irun.Input{Path: path}, func() {}, nil // reading it says what is wrong
	} else {
		f, err := os.Open(path)
		if err != nil {
			return irun.Input{}, nil, err
		}
		defer f.Close()
		r = f
	}
	spool, err := tracefile.CreateTemp("", "tracegap-annotate-*")
	if err != nil {
		return irun.Input{}, nil, fmt.Errorf("saving %s to read it twice: %w", name, err)
	}
	cleanup := func() { tracefile.RemoveTemp(spool) }
	if maxBytes <= 0 {
		maxBytes = trace.DefaultMaxBytes
	}
	n, err := io.Copy(spool, io.LimitReader(r, maxBytes+1))
	if err == nil && n > maxBytes {
		err = trace.Limitf("input larger than %d bytes (raise --max-bytes if the trace is genuine)", maxBytes)
	}
	if err != nil {
		cleanup()
		return irun.Input{}, nil, fmt.Errorf("%s: %w", name, err)
	}
	return irun.Input{Path: spool.Name(), Name: name}, cleanup, nil
}

// copySource is the input a Chrome trace is copied through from, which
// keeps the error of reading it apart from those of writing the output.
type copySource struct {
	path string
	err  error
}

// open opens the input, decompressed.
func (c *copySource) open() (io.Reader, func(), error) {
	f, err := os.Open(c.path)
	if err != nil {
		c.err = err
		return nil, nil, err
	}
	r, err := decompressed(f)
	if err != nil {
		f.Close()
		c.err = err
		return nil, nil, err
	}
	return &errNoter{r: r, err: &c.err}, func() { f.Close() }, nil
}

// errNoter notes the first error other than io.EOF that reading r gives.
type errNoter struct {
	r   io.Reader
	err *error
}

func (e *errNoter) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && *e.err == nil {
		*e.err = err
	}
	return n, err
}

// annotatedFormat returns what out's name asks annotate to write: an
// XPlane (.pb, for XProf and TensorBoard's profile plugin), which only an
// XPlane input can give, or Chrome JSON (.json, for Perfetto and
// chrome://tracing); either gzipped with .gz.
func annotatedFormat(out string) (xplane bool, err error) {
	name := strings.TrimSuffix(strings.ToLower(outputName(out)), ".gz")
	switch {
	case strings.HasSuffix(name, ".pb"):
		return true, nil
	case strings.HasSuffix(name, ".json"):
		return false, nil
	}
	return false, fmt.Errorf("-o %s: expected a name ending in .json or .json.gz (Chrome JSON, for Perfetto), or for an XPlane input .xplane.pb or .xplane.pb.gz (for XProf and TensorBoard)", out)
}

// writeAnnotated writes the annotated trace to w, as an XPlane when xp is
// set (writeOutput gzips it when the output name says so). A complete Chrome JSON input
// is copied through from src, and so is an XPlane annotated as an XPlane.
func writeAnnotated(w io.Writer, out string, xp bool, src *copySource, t *trace.Trace, res *analyze.Result) error {
	if xp {
		r, closeSrc, err := src.open()
		if err != nil {
			return err
		}
		defer closeSrc()
		return render.AnnotateXPlane(w, r, t, res)
	}
	if t.Format != "chrome" || t.Truncated || t.Invalid {
		return render.Annotate(w, t, nil, res)
	}
	r, closeSrc, err := src.open()
	if err != nil {
		return err
	}
	defer closeSrc()
	return render.Annotate(w, t, r, res)
}

// decompressed returns r, gunzipped when it starts with gzip's magic bytes.
func decompressed(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if head, _ := br.Peek(2); tracefile.IsGzip(head) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("reading gzip header: %w", err)
		}
		return zr, nil
	}
	return br, nil
}
