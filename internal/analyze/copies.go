package analyze

import (
	"cmp"
	"slices"
	"strings"

	"github.com/tracegap/tracegap/trace"
)

// CopyStat sums the window's host-device copies of one kind: a direction
// and the memory on the host side.
type CopyStat struct {
	// Direction is "HtoD", "DtoH", "DtoD" or "PtoP"; empty when the
	// copy's name does not say.
	Direction string
	// Memory is the host memory: "pageable", "pinned", or "device" for
	// a copy between devices; empty when the name does not say.
	Memory string
	Count  int
	// Bytes is the data moved, where the trace gives copy sizes.
	Bytes int64
	// Device is the copies' time on the device.
	Device int64
	// Blocking is set when the copies hold the host until they are done:
	// from or to pageable memory, or device to host. HostBlocked is the
	// time the host spent in their calls.
	Blocking    bool
	HostBlocked int64
	// Idle is the device idle time blamed on the copies' calls (inside
	// them or just after them), or on a blocking call waiting on one of
	// them (aten::item on its cudaMemcpyAsync), averaged over devices.
	Idle int64
	// Top is the copy size, among these, that blocked the host longest;
	// zero when none blocks.
	Top CopySize
}

// Kind names the copy kind as reports show it: "DtoH pageable".
func (c *CopyStat) Kind() string {
	return strings.TrimSpace(cmp.Or(c.Direction, "copy") + " " + c.Memory)
}

// CopySize is the copies of one kind and size.
type CopySize struct {
	Bytes       int64
	Count       int
	HostBlocked int64
	Idle        int64
	// Call is the host call that issued them (cudaMemcpyAsync); Frame
	// the user-code frame it was called from.
	Call  string
	Frame Frame
}

// copyKind reads a copy's direction and host memory from its name, as
// Kineto writes it ("Memcpy DtoH (Device -> Pageable)"), else from its
// flags.
func copyKind(name string, e *trace.Event) (dir, mem string) {
	for _, d := range []string{"HtoD", "DtoH", "DtoD", "PtoP"} {
		if strings.Contains(name, d) {
			dir = d
		}
	}
	if dir == "" && e.Has(trace.FlagDtoH) {
		dir = "DtoH"
	}
	switch {
	case e.Has(trace.FlagPageable):
		mem = "pageable"
	case strings.Contains(name, "Pinned"):
		mem = "pinned"
	case dir == "DtoD" || dir == "PtoP":
		mem = "device"
	}
	return dir, mem
}

// copyStats sums the copies whose call (or, unlinked, whose device start)
// falls in the window's host span, by kind; idle maps copy calls (by index
// in Trace.Events) to the idle blamed on them.
func (a *analyzer) copyStats(idle map[int32]int64, ndev int64) []CopyStat {
	w := a.hostWindow()
	var out []CopyStat
	at := map[[2]string]int{}
	sizes := map[[2]string]map[int64]*CopySize{}
	for _, d := range a.devs {
		for _, tr := range d.tracks {
			evs := a.t.TrackEvents(int(tr))
			for j := range evs {
				e := &evs[j] // not a copy: a pass over every event
				if e.Kind != trace.KindWork || !e.Has(trace.FlagMemcpy) {
					continue
				}
				h := a.links.host(e.Corr)
				start := e.Start
				if h >= 0 {
					start = a.t.Events[h].Start
				}
				if start < w.Start || start >= w.End {
					continue
				}
				dir, mem := copyKind(a.t.Str(e.Name), e)
				k := [2]string{dir, mem}
				i, ok := at[k]
				if !ok {
					i = len(out)
					at[k] = i
					out = append(out, CopyStat{Direction: dir, Memory: mem, Blocking: mem == "pageable" || dir == "DtoH"})
					sizes[k] = map[int64]*CopySize{}
				}
				c := &out[i]
				n := a.t.CopyBytes[e.Corr]
				c.Count++
				c.Bytes += n
				c.Device += e.Dur()
				if h < 0 || !a.links.isBlocking(h) {
					continue
				}
				call := &a.t.Events[h]
				c.HostBlocked += call.Dur()
				c.Idle += idle[h]
				s := sizes[k][n]
				if s == nil {
					th := a.thread(a.trackOf(h))
					s = &CopySize{Bytes: n, Call: a.t.Str(call.Name), Frame: parseFrame(a.t.Str(a.userFrame(th, int(h)-th.lo)))}
					sizes[k][n] = s
				}
				s.Count++
				s.HostBlocked += call.Dur()
				s.Idle += idle[h]
			}
		}
	}
	for k, i := range at {
		for _, s := range sizes[k] {
			if s.HostBlocked > out[i].Top.HostBlocked || s.HostBlocked == out[i].Top.HostBlocked && s.Bytes > out[i].Top.Bytes {
				out[i].Top = *s
			}
		}
		out[i].Idle /= ndev
		out[i].Top.Idle /= ndev
	}
	slices.SortFunc(out, func(x, y CopyStat) int {
		return cmp.Or(cmp.Compare(y.Idle, x.Idle), cmp.Compare(y.HostBlocked, x.HostBlocked), cmp.Compare(x.Kind(), y.Kind()))
	})
	return out
}
