// Package cli is tracegap's command line: the subcommands, their flags,
// usage text and exit statuses. It holds no policy of its own: inputs go
// through internal/run, rules through check, comparisons through compare,
// rendering through report.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/internal/trace/tracefile"
	_ "github.com/tracegap/tracegap/trace/all"
)

// version is set at build time with (in Python's form, PEP 440, so that
// the binary and pip say the same)
// -ldflags "-X github.com/tracegap/tracegap/internal/cli.version=...".
var version = "0.1.0.dev0"

// command is one subcommand. run gets the arguments after the command name
// and returns an exit status.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands is filled by each subcommand's file in its init.
var commands = map[string]command{}

// Main runs the command line args (without the program name) and returns
// the exit status. An interrupt (SIGINT, SIGTERM) while a command runs
// removes the temporary copies of inputs it made, which can be gigabytes,
// and exits at once with 128 + the signal's number, as shells report a
// process killed by it; serve stops gracefully on them instead.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "serve" {
		defer removeTempsOnSignal()()
	}
	return run(args, stdout, stderr)
}

// removeTempsOnSignal removes the temporary files tracefile.CreateTemp
// made and exits when SIGINT or SIGTERM comes, until the function it
// returns is called.
func removeTempsOnSignal() (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			tracefile.RemoveTemps()
			code := 128 + 2 // SIGINT
			if sig == syscall.SIGTERM {
				code = 128 + 15
			}
			os.Exit(code)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// Exit statuses.
const (
	exitOK    = 0
	exitCheck = 1 // a check rule failed
	exitUsage = 2 // unusable input or bad usage
)

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help":
		usage(stdout)
		return exitOK
	case "help":
		// "tracegap help CMD" is "tracegap CMD --help".
		if len(args) > 1 {
			if cmd, ok := commands[args[1]]; ok {
				return cmd.run([]string{"--help"}, stdout, stdout)
			}
			fmt.Fprintf(stderr, "tracegap: no help for %q: not a command (see tracegap --help)\n", args[1])
			return exitUsage
		}
		usage(stdout)
		return exitOK
	case "-V", "--version", "version":
		fmt.Fprintf(stdout, "tracegap %s\n", version)
		return exitOK
	}
	name, rest := args[0], args[1:]
	cmd, ok := commands[name]
	if !ok {
		// "tracegap FILE" means "tracegap analyze FILE".
		if strings.HasPrefix(name, "-") || looksLikePath(name) {
			name, rest, cmd = "analyze", args, commands["analyze"]
		} else {
			fmt.Fprintf(stderr, "tracegap: unknown command %q (see tracegap --help)\n", name)
			return exitUsage
		}
	}
	return cmd.run(rest, stdout, stderr)
}

// parseFlags parses a command's flags. --help prints usage and the flags
// on stdout (exit 0: "tracegap check --help | less" works); a usage error
// prints one line on stderr (exit 2). done reports that the command is
// over, with status.
func parseFlags(cmd, usage string, fs *pflag.FlagSet, args []string, stdout, stderr io.Writer) (status int, done bool) {
	fs.SetOutput(stderr)
	fs.Usage = func() {} // --help is printed below; errors get one line
	err := fs.Parse(args)
	switch {
	case err == nil:
		return exitOK, false
	case errors.Is(err, pflag.ErrHelp):
		fmt.Fprintf(stdout, "%s%s", usage, flagHelp(fs))
		return exitOK, true
	}
	fmt.Fprintf(stderr, "tracegap %s: %s (see tracegap %s --help)\n", cmd, safe(err), cmd)
	return exitUsage, true
}

// helpWidth is the width help fits.
const helpWidth = 80

// flagHelp lists fs's flags for help, wrapped to helpWidth columns.
func flagHelp(fs *pflag.FlagSet) string { return fs.FlagUsagesWrapped(helpWidth) }

func looksLikePath(s string) bool {
	_, err := os.Stat(s)
	return err == nil || !errors.Is(err, os.ErrNotExist) || strings.ContainsAny(s, "./")
}

func usage(w io.Writer) {
	fmt.Fprint(w, `tracegap: why did the accelerator sit idle?

Usage:
  tracegap [command] [flags] FILE|DIR...

Commands:
`)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, n, commands[n].summary)
	}
	fmt.Fprint(w, `
Examples:
  tracegap analyze testdata/example.pt.trace.json.gz
  tracegap analyze --format json run.xplane.pb
  tracegap analyze logs/plugins/profile/
  tracegap gaps --min-gap 50us trace.json.gz

Run "tracegap help COMMAND" (or "tracegap COMMAND --help") for a command's
flags, "tracegap completion bash|zsh|fish" for shell completion, "tracegap -V"
for the version.
Exit status: 0 success, 1 a check that failed, 2 unusable input or usage.
`)
}
