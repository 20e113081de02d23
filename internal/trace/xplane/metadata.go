package xplane

import (
	"encoding/binary"
	"strconv"
	"strings"
	"unicode"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tracegap/tracegap/trace"
)

// idTable maps a plane's metadata ids to what the reader keeps of them.
// Profilers number metadata densely from 1, so a slice serves; a map takes
// the ids too large for it, so that a stray large id costs one entry, not
// a slice as long as the id.
type idTable[T any] struct {
	dense  []T
	set    []bool
	sparse map[uint64]T
	limit  uint64 // ids below it go in the slice
}

// reset empties the table for a plane that defines n ids.
func (t *idTable[T]) reset(n int) {
	clear(t.dense)
	clear(t.set)
	t.dense, t.set = t.dense[:0], t.set[:0]
	clear(t.sparse)
	t.limit = 2*uint64(n) + 64
}

func (t *idTable[T]) put(id uint64, v T) {
	if id >= t.limit {
		if t.sparse == nil {
			t.sparse = map[uint64]T{}
		}
		t.sparse[id] = v
		return
	}
	for uint64(len(t.dense)) <= id {
		var zero T
		t.dense = append(t.dense, zero)
		t.set = append(t.set, false)
	}
	t.dense[id], t.set[id] = v, true
}

// statKind returns what the stat with metadata id is to the reader.
func (d *decoder) statKind(id uint64) statKind {
	if id < uint64(len(d.stats.dense)) {
		return d.stats.dense[id].kind
	}
	return d.stats.sparse[id].kind
}

// ref returns the entry of id, without adding one.
func (t *idTable[T]) ref(id uint64) (*T, bool) {
	if id < uint64(len(t.dense)) {
		return &t.dense[id], t.set[id]
	}
	v, ok := t.sparse[id]
	return &v, ok
}

func (t *idTable[T]) get(id uint64) (T, bool) {
	if id < uint64(len(t.dense)) {
		return t.dense[id], t.set[id]
	}
	v, ok := t.sparse[id]
	return v, ok
}

// statKind names the few stats the reader interprets.
type statKind uint8

const (
	statOther        statKind = iota
	statCorr                  // correlation_id: links a launch to its device work
	statStepNum               // step_num: the training step an event belongs to
	statRoot                  // _r: 1 on a step's root event
	statGroup                 // group_id: the step group XProf assigned
	statMemcpy                // memcpy_details: "kind_src:pageable kind_dst:device ..."
	statProducer              // _p: the id of a flow this event produces
	statProducerType          // _pt: the kind of flow _p is (12: a TPU program)
	statConsumer              // _c: the id of a flow this event consumes
	statConsumerType          // _ct: the kind of flow _c is
	statProgram               // program_id: the compiled program device work belongs to
	statHloProto              // Hlo Proto: a program's serialized HloProto (see hlo.go)
)

var statKinds = map[string]statKind{
	"correlation_id": statCorr,
	"step_num":       statStepNum,
	"_r":             statRoot,
	"group_id":       statGroup,
	"memcpy_details": statMemcpy,
	"_p":             statProducer,
	"_pt":            statProducerType,
	"_c":             statConsumer,
	"_ct":            statConsumerType,
	"program_id":     statProgram,
	"Hlo Proto":      statHloProto,
}

// statMeta is one XStatMetadata: its name doubles as the string value of
// stats that refer to it with ref_value.
type statMeta struct {
	name string
	kind statKind
}

// eventMeta is what the reader keeps of one XEventMetadata.
type eventMeta struct {
	name    trace.StrID // display_name when set, else name
	rawName trace.StrID // name
	flags   trace.Flag  // copy facts read from the name and the metadata's stats
	// digits and rawDigits say whether name and rawName carry a number,
	// which for a step event is its step number.
	digits, rawDigits bool
	stats             eventStats // the interpreted stats that the metadata holds
}

