// Command tracegap finds why the accelerator sat idle in a profiler trace.
//
// Usage:
//
//	tracegap [analyze] FILE|DIR...   verdict, idle breakdown, gaps, steps, findings
//	tracegap gaps FILE               every gap as rows
//	tracegap --help                  all commands and flags
//
// The command line lives in internal/cli.
package main

import (
	"os"

	"github.com/tracegap/tracegap/internal/cli"
	_ "github.com/tracegap/tracegap/trace/all"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
