package xplane

import (
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/trace"
)

// planeScan holds the byte ranges of one plane's fields and its lines'
// headers. Lines come before the metadata they refer to in the encoding
// (fields 3, then 4 and 5), so every plane is scanned first and decoded in
// dependency order afterwards; the scan also counts the events, so that
// room for all of them is made at once.
type planeScan struct {
	name                     string
	evMeta, statMeta, pstats []span
	lines                    []lineHead
	events                   int
}

var planeFields = map[int]string{
	2: "XPlane.name (2)",
	3: "XPlane.lines (3)",
	4: "XPlane.event_metadata (4)",
	5: "XPlane.stat_metadata (5)",
	6: "XPlane.stats (6)",
}

func (d *decoder) scanPlane(p span) (planeScan, error) {
	var pl planeScan
	for off := p.lo; off < p.hi; {
		if err := d.loadHead(off, p.hi); err != nil {
			return pl, err
		}
		num, typ, next, err := d.tag(off, p.hi)
		if err != nil {
			return pl, err
		}
		what, known := planeFields[int(num)]
		if !known {
			if off, err = d.skip(num, typ, next, p.hi); err != nil {
				return pl, err
			}
			continue
		}
		if err := d.want(off, what, typ, bytesType); err != nil {
			return pl, err
		}
		lo, hi, err := d.bytes(next, p.hi, what)
		if err != nil {
			return pl, err
		}
		s := span{lo, hi}
		switch num {
		case 2:
			if err := d.load(lo, hi); err != nil {
				return pl, err
			}
			pl.name = string(d.bytesAt(lo, hi))
		case 3:
			if err := d.countPart(); err != nil {
				return pl, err
			}
			d.line = len(pl.lines)
			h, err := d.scanLine(s)
			if err != nil {
				return pl, err
			}
			d.line = -1
			pl.lines = append(pl.lines, h)
			pl.events += h.count
		case 4:
			pl.evMeta = append(pl.evMeta, s)
		case 5:
			pl.statMeta = append(pl.statMeta, s)
		case 6:
			pl.pstats = append(pl.pstats, s)
		}
		if num >= 4 { // metadata and stats: a name or a value each
			if err := d.countMeta(); err != nil {
				return pl, err
			}
		}
		off = hi
	}
	return pl, nil
}

// beforeLines is called when a plane's metadata is read and its lines are
// next: a hook for tests.
var beforeLines = func(*planeScan) {}

// readPlane decodes one scanned plane: its metadata, then its lines.
func (d *decoder) readPlane(pl *planeScan) error {
	d.stats.reset(len(pl.statMeta))
	d.events.reset(len(pl.evMeta))
	d.part = "stat_metadata"
	for _, s := range pl.statMeta {
		if err := d.load(s.lo, s.hi); err != nil {
			return err
		}
		if err := d.readStatMeta(s.lo, s.hi); err != nil {
			return err
		}
	}
	for id := range d.kinds {
		d.kinds[id] = d.statKind(uint64(id))
	}
	d.part = "event_metadata"
	for _, s := range pl.evMeta {
		if err := d.load(s.lo, s.hi); err != nil {
			return err
		}
		if err := d.readEventMeta(s.lo, s.hi); err != nil {
			return err
		}
	}
	d.part = "stats"
	if err := d.planeStats(pl); err != nil {
		return err
	}
	d.part = ""
	pk := classifyPlane(pl.name)
	beforeLines(pl)
	for i, h := range pl.lines {
		d.line = i
		if err := d.readLine(h, pk); err != nil {
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
func (d *decoder) planeStats(pl *planeScan) error {
	for _, s := range pl.pstats {
		if err := d.load(s.lo, s.hi); err != nil {
			return err
		}
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
