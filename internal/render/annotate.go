package render

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/trace/trackname"
	"github.com/tracegap/tracegap/internal/untrusted"
	"github.com/tracegap/tracegap/trace"
)

// Annotate writes t as Chrome trace-event JSON with the analysis res laid
// over it, on the trace's own clock: a "tracegap" process holding a track
// per device with one slice per gap (named by its cause, its figures and
// what the host was doing as args), a track of steps (one slice each,
// named by its verdict), and the run's verdict as an instant event and a
// process label. A flow leads from each gap to the host event the
// waited-for thread was inside, where it was inside one. A viewer (Perfetto, chrome://tracing, TensorBoard's trace
// viewer) then shows why each gap is there beside the events it is about.
//
// When src is the trace's Chrome JSON (decompressed), its bytes are copied
// through unchanged and the annotation is appended to its traceEvents.
// Otherwise (src nil: an XPlane trace, or JSON that was cut short) its
// device and host tracks and the annotation are written from the model.
func Annotate(w io.Writer, t *trace.Trace, src io.Reader, res *analyze.Result) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	ann := &annotator{t: t, res: res, pid: annotationPid(t)}
	var err error
	if src != nil {
		ann.hosts = sourceIDs(t)
		err = spliceEvents(bw, src, ann.write)
	} else {
		err = ann.writeModel(bw)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// annotationPid returns a numeric pid that no track of t uses: above
// Linux's largest pid, so clear of real processes.
func annotationPid(t *trace.Trace) int {
	used := map[string]bool{}
	for i := range t.Tracks {
		used[t.Tracks[i].Process] = true
	}
	pid := 1 << 24
	for used[strconv.Itoa(pid)] {
		pid++
	}
	return pid
}

// annotator writes the annotation events of one analysed trace.
type annotator struct {
	t   *trace.Trace
	res *analyze.Result
	pid int
	// sep is written before each event: nothing before the first one of
	// an empty array, a comma otherwise.
	sep string
	// lanes counts the extra lanes written (see writeTrack).
	lanes int
	// hosts are the pid and tid each host track has in the JSON written,
	// by track index: flows end on them.
	hosts map[int32][2]any
}

// sourceIDs returns the pid and tid of each host track of t as its Chrome
// JSON wrote them: a number where the string is one.
func sourceIDs(t *trace.Trace) map[int32][2]any {
	ids := map[int32][2]any{}
	for i := range t.Tracks {
		if tr := &t.Tracks[i]; tr.Kind == trace.TrackHost {
			ids[int32(i)] = [2]any{jsonID(tr.Process), jsonID(tr.Thread)}
		}
	}
	return ids
}

// jsonID returns a Chrome pid or tid as it was written: a number, or a
// string when it is not one.
func jsonID(s string) any {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	return s
}

// event writes one trace event.
func (a *annotator) event(w *bufio.Writer, ev map[string]any) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encoding an annotation event: %w", err)
	}
	b = untrusted.JSON(b)
	w.WriteString(a.sep)
	w.WriteString("\n")
	a.sep = ","
	_, err = w.Write(b)
	return err
}

// micros returns ns, relative to the trace's start, as Chrome microseconds
// on the trace's own clock, exact to the nanosecond.
func (a *annotator) micros(ns int64) json.Number { return chromeMicros(a.t.StartNs + ns) }

// chromeMicros writes an absolute time or a duration in nanoseconds as
// microseconds with three decimals.
func chromeMicros(ns int64) json.Number {
	sign := ""
	u := uint64(ns)
	if ns < 0 {
		sign, u = "-", uint64(-ns)
	}
	frac := strconv.FormatUint(u%1000, 10)
	return json.Number(sign + strconv.FormatUint(u/1000, 10) + "." + strings.Repeat("0", 3-len(frac)) + frac)
}

