package cli

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/pflag"
)

// debugFlags are hidden flags for profiling tracegap itself:
//
//	tracegap analyze --debug.cpuprofile cpu.pb.gz --debug.memprofile mem.pb.gz big.json
//	go tool pprof -top cpu.pb.gz
//	go tool pprof -sample_index=alloc_space -top mem.pb.gz
type debugFlags struct {
	cpuProfile string
	memProfile string
}

// addDebugFlags defines the debug flags on fs, hidden from --help.
func addDebugFlags(fs *pflag.FlagSet) *debugFlags {
	d := &debugFlags{}
	fs.StringVar(&d.cpuProfile, "debug.cpuprofile", "", "write a CPU profile of the run to this file")
	fs.StringVar(&d.memProfile, "debug.memprofile", "", "write a heap profile at the end of the run to this file")
	_ = fs.MarkHidden("debug.cpuprofile") // the flags were just defined
	_ = fs.MarkHidden("debug.memprofile")
	return d
}

// start starts the CPU profile, if asked for; the returned stop ends it and
// writes the heap profile. stop must be called once, however the command
// ends.
func (d *debugFlags) start() (stop func() error, err error) {
	var cpu *os.File
	if d.cpuProfile != "" {
		cpu, err = os.Create(d.cpuProfile)
		if err != nil {
			return nil, fmt.Errorf("creating CPU profile: %w", err)
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			cpu.Close()
			return nil, fmt.Errorf("starting CPU profile: %w", err)
		}
	}
	return func() error {
		var errs []error
		if cpu != nil {
			pprof.StopCPUProfile()
			errs = append(errs, cpu.Close())
		}
		if d.memProfile != "" {
			errs = append(errs, writeHeapProfile(d.memProfile))
		}
		return errors.Join(errs...)
	}, nil
}

// writeHeapProfile writes the heap profile, with its allocation totals
// since the start (sample index alloc_space) and what is live at the end
// (inuse_space), after a collection so that the live figures are current.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating heap profile: %w", err)
	}
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("writing heap profile %s: %w", path, err)
	}
	return f.Close()
}
