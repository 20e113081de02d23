package tracetest

import (
	"fmt"
	"strings"

	"github.com/tracegap/tracegap/trace"
)

// Kineto categories of each role, shared by Build and the writers' naming.
var roleCat = [...]string{
	CPUOp:            "cpu_op",
	Runtime:          "cuda_runtime",
	Annotation:       "user_annotation",
	Python:           "python_function",
	Kernel:           "kernel",
	Memcpy:           "gpu_memcpy",
	Memset:           "gpu_memset",
	DeviceAnnotation: "gpu_user_annotation",
}

// Build converts s straight to a trace.Trace, with the mapping the readers
// make: host roles become host events on a track per thread, device roles
// work (or, for DeviceAnnotation, overlays) on a "GPU:<n>" track per stream,
// copies get FlagMemcpy, FlagPageable and FlagDtoH from their Kineto names
// and their Bytes in Trace.CopyBytes,
// host events named "ProfilerStep#N" get FlagStep and host calls naming a
// Memcpy FlagMemcpy. It lets analysis tests
// skip the readers.
func Build(s *Spec) *trace.Trace {
	b := trace.NewBuilder()
	pid := s.PID
	if pid == 0 {
		pid = 1000
	}
	names := map[int64]string{}
	for _, th := range s.Threads {
		names[th.TID] = th.Name
	}
	// Tracks by place, so that building a big spec formats no key per
	// event.
	type place struct {
		device      bool
		id, station int64
	}
	tracks := map[place]int32{}
	b.Grow(len(s.Events))
	for _, e := range s.Events {
		ev := trace.Event{Start: e.Start, Corr: b.Corr(e.Corr), Name: b.Intern(e.Name)}
		b.SetDur(&ev, e.Dur)
		p := place{e.Role.Device(), int64(e.Device), int64(e.Stream)}
		if !p.device {
			p.id, p.station = pid, e.Thread
		}
		tr, ok := tracks[p]
		switch {
		case ok:
		case p.device:
			tr = b.Track(fmt.Sprintf("dev%d/%d", e.Device, e.Stream), trace.Track{
				Kind: trace.TrackDevice, Device: fmt.Sprintf("GPU:%d", e.Device),
				Process: fmt.Sprintf("GPU %d", e.Device), Thread: fmt.Sprintf("stream %d", e.Stream),
				Name: fmt.Sprintf("GPU:%d stream %d", e.Device, e.Stream),
			})
		default:
			tr = b.Track(fmt.Sprintf("%d/%d", pid, e.Thread), trace.Track{
				Kind: trace.TrackHost, Process: fmt.Sprint(pid), Thread: fmt.Sprint(e.Thread),
				Name: threadName(e.Thread, names[e.Thread]),
			})
		}
		tracks[p] = tr
		ev.Kind, ev.Flags = roleKind(e.Role, e.Name)
		if e.Dur == 0 {
			ev.Flags |= trace.FlagInstant
		}
		b.AddCat(tr, ev, b.Intern(roleCat[e.Role]))
		if e.Role == Memcpy {
			b.CopyBytes(ev.Corr, e.Bytes)
		}
	}
	for k, v := range s.DistributedMeta() {
		b.Meta[k] = v
	}
	for k, v := range s.Meta {
		b.Meta[k] = v
	}
	t := b.Finish()
	t.Format = "tracetest"
	return t
}

func threadName(tid int64, name string) string {
	if name == "" {
		return fmt.Sprintf("thread %d", tid)
	}
	return fmt.Sprintf("thread %d (%s)", tid, name)
}

// roleKind returns the kind and flags of an event of role r named name.
func roleKind(r Role, name string) (trace.Kind, trace.Flag) {
	switch r {
	case Kernel, Memset:
		if r == Memset {
			return trace.KindWork, trace.FlagMemset
		}
		return trace.KindWork, 0
	case Memcpy:
		f := trace.FlagMemcpy
		if strings.Contains(name, "Pageable") {
			f |= trace.FlagPageable
		}
		if strings.Contains(name, "DtoH") {
			f |= trace.FlagDtoH
		}
		return trace.KindWork, f
	case DeviceAnnotation:
		return trace.KindOverlay, 0
	}
	// On the host, the name decides whatever the category: Kineto of 2021
	// writes ProfilerStep#N as an "Operator", current Kineto as a
	// "user_annotation".
	return trace.KindHost, trace.HostFlags(name)
}