// write writes the annotation events, each preceded by a.sep.
func (a *annotator) write(w *bufio.Writer, empty bool) error {
	if !empty {
		a.sep = ","
	}
	res := a.res
	verdict := string(res.Verdict) + " (" + string(res.Confidence) + " confidence)"
	meta := []map[string]any{
		a.meta("process_name", 0, map[string]any{"name": trackname.AnnotationProcess}),
		a.meta("process_sort_index", 0, map[string]any{"sort_index": -1}),
		a.meta("process_labels", 0, map[string]any{"labels": "verdict: " + verdict}),
		{"ph": "i", "s": "p", "pid": a.pid, "tid": 0, "name": "verdict: " + verdict, "cat": "tracegap.verdict",
			"ts": a.micros(res.Window.Start), "args": map[string]any{"summary": Summary(res), "reasons": res.Reasons}},
	}
	tids := a.deviceTids()
	for i, d := range res.Devices {
		meta = append(meta, a.meta("thread_name", tids[d.ID], map[string]any{"name": "gaps " + d.ID}),
			a.meta("thread_sort_index", tids[d.ID], map[string]any{"sort_index": i}))
	}
	stepTid := len(res.Devices) + 1
	meta = append(meta, a.meta("thread_name", stepTid, map[string]any{"name": "steps"}),
		a.meta("thread_sort_index", stepTid, map[string]any{"sort_index": stepTid}))
	for _, ev := range meta {
		if err := a.event(w, ev); err != nil {
			return err
		}
	}
	for i := range res.Gaps {
		g := &res.Gaps[i]
		if err := a.event(w, a.slice(tids[g.Device], g.Cause.String(), "tracegap.gap", g.Start, g.Dur, a.gapArgs(g))); err != nil {
			return err
		}
		for _, ev := range a.flow(i+1, tids[g.Device], g) {
			if err := a.event(w, ev); err != nil {
				return err
			}
		}
	}
	for i := range res.Steps {
		s := &res.Steps[i]
		name := "step " + strconv.FormatInt(s.Num, 10) + ": " + string(s.Verdict)
		if err := a.event(w, a.slice(stepTid, name, "tracegap.step", s.Start, s.Dur, stepArgs(s))); err != nil {
			return err
		}
	}
	return nil
}

// flow returns the two events of a flow, numbered id, from the gap g on
// the gap track tid to the host event its waited-for thread was inside
// for the longest: the start binds to the gap's slice, the end to the
// slice enclosing the middle of that stretch (Perfetto's and
// chrome://tracing's "bp":"e"). None when the thread was inside nothing
// the trace shows.
func (a *annotator) flow(id, tid int, g *analyze.Gap) []map[string]any {
	host, ok := a.hosts[g.Track]
	if !ok {
		return nil
	}
	var at analyze.Segment
	for s := range a.res.Segments(g) {
		if s.Stack != 0 && s.Dur > at.Dur {
			at = s
		}
	}
	if at.Dur == 0 {
		return nil
	}
	const name, cat = "waited on the host", "tracegap.flow"
	return []map[string]any{
		{"ph": "s", "id": id, "pid": a.pid, "tid": tid, "ts": a.micros(g.Start), "name": name, "cat": cat},
		{"ph": "f", "bp": "e", "id": id, "pid": host[0], "tid": host[1], "ts": a.micros(at.Start + at.Dur/2), "name": name, "cat": cat},
	}
}

// deviceTids numbers the gap tracks: one per device, from 1.
func (a *annotator) deviceTids() map[string]int {
	tids := map[string]int{}
	for i, d := range a.res.Devices {
		tids[d.ID] = i + 1
	}
	return tids
}

func (a *annotator) meta(name string, tid int, args map[string]any) map[string]any {
	return map[string]any{"ph": "M", "pid": a.pid, "tid": tid, "name": name, "args": args}
}

func (a *annotator) slice(tid int, name, cat string, start, dur int64, args map[string]any) map[string]any {
	return map[string]any{"ph": "X", "pid": a.pid, "tid": tid, "name": name, "cat": cat,
		"ts": a.micros(start), "dur": chromeMicros(dur), "args": args}
}

// gapArgs are a gap's figures and what the host was doing.
func (a *annotator) gapArgs(g *analyze.Gap) map[string]any {
	args := map[string]any{
		"idle":        human.Duration(g.Dur),
		"cause":       g.Cause.String(),
		"why":         "the host was " + g.Cause.About(),
		"host_thread": g.Thread,
		"host_doing":  strings.Join(HostStack(a.res, g), " > "),
	}
	for _, c := range analyze.Causes() {
		if d := g.Split.Of(c); d > 0 {
			args[c.Key()+"_ns"] = d
		}
	}
	for s := range a.res.Segments(g) {
		// A runtime segment's call is another thread's runtime work,
		// not a blocking call.
		if s.Sync != 0 && s.Cause != analyze.Runtime {
			args["blocking_call"] = a.res.CallName(s.Sync)
			break
		}
	}
	if n := stepNum(a.res, g.Step); n >= 0 {
		args["step"] = n
	}
	return args
}

