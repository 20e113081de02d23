package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/render"
)

func init() {
	commands["pprof"] = command{
		summary: "write device idle as a pprof profile of host stacks (flame graph)",
		run:     runPprof,
	}
}

var pprofUsage = `Usage: tracegap pprof [flags] FILE|DIR -o idle.pb.gz

A DIR must hold one trace.

Writes a pprof profile whose samples are device-idle nanoseconds (and gap
counts) and whose stacks are the host events the waited-for thread was inside
during each gap, with the cause as the leaf frame, one of
  ` + causeNames() + `.
Step markers are one frame (ProfilerStep#N) with the step's number as a
label. Samples carry device, cause, thread and step labels.
It opens in go tool pprof, Perfetto (ui.perfetto.dev: Open trace file) and
speedscope (speedscope.app: drop the file).

Examples:
  tracegap pprof run.pt.trace.json.gz -o idle.pb.gz
  go tool pprof -http=: idle.pb.gz              # flame graph in a browser
  go tool pprof -top -tagfocus=cause=input idle.pb.gz
  go tool pprof -sample_index=gaps -top idle.pb.gz
  go tool pprof -top -tagfocus='step=^7$' idle.pb.gz

Exit status: 0 success, 2 unusable input or usage.

Flags:
`

// causeNames lists the causes for help: "in-sync, after-sync, ...".
func causeNames() string {
	var names []string
	for _, c := range analyze.Causes() {
		names = append(names, c.String())
	}
	return strings.Join(names, ", ")
}

// pprofEndings are the -o endings pprof writes: a profile, gzipped as
// go tool pprof writes them with .pb.gz.
var pprofEndings = []outputEnding{{".pb", "pprof"}}

func runPprof(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("pprof", pflag.ContinueOnError)
	af := addAnalysisFlags(fs)
	var out string
	fs.StringVarP(&out, "output", "o", "", `write the profile to this file (required; "-" for stdout): .pb.gz, gzipped, or .pb`)
	if status, done := parseFlags("pprof", pprofUsage, fs, args, stdout, stderr); done {
		return status
	}
	if err := af.configure(fs, nil); err != nil {
		fmt.Fprintf(stderr, "tracegap pprof: %s\n", safe(err))
		return exitUsage
	}
	if out == "" {
		fmt.Fprintln(stderr, `tracegap pprof: no output given: expected -o FILE (or -o - for stdout)`)
		return exitUsage
	}
	if _, err := endingFormat("pprof", out, pprofEndings); err != nil {
		fmt.Fprintf(stderr, "tracegap pprof: %s\n", safe(err))
		return exitUsage
	}
	if refuseTerminal("pprof", out, stdout, stderr) {
		return exitUsage
	}
	res, ok := analyzeOneArg("pprof", fs, af, stderr)
	if !ok {
		return exitUsage
	}
	path := fs.Arg(0)
	p, err := render.Profile(res)
	if err != nil {
		fmt.Fprintf(stderr, "tracegap pprof: %s: %s\n", safe(path), safe(err))
		return exitUsage
	}
	if out == "-" {
		err = p.Write(stdout)
	} else {
		err = writeOutput(out, p.WriteUncompressed) // gzipped for .pb.gz
	}
	if err != nil {
		fmt.Fprintf(stderr, "tracegap pprof: %s\n", safe(err))
		return exitUsage
	}
	if out != "-" {
		var idle int64
		for _, g := range res.Gaps {
			idle += g.Dur
		}
		fmt.Fprintf(stderr, "tracegap: wrote %s: %s of device idle in %s; view it with: go tool pprof -http=: %s\n",
			safe(out), human.Duration(idle), human.Count(len(res.Gaps), "gap"), safe(out))
	}
	return exitOK
}
