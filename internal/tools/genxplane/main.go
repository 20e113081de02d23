// Command genxplane writes a large generated XPlane trace for benchmarks: a
// training loop on several GPUs (host ops, launches with correlation ids,
// kernels, syncs, step annotations) from the test-trace writer.
//
//	go run ./internal/tools/genxplane -steps 2000 -kernels 400 -o big.xplane.pb
//
// The output is deterministic for given flags. scripts/bench.sh uses it.
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
	out := flag.String("o", "", "output file (required)")
	steps := flag.Int("steps", 2000, "training steps")
	kernels := flag.Int("kernels", 400, "kernels per step and device")
	devices := flag.Int("devices", 2, "GPUs")
	flag.Parse()
	if *out == "" || *steps < 1 || *kernels < 1 || *devices < 1 {
		fmt.Fprintln(os.Stderr, "usage: genxplane -o FILE [-steps N] [-kernels N] [-devices N]")
		os.Exit(2)
	}
	if err := write(*out, *steps, *kernels, *devices); err != nil {
		fmt.Fprintf(os.Stderr, "genxplane: %v\n", err)
		os.Exit(1)
	}
}

// write simulates the loop and writes it to path, through a temporary file
// so that an interrupted run leaves no half-written input to be reused.
func write(path string, steps, kernels, devices int) error {
	s := tracetest.Loop{
		Steps: steps, Input: 500_000, Dispatch: 20_000, Kernels: kernels,
		Compute: 30_000, Devices: devices, Sync: true,
	}.Spec()
	return report.WriteFile(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		if err := tracetest.WriteXPlane(bw, s); err != nil {
			return err
		}
		return bw.Flush()
	})
}