// eventStats are the interpreted stats of an event or of its metadata.
type eventStats struct {
	corr     uint64
	step     int64
	group    int64
	hasStep  bool
	hasGroup bool
	root     bool
	// hasProgram says program is set; kept beside the other flags, where
	// it costs the event no room.
	hasProgram bool
	flags      trace.Flag
	bytes      int64 // a copy's size, from memcpy_details; 0 if unknown
	// prod and cons are the flows (XProf's producer/consumer stats) the
	// event produces and consumes (see flow).
	prod, cons flowRef
	// program is the id of the compiled program the event belongs to,
	// from the event's own stats (device work carries it there), never
	// from its metadata's.
	program uint64
}

// flowRef is one end of a flow: XProf links an event that hands work over
// (a producer: _p with its kind in _pt) to the event that takes it up (a
// consumer: _c, _ct) by an id and a kind.
type flowRef struct {
	id, kind uint64
	hasID    bool
}

// key returns the number that stands for the flow in Event.Corr: a 32-bit
// mix of its kind and id, never 0. Flows are not correlation ids, which
// Builder.Corr keeps small through a map: a TPU capture has a flow for
// every few events, most of them 64-bit ids, and the map made the read of
// the tiled TPU capture a third slower. Two flows of a trace share a key
// with odds of about one in 2^32 each, and then one program run may be
// given to the wrong step; a link's two ends always share theirs.
func (f *flowRef) key() uint32 {
	if !f.hasID {
		return 0
	}
	x := f.id ^ f.kind<<56
	// The finalizer of splitmix64: every bit of the id moves the key.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	if k := uint32(x >> 32); k != 0 {
		return k
	}
	return 1
}

// flow returns the event's flow key and flag, for an event without a
// correlation id of its own (a launch's outranks a flow): the consumer end
// where it has both, as a program's run on the device and an event that
// takes up queued work are found by what they consume. The key is 0 when
// the event keeps no flow.
func (s *eventStats) flow() (uint32, trace.Flag) {
	if s.corr != 0 || !s.cons.hasID && !s.prod.hasID { // most events: inlined
		return 0, 0
	}
	if s.cons.hasID {
		return s.cons.key(), trace.FlagFlowIn
	}
	return s.prod.key(), trace.FlagFlowOut
}

// merge fills what s lacks from the metadata's stats.
func (s *eventStats) merge(m *eventStats) {
	if s.corr == 0 {
		s.corr = m.corr
	}
	if !s.hasStep && m.hasStep {
		s.step, s.hasStep = m.step, true
	}
	if !s.hasGroup && m.hasGroup {
		s.group, s.hasGroup = m.group, true
	}
	s.root = s.root || m.root
	s.flags |= m.flags
	if s.bytes == 0 {
		s.bytes = m.bytes
	}
}

// statValue is one XStat's value, undecoded: typ is the field number of
// the oneof member that was set (0: none).
type statValue struct {
	typ    uint8
	u      uint64 // varint and fixed64 members
	lo, hi int    // str_value and bytes_value
}

// XStat field numbers.
const (
	statDouble = 2
	statUint   = 3
	statInt    = 4
	statStr    = 5
	statBytes  = 6
	statRef    = 7
)

// readStatFast decodes the XStat in b[i:end], where b starts at byte
// base of the input, written the usual way: one-byte tags of known fields
// with their proper wire types. It reports false for anything else, which
// readStat then decodes or rejects.
func readStatFast(b []byte, i, end, base int) (uint64, statValue, bool) {
	var id uint64
	var v statValue
	for i < end {
		c := b[i]
		switch c {
		case 1<<3 | 0, statUint<<3 | 0, statInt<<3 | 0, statRef<<3 | 0:
			u, n := uvarint(b, i+1, end)
			if n < 0 {
				return 0, v, false
			}
			if c == 1<<3 {
				id = u
			} else {
				v = statValue{typ: c >> 3, u: u}
			}
			i = n
		case statDouble<<3 | 1:
			if end-i < 9 {
				return 0, v, false
			}
			v, i = statValue{typ: statDouble, u: binary.LittleEndian.Uint64(b[i+1:])}, i+9
		case statStr<<3 | 2, statBytes<<3 | 2:
			size, lo := uvarint(b, i+1, end)
			if lo < 0 || size > uint64(end-lo) {
				return 0, v, false
			}
			v, i = statValue{typ: c >> 3, lo: base + lo, hi: base + lo + int(size)}, lo+int(size)
		default:
			return 0, v, false
		}
	}
	return id, v, true
}

