package xplane

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/tracegap/tracegap/trace"
)

// programs is what the decoder gathers of the compiled programs: those
// whose HLO protos name lines of the user's code (Trace.Programs) and the
// runs of device work that belong to them (Trace.ProgramRuns).
type programs struct {
	list []trace.Program
	byID map[uint64]int32 // index in list, by program id
	runs []trace.ProgramRun
}

// metadataPlane is the plane on which profilers put each program's HLO
// proto.
const metadataPlane = "/host:metadata"

// metadataPrograms reads the programs of the metadata planes of scans.
func (d *decoder) metadataPrograms(scans []planeScan) error {
	for i := range scans {
		if scans[i].name == metadataPlane {
			d.plane = i
			if err := d.readPrograms(&scans[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// readPrograms reads the programs of a scanned metadata plane before any
// plane's lines are decoded, so that device work is matched to them as it
// is read. Only its stat metadata and event metadata are read; readPlane
// reads them again, without the HLO protos, when the plane's turn comes.
func (d *decoder) readPrograms(pl *planeScan) error {
	d.stats.reset(len(pl.statMeta))
	hlo := false
	for _, s := range pl.statMeta {
		if err := d.load(s.lo, s.hi); err != nil {
			return err
		}
		if err := d.readStatMeta(s.lo, s.hi); err != nil {
			return err
		}
	}
	for _, m := range d.stats.dense {
		hlo = hlo || m.kind == statHloProto
	}
	for _, m := range d.stats.sparse {
		hlo = hlo || m.kind == statHloProto
	}
	if !hlo {
		return nil
	}
	d.part = "event_metadata"
	for _, s := range pl.evMeta {
		if err := d.load(s.lo, s.hi); err != nil {
			return err
		}
		if err := d.programOf(s.lo, s.hi); err != nil {
			return err
		}
	}
	d.part = ""
	return nil
}

// programOf reads the HLO proto stat of one event_metadata entry, if it
// has one, and keeps its program when its ops name lines of user code. A
// malformed HLO proto costs its program, with a warning, not the trace.
func (d *decoder) programOf(lo, hi int) error {
	id, vlo, vhi, err := d.mapEntry(lo, hi, "event_metadata")
	if err != nil {
		return err
	}
	for off := vlo; off < vhi; {
		num, typ, next, err := d.tag(off, vhi)
		if err != nil {
			return err
		}
		if num != 5 || typ != bytesType {
			if off, err = d.skip(num, typ, next, vhi); err != nil {
				return err
			}
			continue
		}
		slo, shi, err := d.bytes(next, vhi, eventMetaFields[5])
		if err != nil {
			return err
		}
		sid, v, err := d.readStat(slo, shi)
		if err != nil {
			return err
		}
		if d.statKind(sid) == statHloProto && (v.typ == statBytes || v.typ == statStr) {
			d.addProgram(id, d.bytesAt(v.lo, v.hi), v.lo)
		}
		off = shi
	}
	return nil
}

// addProgram keeps the program of the HLO proto b, found at byte at of the
// input on the event metadata of id.
func (d *decoder) addProgram(id uint64, b []byte, at int) {
	m, err := readHLO(b)
	if err != nil {
		d.b.Warn("HLO proto at byte %d: %v; its program's source lines are left out", at, err)
		return
	}
	if len(m.lines) == 0 {
		return
	}
	if m.hasID {
		id = m.id
	}
	p := &d.progs
	if _, dup := p.byID[id]; dup {
		return
	}
	name := m.name
	if len(name) == 0 {
		name = []byte("program " + strconv.FormatUint(id, 10))
	}
	prog := trace.Program{Name: d.b.InternBytes(name), ID: id, Lines: make([]trace.SourceLine, len(m.lines))}
	for i, l := range m.lines {
		prog.Lines[i] = trace.SourceLine{File: d.b.InternBytes(l.file), Line: l.line, Op: d.b.InternBytes(l.op), Ops: l.ops}
	}
	slices.SortStableFunc(prog.Lines, func(x, y trace.SourceLine) int { return cmp.Compare(y.Ops, x.Ops) })
	if p.byID == nil {
		p.byID = map[uint64]int32{}
	}
	p.byID[id] = int32(len(p.list))
	p.list = append(p.list, prog)
}

// addRun adds device work of track, [start, end), that belongs to program
// id to the program's runs; the work of a program not kept makes runs of
// program -1, so that what ran last before a gap is never taken for a
// kept program that ran before it.
func (p *programs) addRun(track int32, id uint64, start, end int64) {
	k, ok := p.byID[id]
	if !ok {
		k = -1
	}
	if n := len(p.runs) - 1; n >= 0 && p.runs[n].Track == track && p.runs[n].Program == k {
		r := &p.runs[n]
		r.Start, r.End = min(r.Start, start), max(r.End, end)
		return
	}
	p.runs = append(p.runs, trace.ProgramRun{Track: track, Program: k, Start: start, End: end})
}

// finish gives t the programs, their runs' times rebased as its events'
// are and sorted by track and start.
func (p *programs) finish(t *trace.Trace) {
	if len(p.list) == 0 {
		return
	}
	t.Programs = p.list
	for i := range p.runs {
		p.runs[i].Start -= t.StartNs
		p.runs[i].End -= t.StartNs
	}
	slices.SortStableFunc(p.runs, func(x, y trace.ProgramRun) int {
		return cmp.Or(cmp.Compare(x.Track, y.Track), cmp.Compare(x.Start, y.Start))
	})
	t.ProgramRuns = p.runs
}
