// Command genjob writes the ranks of a large generated distributed job for
// benchmarks: tracetest.ManyRanks, every rank different, as gzipped Kineto
// JSON files rank-NNNN.pt.trace.json.gz that name their rank.
//
//	go run ./internal/tools/genjob -ranks 256 -steps 1000 -o job/
//
// The output is deterministic for given flags. scripts/bench-job.sh uses it.
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

func main() {
	out := flag.String("o", "", "output directory (required)")
	ranks := flag.Int("ranks", 256, "ranks")
	steps := flag.Int("steps", 1000, "training steps")
	flag.Parse()
	if *out == "" || *ranks < 2 || *steps < 1 {
		fmt.Fprintln(os.Stderr, "usage: genjob -o DIR [-ranks N] [-steps N]")
		os.Exit(2)
	}
	if err := write(*out, *ranks, *steps); err != nil {
		fmt.Fprintf(os.Stderr, "genjob: %v\n", err)
		os.Exit(1)
	}
}

// write simulates the job and writes each rank to dir, through a temporary
// file so that an interrupted run leaves no half-written rank to be reused.
func write(dir string, ranks, steps int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for r, s := range tracetest.ManyRanks(ranks, steps).Specs() {
		path := filepath.Join(dir, fmt.Sprintf("rank-%04d.pt.trace.json.gz", r))
		if err := writeRank(path, s); err != nil {
			return err
		}
	}
	return nil
}

func writeRank(path string, s *tracetest.Spec) error {
	return render.WriteFile(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		zw, _ := gzip.NewWriterLevel(bw, gzip.BestSpeed)
		if err := tracetest.WriteChrome(zw, s); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		return bw.Flush()
	})
}
