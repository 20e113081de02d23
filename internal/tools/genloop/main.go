// Command genloop writes a large generated training loop for benchmarks:
// steps on several GPUs (host ops or NVTX ranges, runtime launches with
// correlation ids, kernels, syncs, step annotations) from the test-trace
// writers, in the format each output's name asks for (.xplane.pb, .sqlite,
// .json). The same loop in two formats measures two readers on the same
// events.
//
//	go run ./internal/tools/genloop -steps 8000 -kernels 400 big.xplane.pb
//	go run ./internal/tools/genloop -steps 500 -devices 1 big.sqlite big.json
//
// The output is deterministic for given flags. scripts/bench.sh and
// scripts/bench-nsight.sh use it.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// writers are the formats genloop writes, by the suffix of the output.
var writers = []struct {
	suffix string
	write  func(io.Writer, *tracetest.Spec) error
}{
	{".xplane.pb", tracetest.WriteXPlane},
	{".sqlite", tracetest.WriteNsight},
	{".json", tracetest.WriteChrome},
}

func main() {
	steps := flag.Int("steps", 2000, "training steps")
	kernels := flag.Int("kernels", 400, "kernels per step and device")
	devices := flag.Int("devices", 2, "GPUs")
	flag.Parse()
	if flag.NArg() == 0 || *steps < 1 || *kernels < 1 || *devices < 1 {
		fmt.Fprintln(os.Stderr, "usage: genloop [-steps N] [-kernels N] [-devices N] FILE.{xplane.pb,sqlite,json}...")
		os.Exit(2)
	}
	s := tracetest.Loop{
		Steps: *steps, Input: 500_000, Dispatch: 20_000, Kernels: *kernels,
		Compute: 30_000, Devices: *devices, Sync: true,
	}.Spec()
	for _, path := range flag.Args() {
		if err := write(path, s); err != nil {
			fmt.Fprintf(os.Stderr, "genloop: %v\n", err)
			os.Exit(1)
		}
	}
	fmt.Fprintf(os.Stderr, "genloop: %d events\n", len(s.Events))
}

// write writes s to path in the format its suffix names, through a
// temporary file so that an interrupted run leaves no half-written input
// to be reused.
func write(path string, s *tracetest.Spec) error {
	for _, w := range writers {
		if !strings.HasSuffix(path, w.suffix) {
			continue
		}
		return render.WriteFile(path, func(f io.Writer) error {
			bw := bufio.NewWriterSize(f, 1<<20)
			if err := w.write(bw, s); err != nil {
				return err
			}
			return bw.Flush()
		})
	}
	return fmt.Errorf("%s: want a name ending .xplane.pb, .sqlite or .json", path)
}
