package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/internal/analyze/job"
	"github.com/tracegap/tracegap/internal/human"
)

// The per-rank phase of a job is a command of its own rather than a flag
// of analyze: it takes one trace and writes no report, so none of
// analyze's report flags apply, and its output is an input of analyze's
// job mode. One trace per run is what a task of an array job has.

func init() {
	commands["summarize"] = command{
		summary: "summarize one rank's trace for a job analysed in two phases",
		run:     runSummarize,
	}
}

const summarizeUsage = `Usage: tracegap summarize [flags] TRACE -o SUMMARY

Analyses one rank of a distributed job and writes what the job analysis needs
of it to SUMMARY, JSON of a few KB to a few MB, gzip-compressed for a name
ending in .gz (the format: docs/jobs.md). Run it where each rank's trace is,
one task per rank (a Slurm array job, a Kubernetes Indexed Job, xargs -P),
then analyse the job from the summaries (a directory given to analyze or check
is read for its *.summary.json.gz files): the verdict, stragglers and
collective waits are those of analysing the traces together. Give both phases
the same analysis flags: a summary made with other options is refused.

Examples:
  tracegap summarize rank3.pt.trace.json.gz -o summaries/rank3.summary.json.gz
  tracegap analyze summaries/

Exit status: 0 success, 2 unusable input or usage.

Flags:
`

func runSummarize(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("summarize", pflag.ContinueOnError)
	af := addAnalysisFlags(fs)
	var out string
	fs.StringVarP(&out, "output", "o", "", `write the summary to this file (atomically): .json.gz, gzipped, or .json; "-" is stdout (gzipped)`)
	if status, done := parseFlags("summarize", summarizeUsage, fs, args, stdout, stderr); done {
		return status
	}
	if err := af.configure(fs, nil); err != nil {
		fmt.Fprintf(stderr, "tracegap summarize: %s\n", safe(err))
		return exitUsage
	}
	if err := summarizeArgs(fs, af, out); err != nil {
		fmt.Fprintf(stderr, "tracegap summarize: %s\n", safe(err))
		return exitUsage
	}
	if refuseTerminal("summarize", out, stdout, stderr) {
		return exitUsage
	}
	s, err := af.engine(1).SummarizeFile(context.Background(), fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "tracegap: %s\n", inputError(fs.Arg(0), err))
		return exitUsage
	}
	if out == "-" {
		err = job.WriteSummary(stdout, s)
	} else {
		err = writeOutput(out, func(w io.Writer) error { return writePlainSummary(w, s) }) // gzipped for .gz
	}
	if err != nil {
		fmt.Fprintf(stderr, "tracegap summarize: %s\n", safe(err))
		return exitUsage
	}
	return exitOK
}

// summarizeArgs checks summarize's arguments: one trace, an output, valid
// options.
func summarizeArgs(fs *pflag.FlagSet, af *analysisFlags, out string) error {
	switch {
	case fs.NArg() != 1:
		return fmt.Errorf("expected one TRACE, got %s (see tracegap summarize --help)", human.Count(fs.NArg(), "argument"))
	case out == "":
		return errors.New("no -o given: expected the file to write the summary to, or - for stdout")
	}
	if _, err := endingFormat("summarize", out, summaryEndings); err != nil {
		return err
	}
	return af.validate()
}

// summaryEndings are the -o endings summarize writes: JSON, gzipped with
// .gz (as a directory of rank summaries holds them, *.summary.json.gz).
var summaryEndings = []outputEnding{{".json", "json"}}

// writePlainSummary writes s as uncompressed JSON: job.WriteSummary
// gzips, and a summary is small (a few KB to a few MB).
func writePlainSummary(w io.Writer, s *job.Summary) error {
	var buf bytes.Buffer
	if err := job.WriteSummary(&buf, s); err != nil {
		return err
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		return err
	}
	_, err = io.Copy(w, zr)
	return err
}
