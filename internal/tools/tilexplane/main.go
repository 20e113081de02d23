// Command tilexplane makes a large, realistic XPlane trace by repeating a
// real one, as ../shared/bench/tile-trace does for Kineto traces.
//
//	go run ./internal/tools/tilexplane -copies 460 SRC.xplane.pb OUT.xplane.pb
//
// Every line's events are written N times, each copy shifted in time by the
// source's span (all planes' events, first start to last end), so that the
// copies follow one another on every line. The ids that tie events together
// (correlation_id, group_id, step_num, run_id) are renumbered per copy, so
// that every copy is a distinct stretch of the run; device_offset_ps is
// shifted with the event. Flow ids (_p, _c) are hashes as often as
// counters: each copy adds its own multiple of a large odd number to them,
// wrapping, so that producer and consumer still match within a copy and
// no copy's flows meet another's. Step names come from metadata, written once, so a step
// named "train_step#7" keeps its name in every copy; its step_num differs. Metadata, plane
// stats and the space's other fields are written once. The output is
// deterministic for a given input; it is written through a temporary file.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/tracegap/tracegap/internal/render"
	pb "github.com/tracegap/tracegap/internal/trace/xplane/xplanepb"
)

// idStats are the stats whose integer values are ids, renumbered per copy.
var idStats = map[string]bool{
	"correlation_id": true,
	"group_id":       true,
	"step_num":       true,
	"run_id":         true,
}

// flowStats are the stats whose values are flow ids (see the package
// comment).
var flowStats = map[string]bool{"_p": true, "_c": true}

// flowStride is what each copy adds to flow ids: odd, so that copies
// 0..2^64-1 add distinct amounts.
const flowStride = 0x9e3779b97f4a7c15

// timeStats are the stats whose values are picosecond times on the
// event's line, shifted with it.
var timeStats = map[string]bool{"device_offset_ps": true}

func main() {
	copies := flag.Int("copies", 0, "how many times to repeat the events (required)")
	flag.Parse()
	if *copies < 1 || flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: tilexplane -copies N SRC.xplane.pb OUT.xplane.pb")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Arg(1), *copies); err != nil {
		fmt.Fprintf(os.Stderr, "tilexplane: %v\n", err)
		os.Exit(1)
	}
}

