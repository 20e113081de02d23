package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/check"
	"github.com/tracegap/tracegap/internal/render"
	irun "github.com/tracegap/tracegap/internal/run"
	"github.com/tracegap/tracegap/internal/serve"
	"github.com/tracegap/tracegap/internal/trace/formats"
	"github.com/tracegap/tracegap/trace"
)

// durationFlag is a pflag.Value holding nanoseconds, written as "20us",
// "1.5ms", "2s", "500ns" or "20µs"; a bare number other than 0 is refused,
// since its unit would be a guess.
type durationFlag int64

func (d *durationFlag) String() string { return formatFlagDuration(int64(*d)) }

// Type names the flag's value in --help.
func (d *durationFlag) Type() string { return "duration" }

// Set parses s.
func (d *durationFlag) Set(s string) error {
	ns, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = durationFlag(ns)
	return nil
}

var durationUnits = []struct {
	suffix string
	ns     float64
}{
	{"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9},
}

func parseDuration(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := 0.0 // no unit
	for _, u := range durationUnits {
		if strings.HasSuffix(t, u.suffix) {
			// "ms" also ends in "s": take the longest suffix that fits.
			if u.suffix == "s" && (strings.HasSuffix(t, "ms") || strings.HasSuffix(t, "us") || strings.HasSuffix(t, "ns") || strings.HasSuffix(t, "µs")) {
				continue
			}
			t, mult = strings.TrimSuffix(t, u.suffix), u.ns
			break
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err == nil && mult == 0 && v != 0 {
		return 0, fmt.Errorf("invalid duration %q: no unit; expected a number with a unit (ns, us, ms, s), like 50us", s)
	}
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) || v*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("invalid duration %q: expected a non-negative number with a unit (ns, us, ms, s), like 20us", s)
	}
	return int64(math.Round(v * mult)), nil
}

func formatFlagDuration(ns int64) string {
	switch {
	case ns == 0:
		return "0"
	case ns%1e9 == 0:
		return strconv.FormatInt(ns/1e9, 10) + "s"
	case ns%1e6 == 0:
		return strconv.FormatInt(ns/1e6, 10) + "ms"
	case ns%1e3 == 0:
		return strconv.FormatInt(ns/1e3, 10) + "us"
	}
	return strconv.FormatInt(ns, 10) + "ns"
}

// percentFlag is a pflag.Value holding a fraction, written as "5%" or as a
// fraction below 1, "0.05" (check.ParsePercent).
type percentFlag float64

func (p *percentFlag) String() string {
	return strconv.FormatFloat(float64(*p)*100, 'g', -1, 64) + "%"
}

// Type names the flag's value in --help.
func (p *percentFlag) Type() string { return "percent" }

// Set parses s.
func (p *percentFlag) Set(s string) error {
	v, err := check.ParsePercent(s)
	if err != nil {
		return err
	}
	*p = percentFlag(v)
	return nil
}

// sizeFlag is a pflag.Value holding a byte count, written as "2GiB",
// "500MB" or a bare number of bytes.
type sizeFlag int64

func (s *sizeFlag) String() string { return serve.FormatSize(int64(*s)) }

// Type names the flag's value in --help.
func (s *sizeFlag) Type() string { return "size" }

// Set parses v.
func (s *sizeFlag) Set(v string) error {
	n, err := serve.ParseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

// intFlag is a pflag.Value holding a whole number, whose error says what
// was expected in words (pflag's own quotes strconv).
type intFlag int

func (n *intFlag) String() string { return strconv.Itoa(int(*n)) }

// Type names the flag's value in --help.
func (n *intFlag) Type() string { return "int" }

// Set parses s.
func (n *intFlag) Set(s string) error {
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("expected a whole number, like 4")
	}
	*n = intFlag(v)
	return nil
}

// intVar defines a whole-number flag (short may be "").
func intVar(fs *pflag.FlagSet, p *int, name, short string, value int, usage string) {
	*p = value
	fs.VarP((*intFlag)(p), name, short, usage)
}

// parallelVar defines -j/--parallel, how many inputs run at once, and
// --jobs as its deprecated name: it differed from --job, a distributed
// job's ranks, by a letter.
func parallelVar(fs *pflag.FlagSet, p *int, value int, usage string) {
	intVar(fs, p, "parallel", "j", value, usage)
	fs.VarP((*intFlag)(p), "jobs", "", usage)
	_ = fs.MarkDeprecated("jobs", "use --parallel (-j)")
}

// analysisFlags are the flags every command that analyses traces shares:
// the thresholds and patterns of analyze.Options and the reading limits.
type analysisFlags struct {
	minGap, syncSlack           durationFlag
	syncThr, inputThr, hostThr  percentFlag
	stallThr                    percentFlag
	stepRegex                   string
	syncPatterns, inputPatterns []string
	top                         int
	maxBytes                    int64
	maxMemory                   sizeFlag
	maxEvents                   int
	maxTracks, maxStrings       int
	maxValue                    int64
	inFormat                    string
	// config and isolated choose the config file (see configure).
	config   string
	isolated bool
	// progress, when set, draws reading progress on a terminal.
	progress *progress
}

// addAnalysisFlags defines the shared analysis flags on fs, with the
// documented defaults.
func addAnalysisFlags(fs *pflag.FlagSet) *analysisFlags {
	d := analyze.DefaultOptions()
	f := &analysisFlags{
		minGap:    durationFlag(d.MinGap),
		syncSlack: durationFlag(d.SyncSlack),
		syncThr:   percentFlag(d.SyncThreshold),
		inputThr:  percentFlag(d.InputThreshold),
		hostThr:   percentFlag(d.HostThreshold),
		stallThr:  percentFlag(d.StallThreshold),
	}
	fs.Var(&f.minGap, "min-gap", "shortest device idle attributed on its own")
	fs.Var(&f.syncSlack, "sync-slack", "device work starting this soon after its launch counts as waiting on the host")
	fs.Var(&f.syncThr, "sync-threshold", "share of the window in sync-caused idle that makes a run sequential")
	fs.Var(&f.inputThr, "input-threshold", "share of the window in input-caused idle that makes a run data-bound")
	fs.Var(&f.hostThr, "host-threshold", "share of the window in other host-caused idle that makes a run host-bound")
	fs.Var(&f.stallThr, "stall-threshold", "share of the window in stalled idle (the ending work already queued) that makes a run stalled")
	fs.StringVar(&f.stepRegex, "step-regex", "", "regular expression naming the host events that mark steps")
	fs.StringArrayVar(&f.syncPatterns, "sync-pattern", nil, "extra regular expression for blocking calls (repeatable)")
	fs.StringArrayVar(&f.inputPatterns, "input-pattern", nil, "extra regular expression for input-pipeline events (repeatable)")
	// Only analyze's reports list gaps: the flag stays settable everywhere
	// (an [analysis] section of a config may carry it), but other commands
	// do not offer it in their help.
	intVar(fs, &f.top, "top", "", d.TopGaps, "how many of the longest gaps to show")
	_ = fs.MarkHidden("top")
	if fs.Lookup("max-memory") == nil { // serve has its own
		fs.Var(&f.maxMemory, "max-memory", "memory budget of the inputs analysed at once: refuse an input needing more, by an upper bound from its size after decompression and its format (default: none)")
	}
	f.maxBytes, f.maxValue = trace.DefaultMaxBytes, trace.DefaultMaxValueBytes
	fs.Var((*sizeFlag)(&f.maxBytes), "max-bytes", "refuse inputs larger than this after decompression")
	intVar(fs, &f.maxEvents, "max-events", "", trace.DefaultMaxEvents, "refuse traces with more events than this")
	intVar(fs, &f.maxTracks, "max-tracks", "", trace.DefaultMaxTracks, "refuse traces with more tracks than this (threads, device streams, XPlane planes and lines)")
	intVar(fs, &f.maxStrings, "max-strings", "", trace.DefaultMaxStrings, "refuse traces with more distinct names (or name and category pairs, XPlane metadata entries, or correlation ids of 2^31 and above) than this")
	fs.Var((*sizeFlag)(&f.maxValue), "max-value", "refuse JSON with a value (an event, a string) or run of white space longer than this")
	fs.StringVar(&f.inFormat, "input-format", "", "force the input format ("+strings.Join(formats.Names(), ", ")+") instead of sniffing it")
	fs.StringVar(&f.config, "config", "", "read settings from this file (flags win); default: the first "+check.ConfigName+", or "+check.PyprojectName+" with a [tool.tracegap] table, from the working directory up")
	fs.BoolVar(&f.isolated, "isolated", false, "read no config file")
	return f
}

// validate checks the analysis options and the reading limits.
func (f *analysisFlags) validate() error {
	for _, l := range []struct {
		name string
		v    int64
	}{{"max-bytes", f.maxBytes}, {"max-events", int64(f.maxEvents)}, {"max-tracks", int64(f.maxTracks)}, {"max-strings", int64(f.maxStrings)}, {"max-value", f.maxValue}} {
		if l.v < 0 {
			return fmt.Errorf("invalid --%s %d: expected a positive limit", l.name, l.v)
		}
	}
	return f.options().Validate()
}

// options returns the analysis options the flags describe.
func (f *analysisFlags) options() analyze.Options {
	o := analyze.DefaultOptions()
	o.MinGap = int64(f.minGap)
	o.SyncSlack = int64(f.syncSlack)
	o.SyncThreshold = float64(f.syncThr)
	o.InputThreshold = float64(f.inputThr)
	o.HostThreshold = float64(f.hostThr)
	o.StallThreshold = float64(f.stallThr)
	o.StepRegex = f.stepRegex
	o.SyncPatterns = f.syncPatterns
	o.InputPatterns = f.inputPatterns
	o.TopGaps = f.top
	return o
}

// readOptions returns the reading limits the flags describe.
func (f *analysisFlags) readOptions() trace.Options {
	return trace.Options{MaxBytes: f.maxBytes, MaxEvents: f.maxEvents, MaxTracks: f.maxTracks, MaxStrings: f.maxStrings,
		MaxValueBytes: f.maxValue, Format: f.inFormat}
}

// engine returns the engine that analyses inputs as the flags say, jobs
// inputs at a time; "-" is standard input.
func (f *analysisFlags) engine(jobs int) *irun.Engine {
	e := &irun.Engine{Analysis: f.options(), Read: f.readOptions(), Jobs: jobs, Stdin: stdin, Watch: f.progress.watch}
	if f.maxMemory > 0 {
		e.Budget = irun.NewBudget(int64(f.maxMemory))
	}
	return e
}

// analyzeFile reads and analyses one trace file, or standard input for
// "-" (a trace piped from a bucket or an archive: gzip is still detected,
// but a stream cannot be read in parallel).
func (f *analysisFlags) analyzeFile(path string) (*analyze.Result, error) {
	o := f.engine(1).AnalyzeFiles(context.Background(), []string{path})[0]
	return o.Result, o.Err
}

// stdin is where the input "-" is read from; tests replace it.
var stdin io.Reader = os.Stdin

// outputFormat returns the report format of a command that writes o,
// with --format (the value given, changed when set on the command line or
// by a config) and -o out: out's ending picks it when --format is left
// alone ("-o report.html" writes HTML), and the two must agree when both
// are given; an ending naming no format that can write o is refused.
func outputFormat(fs *pflag.FlagSet, cmd, value, out string, o render.Of) (render.Format, error) {
	if value == "" {
		value = string(render.Text) // analyze's default, left empty for help
	}
	format, err := render.ParseFormat(value)
	if err != nil {
		return "", err
	}
	byName, err := endingFormat(cmd, out, reportEndings(o))
	if err != nil {
		return "", err
	}
	name, err := agreeFormat(fs, string(format), byName, out)
	return render.Format(name), err
}