// stepArgs are a step's figures.
func stepArgs(s *analyze.Step) map[string]any {
	args := map[string]any{
		"verdict":        string(s.Verdict),
		"step_time":      human.Duration(s.Dur),
		"device_busy_ns": s.DeviceBusy,
		"input_ns":       s.Input,
		"sync_ns":        s.Sync,
	}
	for _, c := range analyze.Causes() {
		if d := s.Idle.Of(c); d > 0 {
			args["idle_"+c.Key()+"_ns"] = d
		}
	}
	return args
}

// errNoEvents says the JSON holds no traceEvents array to add to.
var errNoEvents = errors.New("no complete traceEvents array found, expected Chrome trace-event JSON")

// spliceEvents copies the Chrome JSON src to w byte for byte and, just
// before the bracket that closes its event array (the traceEvents member
// of the top-level object, or the top-level array itself), calls add to
// write more events; add is told whether the array was empty.
func spliceEvents(w *bufio.Writer, src io.Reader, add func(w *bufio.Writer, empty bool) error) error {
	r := bufio.NewReaderSize(src, 1<<16)
	var sc jsonScanner
	done := false
	for {
		b, err := r.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			if done {
				// Past the event array: the trace was whole, and its
				// reader warned of what could not be read after it (a
				// gzip checksum that does not match).
				break
			}
			return err
		}
		if !done && sc.step(b) {
			if err := add(w, sc.empty); err != nil {
				return err
			}
			w.WriteByte('\n')
			done = true
		}
		w.WriteByte(b)
	}
	if !done {
		return errNoEvents
	}
	return nil
}

// jsonScanner follows a JSON document's nesting one byte at a time, enough
// to find where its event array closes. It does not validate: the trace
// has been read already.
type jsonScanner struct {
	stack    []byte // the open containers, '{' or '['
	inString bool
	escaped  bool
	// key collects the string being read at the top level; lastKey is
	// the last one completed.
	key, lastKey []byte
	// events is the depth of the event array once entered (0 before);
	// empty stays set while the array has held nothing but white space.
	events int
	empty  bool
}