func run(src, out string, copies int) error {
	raw, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var space pb.XSpace
	if err := proto.Unmarshal(raw, &space); err != nil {
		return fmt.Errorf("decoding %s: %w", src, err)
	}
	t := newTiler(&space, copies)
	if t.span <= 0 {
		return fmt.Errorf("%s: no timed events to repeat", src)
	}
	if max := int64(math.MaxInt64) / int64(copies+1); t.span >= max || t.maxID >= uint64(max) {
		return fmt.Errorf("%d copies of a %d ps span would overflow", copies, t.span)
	}
	return render.WriteFile(out, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		if err := t.write(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// tiler writes copies of a space.
type tiler struct {
	space  *pb.XSpace
	copies int
	span   int64  // picoseconds from the first event's start to the last one's end, plus one
	maxID  uint64 // the largest renumbered id
	buf    []byte
}

// statRole says what a stat is to the tiler.
type statRole uint8

const (
	roleOther statRole = iota
	roleID
	roleTime
	roleFlow
)

// roles returns the roles of a plane's stat metadata ids.
func roles(p *pb.XPlane) map[int64]statRole {
	r := map[int64]statRole{}
	for id, m := range p.StatMetadata {
		switch {
		case idStats[m.GetName()]:
			r[id] = roleID
		case timeStats[m.GetName()]:
			r[id] = roleTime
		case flowStats[m.GetName()]:
			r[id] = roleFlow
		}
	}
	return r
}

func newTiler(s *pb.XSpace, copies int) *tiler {
	t := &tiler{space: s, copies: copies}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, p := range s.Planes {
		r := roles(p)
		for _, l := range p.Lines {
			for _, e := range l.Events {
				if _, ok := e.Data.(*pb.XEvent_OffsetPs); ok {
					start := l.TimestampNs*1000 + e.GetOffsetPs()
					lo, hi = min(lo, start), max(hi, start+e.DurationPs)
				}
				for _, st := range e.Stats {
					if r[st.MetadataId] == roleID {
						t.maxID = max(t.maxID, idValue(st))
					}
				}
			}
		}
	}
	if hi >= lo {
		t.span = hi - lo + 1
	}
	return t
}

// idValue returns an integer stat's value.
func idValue(st *pb.XStat) uint64 {
	switch v := st.Value.(type) {
	case *pb.XStat_Int64Value:
		return uint64(max(v.Int64Value, 0))
	case *pb.XStat_Uint64Value:
		return v.Uint64Value
	}
	return 0
}

// write writes the tiled space: each plane's lines with their events
// repeated, then the plane's other fields, then the space's other fields.
// Lengths come first in the encoding, so each line's size is worked out
// before it is written.
func (t *tiler) write(w io.Writer) error {
	for _, p := range t.space.Planes {
		rest := proto.Clone(p).(*pb.XPlane)
		rest.Lines = nil
		restBytes, err := proto.Marshal(rest)
		if err != nil {
			return err
		}
		r := roles(p)
		heads := make([][]byte, len(p.Lines))
		sizes := make([]int, len(p.Lines))
		size := len(restBytes)
		for i, l := range p.Lines {
			if heads[i], sizes[i], err = t.lineSize(l, r); err != nil {
				return err
			}
			size += protowire.SizeTag(3) + protowire.SizeBytes(sizes[i])
		}
		if err := t.put(w, 1, size); err != nil {
			return err
		}
		for i, l := range p.Lines {
			if err := t.writeLine(w, l, r, heads[i], sizes[i]); err != nil {
				return err
			}
		}
		if _, err := w.Write(restBytes); err != nil {
			return err
		}
	}
	rest := proto.Clone(t.space).(*pb.XSpace)
	rest.Planes = nil
	b, err := proto.Marshal(rest)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// lineSize returns a line's header (its fields but the events) and the
// size of the tiled line.
func (t *tiler) lineSize(l *pb.XLine, r map[int64]statRole) ([]byte, int, error) {
	head := proto.Clone(l).(*pb.XLine)
	head.Events = nil
	hb, err := proto.Marshal(head)
	if err != nil {
		return nil, 0, err
	}
	size := len(hb)
	for k := range t.copies {
		for _, e := range l.Events {
			b, err := t.event(e, r, k)
			if err != nil {
				return nil, 0, err
			}
			size += protowire.SizeTag(4) + protowire.SizeBytes(len(b))
		}
	}
	return hb, size, nil
}

func (t *tiler) writeLine(w io.Writer, l *pb.XLine, r map[int64]statRole, head []byte, size int) error {
	if err := t.put(w, 3, size); err != nil {
		return err
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	written := len(head)
	for k := range t.copies {
		for _, e := range l.Events {
			b, err := t.event(e, r, k)
			if err != nil {
				return err
			}
			if err := t.put(w, 4, len(b)); err != nil {
				return err
			}
			if _, err := w.Write(b); err != nil {
				return err
			}
			written += protowire.SizeTag(4) + protowire.SizeBytes(len(b))
		}
	}
	if written != size {
		return fmt.Errorf("line %d: wrote %d bytes, sized %d", l.Id, written, size)
	}
	return nil
}

// put writes the header of a length-delimited field.
func (t *tiler) put(w io.Writer, num protowire.Number, size int) error {
	b := protowire.AppendTag(nil, num, protowire.BytesType)
	_, err := w.Write(protowire.AppendVarint(b, uint64(size)))
	return err
}

// event returns copy k of e, encoded. It changes e and puts it back, which
// costs far less than a clone per copy.
func (t *tiler) event(e *pb.XEvent, r map[int64]statRole, k int) ([]byte, error) {
	shift, idShift := int64(k)*t.span, int64(uint64(k)*(t.maxID+1))
	data := e.Data
	if off, ok := e.Data.(*pb.XEvent_OffsetPs); ok {
		e.Data = &pb.XEvent_OffsetPs{OffsetPs: off.OffsetPs + shift}
	}
	var saved []any
	for _, st := range e.Stats {
		saved = append(saved, st.Value)
		switch r[st.MetadataId] {
		case roleID:
			shiftStat(st, idShift)
		case roleTime:
			shiftStat(st, shift)
		case roleFlow:
			shiftStat(st, int64(uint64(k)*flowStride))
		}
	}
	var err error
	t.buf, err = proto.MarshalOptions{Deterministic: true}.MarshalAppend(t.buf[:0], e)
	e.Data = data
	for i, st := range e.Stats {
		setStat(st, saved[i])
	}
	if err != nil {
		return nil, fmt.Errorf("encoding an event of metadata %d: %w", e.MetadataId, err)
	}
	return t.buf, nil
}

// shiftStat adds d to an integer stat's value.
func shiftStat(st *pb.XStat, d int64) {
	switch v := st.Value.(type) {
	case *pb.XStat_Int64Value:
		st.Value = &pb.XStat_Int64Value{Int64Value: v.Int64Value + d}
	case *pb.XStat_Uint64Value:
		st.Value = &pb.XStat_Uint64Value{Uint64Value: v.Uint64Value + uint64(d)}
	}
}

// setStat puts back a value that shiftStat replaced.
func setStat(st *pb.XStat, v any) {
	switch v := v.(type) {
	case *pb.XStat_Int64Value:
		st.Value = v
	case *pb.XStat_Uint64Value:
		st.Value = v
	}
}
