package xplane

import (
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/trace"
)

// planeScan holds the byte ranges of one plane's fields. Lines come before
// the metadata they refer to in the encoding (fields 3, then 4 and 5), so
// the plane is scanned once for ranges and then decoded in dependency
// order.
type planeScan struct {
	name                            string
	lines, evMeta, statMeta, pstats []span
}

func (p *planeScan) reset() {
	p.name = ""
	p.lines, p.evMeta, p.statMeta, p.pstats = p.lines[:0], p.evMeta[:0], p.statMeta[:0], p.pstats[:0]
}

var planeFields = map[int]string{
	2: "XPlane.name (2)",
	3: "XPlane.lines (3)",
	4: "XPlane.event_metadata (4)",
	5: "XPlane.stat_metadata (5)",
	6: "XPlane.stats (6)",
}

func (d *decoder) scanPlane(p span) error {
	pl := &d.pl
	pl.reset()
	for off := p.lo; off < p.hi; {
		num, typ, next, err := d.tag(off, p.hi)
		if err != nil {
			return err
		}
		what, known := planeFields[int(num)]
		if !known {
			if off, err = d.skip(num, typ, next, p.hi); err != nil {
				return err
			}
			continue
		}
		if err := d.want(off, what, typ, bytesType); err != nil {
			return err
		}
		lo, hi, err := d.bytes(next, p.hi, what)
		if err != nil {
			return err
		}
		s := span{lo, hi}
		switch num {
		case 2:
			pl.name = string(d.buf[lo:hi])
		case 3:
			pl.lines = append(pl.lines, s)
		case 4:
			pl.evMeta = append(pl.evMeta, s)
		case 5:
			pl.statMeta = append(pl.statMeta, s)
		case 6:
			pl.pstats = append(pl.pstats, s)
		}
		off = hi
	}
	return nil
}

// readPlane decodes one plane: its metadata, then its lines.
func (d *decoder) readPlane(p span) error {
	if err := d.scanPlane(p); err != nil {
		return err
	}
	d.stats.reset(len(d.pl.statMeta))
	d.events.reset(len(d.pl.evMeta))
	d.part = "stat_metadata"
	for _, s := range d.pl.statMeta {
		if err := d.readStatMeta(s.lo, s.hi); err != nil {
			return err
		}
	}
	d.part = "event_metadata"
	for _, s := range d.pl.evMeta {
		if err := d.readEventMeta(s.lo, s.hi); err != nil {
			return err
		}
	}
	d.part = "stats"
	if err := d.planeStats(); err != nil {
		return err
	}
	d.part = ""
	pk := classifyPlane(d.pl.name)
	for i, s := range d.pl.lines {
		d.line = i
		if err := d.readLine(s, pk); err != nil {
			return err
		}
	}
	d.line = -1
	return nil
}

// planeMeta maps plane stats to the trace's Meta keys.
var planeMeta = map[string]string{
	"device_vendor":      "device_vendor",
	"device_type_string": "device_type",
	"profile_start_time": "profile_start_time_ns",
	"profile_stop_time":  "profile_stop_time_ns",
}

// planeStats keeps the cheap facts a plane carries: the device's vendor and
// type, the profile's start and stop time.
func (d *decoder) planeStats() error {
	for _, s := range d.pl.pstats {
		id, v, err := d.readStat(s.lo, s.hi)
		if err != nil {
			return err
		}
		m, _ := d.stats.get(id)
		key, ok := planeMeta[m.name]
		if !ok {
			continue
		}
		if _, dup := d.b.Meta[key]; !dup {
			d.b.Meta[key] = d.str(v)
		}
	}
	return nil
}

// planeKind says what a plane's lines are.
type planeKind struct {
	kind   uint8
	device string // "GPU:0", "TPU:3"
	name   string
}

const (
	planeOther uint8 = iota
	planeHost
	planeGPU
	planeTPU
)

// classifyPlane reads a plane's name: "/device:GPU:0", "/device:TPU:3",
// "/host:CPU"; everything else ("/host:metadata", "Task Environment",
// "/device:CUSTOM:...") is context.
func classifyPlane(name string) planeKind {
	pk := planeKind{name: name}
	if name == "/host:CPU" {
		pk.kind = planeHost
		return pk
	}
	for _, dev := range [...]struct {
		prefix string
		kind   uint8
	}{{"/device:GPU:", planeGPU}, {"/device:TPU:", planeTPU}} {
		rest, ok := strings.CutPrefix(name, dev.prefix)
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(rest); err == nil && n >= 0 && strconv.Itoa(n) == rest {
			pk.kind = dev.kind
			pk.device = strings.TrimPrefix(dev.prefix, "/device:") + rest
		}
	}
	return pk
}

// derivedLines are the views XProf computes from other lines; their events
// repeat or summarise work and are never work themselves. ("XLA Ops" is
// derived on GPU planes but is the device's own timeline on TPU planes.)
var derivedLines = map[string]bool{
	"Steps":                 true,
	"XLA Modules":           true,
	"XLA Ops":               true,
	"Async XLA Ops":         true,
	"Framework Ops":         true,
	"Framework Name Scope":  true,
	"TensorFlow Ops":        true,
	"TensorFlow Name Scope": true,
	"XLA TraceMe":           true,
	"Launch Stats":          true,
	"Source code":           true,
	"Host Offload Ops":      true,
	"_counters_":            true,
}

// derivedLineID is the first line id XProf gives its derived lines.
const derivedLineID = 0xdeadbeef

// lineClass is what a line's events are to the analysis.
type lineClass struct {
	track   trace.TrackKind
	kind    trace.Kind
	derived bool
	steps   bool // a "Steps" line: every event marks a step
}

func classifyLine(pk planeKind, id int64, name string) lineClass {
	derived := derivedLines[name]
	switch pk.kind {
	case planeHost:
		if derived {
			return lineClass{track: trace.TrackOther, kind: trace.KindOverlay, derived: true, steps: name == "Steps"}
		}
		return lineClass{track: trace.TrackHost, kind: trace.KindHost}
	case planeGPU, planeTPU:
		work := pk.kind == planeTPU && name == "XLA Ops" && id < derivedLineID ||
			pk.kind == planeGPU && strings.HasPrefix(name, "Stream #") && !derived && id < derivedLineID
		if work {
			return lineClass{track: trace.TrackDevice, kind: trace.KindWork}
		}
		derived = derived || id >= derivedLineID
		return lineClass{track: trace.TrackDevice, kind: trace.KindOverlay, derived: derived, steps: name == "Steps"}
	}
	return lineClass{track: trace.TrackOther, kind: trace.KindOverlay}
}