// readStat decodes one XStat message.
func (d *decoder) readStat(lo, hi int) (uint64, statValue, error) {
	var id uint64
	var v statValue
	for off := lo; off < hi; {
		num, typ, next, err := d.tag(off, hi)
		if err != nil {
			return 0, v, err
		}
		switch num {
		case 1, statUint, statInt, statRef:
			if err := d.want(off, statFieldNames[num], typ, varintType); err != nil {
				return 0, v, err
			}
			u, n, err := d.varint(next, hi, statFieldNames[num])
			if err != nil {
				return 0, v, err
			}
			if num == 1 {
				id = u
			} else {
				v = statValue{typ: uint8(num), u: u}
			}
			off = n
		case statDouble:
			if err := d.want(off, statFieldNames[num], typ, fixed64); err != nil {
				return 0, v, err
			}
			u, n, err := d.fixed64At(next, hi, statFieldNames[num])
			if err != nil {
				return 0, v, err
			}
			v, off = statValue{typ: statDouble, u: u}, n
		case statStr, statBytes:
			if err := d.want(off, statFieldNames[num], typ, bytesType); err != nil {
				return 0, v, err
			}
			slo, shi, err := d.bytes(next, hi, statFieldNames[num])
			if err != nil {
				return 0, v, err
			}
			v, off = statValue{typ: uint8(num), lo: slo, hi: shi}, shi
		default:
			if off, err = d.skip(num, typ, next, hi); err != nil {
				return 0, v, err
			}
		}
	}
	return id, v, nil
}

var statFieldNames = [...]string{
	1:          "XStat.metadata_id (1)",
	statDouble: "XStat.double_value (2)",
	statUint:   "XStat.uint64_value (3)",
	statInt:    "XStat.int64_value (4)",
	statStr:    "XStat.str_value (5)",
	statBytes:  "XStat.bytes_value (6)",
	statRef:    "XStat.ref_value (7)",
}

// intValue returns a numeric stat as an integer.
func (v statValue) intValue() (int64, bool) {
	switch v.typ {
	case statUint, statInt:
		return int64(v.u), true
	case statDouble:
		return int64(float64From(v.u)), true
	}
	return 0, false
}

// str returns a string stat's value, resolving ref_value through the
// plane's stat metadata. It allocates; the hot path calls it only for the
// rare stats it interprets as text.
func (d *decoder) str(v statValue) string {
	switch v.typ {
	case statStr, statBytes:
		return string(d.bytesAt(v.lo, v.hi))
	case statRef:
		m, _ := d.stats.get(v.u)
		return m.name
	case statDouble:
		return strconv.FormatFloat(float64From(v.u), 'g', -1, 64)
	case statInt:
		return strconv.FormatInt(int64(v.u), 10)
	case statUint:
		return strconv.FormatUint(v.u, 10)
	}
	return ""
}

// interpret folds one stat into s when it is one the analysis uses.
func (d *decoder) interpret(id uint64, v statValue, s *eventStats) {
	kind := d.statKind(id)
	if kind == statMemcpy {
		f, n := memcpyDetails(d.str(v))
		s.flags |= trace.FlagMemcpy | f
		s.bytes = n
		return
	}
	if n, ok := v.intValue(); ok {
		s.setInt(kind, n)
	}
}

