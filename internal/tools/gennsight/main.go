// Command gennsight writes a large generated Nsight Systems SQLite export
// for benchmarks, and the same loop as Kineto JSON beside it to measure
// the two readers on the same events: a training loop on several GPUs
// (NVTX ranges for the ops and steps, runtime launches with correlation
// ids, kernels, syncs) from the test-trace writers.
//
//	go run ./internal/tools/gennsight -steps 500 -kernels 400 -o big.sqlite -chrome big.json
//
// The output is deterministic for given flags.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/tracegap/tracegap/report"
	"github.com/tracegap/tracegap/trace/tracetest"
)

func main() {
	out := flag.String("o", "", "output export (required)")
	chrome := flag.String("chrome", "", "also write the loop as Kineto JSON here")
	steps := flag.Int("steps", 500, "training steps")
	kernels := flag.Int("kernels", 400, "kernels per step and device")
	devices := flag.Int("devices", 1, "GPUs")
	flag.Parse()
	if *out == "" || *steps < 1 || *kernels < 1 || *devices < 1 {
		fmt.Fprintln(os.Stderr, "usage: gennsight -o FILE [-chrome FILE] [-steps N] [-kernels N] [-devices N]")
		os.Exit(2)
	}
	s := tracetest.Loop{
		Steps: *steps, Input: 500_000, Dispatch: 20_000, Kernels: *kernels,
		Compute: 30_000, Devices: *devices, Sync: true,
	}.Spec()
	if err := write(*out, s, tracetest.WriteNsight); err != nil {
		fmt.Fprintf(os.Stderr, "gennsight: %v\n", err)
		os.Exit(1)
	}
	if *chrome != "" {
		if err := write(*chrome, s, tracetest.WriteChrome); err != nil {
			fmt.Fprintf(os.Stderr, "gennsight: %v\n", err)
			os.Exit(1)
		}
	}
	fmt.Printf("%d events\n", len(s.Events))
}

// write writes s to path through a temporary file, so that an interrupted
// run leaves no half-written input to be reused.
func write(path string, s *tracetest.Spec, w func(io.Writer, *tracetest.Spec) error) error {
	return report.WriteFile(path, func(f io.Writer) error {
		bw := bufio.NewWriterSize(f, 1<<20)
		if err := w(bw, s); err != nil {
			return err
		}
		return bw.Flush()
	})
}