// step takes the next byte and reports whether it closes the event array.
func (s *jsonScanner) step(b byte) bool {
	if s.inString {
		switch {
		case s.escaped:
			s.escaped = false
		case b == '\\':
			s.escaped = true
		case b == '"':
			s.inString = false
			if len(s.stack) == 1 {
				s.lastKey = append(s.lastKey[:0], s.key...)
			}
			return false
		}
		if len(s.stack) == 1 {
			s.key = append(s.key, b)
		}
		return false
	}
	if s.events > 0 && len(s.stack) == s.events && s.empty && !isSpace(b) && b != ']' {
		s.empty = false
	}
	switch b {
	case '"':
		s.inString = true
		s.key = s.key[:0]
	case '{', '[':
		s.stack = append(s.stack, b)
		if b == '[' && s.events == 0 && (len(s.stack) == 1 ||
			len(s.stack) == 2 && s.stack[0] == '{' && string(s.lastKey) == "traceEvents") {
			s.events, s.empty = len(s.stack), true
		}
	case '}', ']':
		closes := len(s.stack) == s.events && b == ']'
		if len(s.stack) > 0 {
			s.stack = s.stack[:len(s.stack)-1]
		}
		if closes {
			s.events = -1 // found: never again
			return true
		}
	case ',':
		if len(s.stack) == 1 {
			s.lastKey = s.lastKey[:0]
		}
	}
	return false
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// writeModel writes, as Chrome JSON, the tracks of t the annotation is
// about (see modelTracks) and the annotation. Processes and threads keep
// their names, so that the Chrome reader classifies them as t's reader did.
func (a *annotator) writeModel(w *bufio.Writer) error {
	w.WriteString(`{"displayTimeUnit":"ns","traceEvents":[`)
	pids := map[string]int{}
	a.hosts = map[int32][2]any{}
	for tid, i := range a.modelTracks() {
		tr := &a.t.Tracks[i]
		pid, ok := pids[tr.Process]
		if !ok {
			pid = len(pids) + 1
			pids[tr.Process] = pid
			if err := a.event(w, map[string]any{"ph": "M", "pid": pid, "name": "process_name",
				"args": map[string]any{"name": tr.Process}}); err != nil {
				return err
			}
		}
		if tr.Kind == trace.TrackHost {
			a.hosts[int32(i)] = [2]any{pid, tid + 1}
		}
		if err := a.writeTrack(w, pid, tid+1, i); err != nil {
			return err
		}
	}
	if err := a.write(w, a.sep == ""); err != nil {
		return err
	}
	w.WriteString("\n]}\n")
	return nil
}

// modelTracks returns the indexes of the tracks an annotated trace keeps
// when it is written from the model: the device and host tracks, which
// are all the analysis looks at, so that the annotated trace analyses as
// the original did. Context tracks are left out.
func (a *annotator) modelTracks() []int {
	var out []int
	for i := range a.t.Tracks {
		if a.t.Tracks[i].Kind != trace.TrackOther {
			out = append(out, i)
		}
	}
	return out
}

// writeTrack writes track i of t as thread tid of process pid: its name
// and its events. A line whose slices overlap without nesting (XProf's
// derived "Async XLA Ops"; a GPU stream whose kernels' clocks overlap by
// nanoseconds) is written as lanes, each a thread of its own whose slices
// nest: a viewer drops slices that overlap on one thread.
func (a *annotator) writeTrack(w *bufio.Writer, pid, tid, i int) error {
	t := a.t
	tr := &t.Tracks[i]
	var lane []int
	laneTids := []int{tid}
	if !tr.Derived || tr.Thread != "Steps" {
		var n int
		if lane, n = lanes(t.TrackEvents(i)); n > 1 {
			for k := 1; k < n; k++ {
				a.lanes++
				laneTids = append(laneTids, laneTidBase+a.lanes)
			}
		}
	}
	for k, lt := range laneTids {
		name := tr.Thread
		if k > 0 {
			name = fmt.Sprintf("%s (lane %d)", tr.Thread, k+1)
		}
		if err := a.event(w, map[string]any{"ph": "M", "pid": pid, "tid": lt, "name": "thread_name",
			"args": map[string]any{"name": name}}); err != nil {
			return err
		}
	}
	for j, e := range t.TrackEvents(i) {
		tid := tid
		if lane != nil {
			tid = laneTids[lane[j]]
		}
		ev := map[string]any{"ph": "X", "pid": pid, "tid": tid, "name": t.Str(e.Name), "ts": a.micros(e.Start), "dur": chromeMicros(e.Dur())}
		if e.Has(trace.FlagInstant) {
			ev["ph"], ev["s"] = "i", "t"
			delete(ev, "dur")
		}
		if c := t.Str(t.Cat(tr.Lo + j)); c != "" {
			ev["cat"] = c
		}
		if e.Corr != 0 && e.Flags&trace.FlagFlow == 0 {
			ev["args"] = map[string]any{"correlation_id": t.CorrID(e.Corr)}
		}
		if err := a.event(w, ev); err != nil {
			return err
		}
	}
	return nil
}

// laneTidBase is where the tids of extra lanes start, clear of the tracks'.
const laneTidBase = 1 << 20

// lanes assigns the events of a track (sorted by start, longer first) to
// lanes in which slices nest or follow each other, the first lane that
// takes each; it returns each event's lane and how many there are.
func lanes(evs []trace.Event) ([]int, int) {
	lane := make([]int, len(evs))
	var open [][]int64 // per lane, the ends of the slices open, innermost last
	for j := range evs {
		e := &evs[j]
		k := 0
		for ; k < len(open); k++ {
			st := open[k]
			for len(st) > 0 && st[len(st)-1] <= e.Start {
				st = st[:len(st)-1]
			}
			open[k] = st
			if len(st) == 0 || e.End() <= st[len(st)-1] {
				break
			}
		}
		if k == len(open) {
			open = append(open, nil)
		}
		open[k] = append(open[k], e.End())
		lane[j] = k
	}
	return lane, len(open)
}
