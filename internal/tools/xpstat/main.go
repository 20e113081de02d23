// Command xpstat times the two halves of `tracegap analyze` on one trace:
// reading it (trace.Open) and analysing it (analyze.Analyze), with the
// default options. With a second argument it lists the tracks: index,
// kind, derived, name (escaped) and event count.
//
//	GOMAXPROCS=1 go run ./internal/tools/xpstat bench-out/xprof-tpu-x495.xplane.pb
//
// It is how scripts/bench.sh and "XPlane reader" in docs/performance.md
// split a run's time between the reader and the analysis; build it with
// -pgo=cmd/tracegap/default.pgo to time what `go build ./cmd/tracegap`
// makes.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/trace"
	_ "github.com/tracegap/tracegap/trace/all"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: xpstat TRACE [tracks]")
		os.Exit(2)
	}
	t0 := time.Now()
	t, err := trace.Open(os.Args[1], trace.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "xpstat:", err)
		os.Exit(2)
	}
	t1 := time.Now()
	if _, err := analyze.Analyze(t, analyze.DefaultOptions()); err != nil {
		fmt.Fprintln(os.Stderr, "xpstat:", err)
		os.Exit(2)
	}
	fmt.Println("read", time.Since(t0)-time.Since(t1), "analyze", time.Since(t1))
	if len(os.Args) > 2 {
		for i, tr := range t.Tracks {
			fmt.Printf("%d\t%v\t%v\t%s\t%d\n", i, tr.Kind, tr.Derived, strconv.Quote(tr.Name), len(t.TrackEvents(i)))
		}
	}
}