// setInt keeps the integer value n of a stat of kind k.
func (s *eventStats) setInt(k statKind, n int64) {
	switch k {
	case statCorr:
		s.corr = uint64(n)
	case statStepNum:
		s.step, s.hasStep = n, true
	case statGroup:
		s.group, s.hasGroup = n, true
	case statRoot:
		if n == 1 {
			s.root = true
		}
	case statProducer:
		s.prod.id, s.prod.hasID = uint64(n), true
	case statProducerType:
		s.prod.kind = uint64(n)
	case statConsumer:
		s.cons.id, s.cons.hasID = uint64(n), true
	case statConsumerType:
		s.cons.kind = uint64(n)
	case statProgram:
		s.program, s.hasProgram = uint64(n), true
	}
}

// readStatMeta decodes one stat_metadata map entry (key 1, value 2).
func (d *decoder) readStatMeta(lo, hi int) error {
	id, vlo, vhi, err := d.mapEntry(lo, hi, "stat_metadata")
	if err != nil {
		return err
	}
	var name string
	for off := vlo; off < vhi; {
		num, typ, next, err := d.tag(off, vhi)
		if err != nil {
			return err
		}
		if num != 2 {
			if off, err = d.skip(num, typ, next, vhi); err != nil {
				return err
			}
			continue
		}
		if err := d.want(off, "XStatMetadata.name (2)", typ, bytesType); err != nil {
			return err
		}
		slo, shi, err := d.bytes(next, vhi, "XStatMetadata.name (2)")
		if err != nil {
			return err
		}
		name, off = string(d.bytesAt(slo, shi)), shi
	}
	kind := statKinds[name]
	if kind == statProgram && d.progs.byID == nil {
		kind = statOther // no program is kept: device work is not matched to one
	}
	d.stats.put(id, statMeta{name: name, kind: kind})
	return nil
}

// readEventMeta decodes one event_metadata map entry. Its stats need the
// stat metadata, so the plane's stat_metadata is read first.
func (d *decoder) readEventMeta(lo, hi int) error {
	id, vlo, vhi, err := d.mapEntry(lo, hi, "event_metadata")
	if err != nil {
		return err
	}
	var name, display span
	var st eventStats
	for off := vlo; off < vhi; {
		num, typ, next, err := d.tag(off, vhi)
		if err != nil {
			return err
		}
		switch num {
		case 2, 4, 5:
			what := eventMetaFields[num]
			if err := d.want(off, what, typ, bytesType); err != nil {
				return err
			}
			flo, fhi, err := d.bytes(next, vhi, what)
			if err != nil {
				return err
			}
			switch num {
			case 2:
				name = span{flo, fhi}
			case 4:
				display = span{flo, fhi}
			case 5:
				sid, v, err := d.readStat(flo, fhi)
				if err != nil {
					return err
				}
				d.interpret(sid, v, &st)
			}
			off = fhi
		default:
			if off, err = d.skip(num, typ, next, vhi); err != nil {
				return err
			}
		}
	}
	d.events.put(id, d.newEventMeta(name, display, st))
	return nil
}

var eventMetaFields = map[protowire.Number]string{
	2: "XEventMetadata.name (2)",
	4: "XEventMetadata.display_name (4)",
	5: "XEventMetadata.stats (5)",
}

func (d *decoder) newEventMeta(name, display span, st eventStats) eventMeta {
	raw := d.bytesAt(name.lo, name.hi)
	m := eventMeta{rawName: d.b.InternBytes(raw), stats: st}
	m.name = m.rawName
	if display.hi > display.lo {
		m.name = d.b.InternBytes(d.bytesAt(display.lo, display.hi))
	}
	if shown := d.b.Str(m.name); isPythonFrame(shown) {
		m.name = d.b.Intern(shown[1:])
	}
	m.digits = hasDigit(d.b.Str(m.name))
	m.rawDigits = hasDigit(string(raw))
	m.flags = nameFlags(d.b.Str(m.rawName)) | st.flags
	return m
}

// mapEntry decodes a map<int64, Message> entry and returns the key and the
// value's bounds.
func (d *decoder) mapEntry(lo, hi int, what string) (uint64, int, int, error) {
	var key uint64
	vlo, vhi := hi, hi
	for off := lo; off < hi; {
		num, typ, next, err := d.tag(off, hi)
		if err != nil {
			return 0, 0, 0, err
		}
		switch num {
		case 1:
			if err := d.want(off, what+" key (1)", typ, varintType); err != nil {
				return 0, 0, 0, err
			}
			if key, off, err = d.varint(next, hi, what+" key"); err != nil {
				return 0, 0, 0, err
			}
		case 2:
			if err := d.want(off, what+" value (2)", typ, bytesType); err != nil {
				return 0, 0, 0, err
			}
			if vlo, vhi, err = d.bytes(next, hi, what+" value"); err != nil {
				return 0, 0, 0, err
			}
			off = vhi
		default:
			if off, err = d.skip(num, typ, next, hi); err != nil {
				return 0, 0, 0, err
			}
		}
	}
	return key, vlo, vhi, nil
}

// nameFlags reads copy facts from an event name: CUPTI's "MemcpyD2H",
// Kineto-style "Memcpy DtoH (Device -> Pageable)", runtime calls such as
// "cudaMemcpyAsync" or "hipMemsetD32".
func nameFlags(name string) trace.Flag {
	lower := strings.ToLower(name)
	var f trace.Flag
	switch {
	case strings.Contains(lower, "memcpy"):
		f |= trace.FlagMemcpy
	case strings.Contains(lower, "memset"):
		return trace.FlagMemset
	default:
		return 0
	}
	if strings.Contains(lower, "dtoh") || strings.Contains(lower, "d2h") || strings.Contains(lower, "devicetohost") {
		f |= trace.FlagDtoH
	}
	if strings.Contains(lower, "pageable") {
		f |= trace.FlagPageable
	}
	return f
}

// memcpyDetails reads a memcpy_details stat, the copy's flags and size
// in bytes (0 when not given): CUPTI writes "kind_src:pageable
// kind_dst:device size:... dest:... async:...", ROCm "kind:DeviceToHost
// size:... dest:... async:...".
func memcpyDetails(s string) (f trace.Flag, size int64) {
	var src, dst string
	for _, field := range strings.Fields(s) {
		k, v, ok := strings.Cut(field, ":")
		if !ok {
			continue
		}
		v = strings.ToLower(v)
		switch k {
		case "kind":
			if v == "dtoh" || v == "d2h" || v == "devicetohost" {
				f |= trace.FlagDtoH
			}
		case "kind_src":
			src = v
		case "kind_dst":
			dst = v
		case "size":
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
				size = n
			}
		}
		if v == "pageable" {
			f |= trace.FlagPageable
		}
	}
	if src == "device" && (dst == "pageable" || dst == "pinned") {
		f |= trace.FlagDtoH
	}
	return f, size
}

func hasDigit(s string) bool {
	return strings.ContainsAny(s, "0123456789")
}

// isPythonFrame reports whether name is a frame of JAX's Python tracer,
// which marks them with a "$": a Python function, "$api.py:3154
// block_until_ready", "$<unknown> __exit__", or a C function by its
// module, "$builtins len", "$jaxlib.utils safe_zip". The reader drops the
// mark, so that reports show the frame as Python writes it and name
// patterns match what they show.
func isPythonFrame(name string) bool {
	if len(name) < 2 || name[0] != '$' {
		return false
	}
	file, fn, ok := strings.Cut(name[1:], " ")
	return ok && fn != "" && (strings.HasPrefix(file, "<") || strings.Contains(file, ".py:") || isModule(file))
}

// isModule reports whether s is a dotted Python module name: "builtins",
// "jaxlib.utils".
func isModule(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if r != '.' && r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}
