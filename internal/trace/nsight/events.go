package nsight

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/trace/formats"
	"github.com/tracegap/tracegap/trace"
)

// reader holds the state of one read: the builder, the names looked up so
// far and the tracks made so far. Everything in it grows with the distinct
// names and tracks of the export, never with its rows.
type reader struct {
	c     *liteDB
	b     *trace.Builder
	s     schema
	max   int
	size  int64 // the file's size
	names map[nameKey]trace.StrID
	// copyNames caches the names made up for copies, by their kinds.
	copyNames map[[3]int64]trace.StrID
	threads   map[int64]*thread
	streams   map[[2]int64]int32
	lookup    *liteStmt // SELECT value FROM StringIds WHERE id = ?
	// err is the first error of a lookup, which stops the read.
	err     error
	version string // EXPORT_SCHEMA_VERSION, for messages
	input   string // the report the export was made from, for a rank
	// work counts the kernels and copies added; memsets counts the
	// memsets kept as overlays in an export without either.
	work, memsets int
}

// nameKey is a StringIds id as one kind of event uses it: each kind
// cleans names its own way.
type nameKey struct {
	id  int64
	use use
}

type use uint8

const (
	useKernel use = iota
	useRuntime
	useNVTX
	useOSRT
	useThread
)

// thread is a host thread met in the events: its track, and the last
// runtime call added on it (see runtime).
type thread struct {
	track            int32
	tid              int64
	lastCorr         uint32
	lastName         trace.StrID
	lastStart, lastE int64
}

// readConn reads the export on c.
func readConn(c *liteDB, path string, size int64, opt trace.Options) (*trace.Trace, error) {
	s, err := loadSchema(c)
	if err != nil {
		return nil, err
	}
	if !s.nsight() {
		return nil, notNsight(s)
	}
	r := &reader{
		c: c, b: trace.NewBuilder(), s: s, max: opt.MaxEvents, size: size,
		names: map[nameKey]trace.StrID{}, copyNames: map[[3]int64]trace.StrID{},
		threads: map[int64]*thread{}, streams: map[[2]int64]int32{},
	}
	if r.max <= 0 {
		r.max = trace.DefaultMaxEvents
	}
	r.b.SetLimits(opt)
	if err := r.read(); err != nil {
		if r.version != "" && !knownVersion(r.version) {
			err = fmt.Errorf("%w (export schema %s, which this reader does not know)", err, r.version)
		}
		return nil, err
	}
	if r.b.NumEvents() == 0 {
		return nil, r.noEvents()
	}
	r.rankFromName(path, r.input)
	if r.memsets > 0 {
		r.b.Warn("the capture holds no kernels or copies, only %d memset(s) (kept as overlays, not work): it ended before the workload began", r.memsets)
	}
	return r.b.Finish(), nil
}

// notNsight says why a SQLite database is not read as an export.
func notNsight(s schema) error {
	if s[stringTable.name] == nil {
		return fmt.Errorf("a SQLite database without a StringIds table: not an Nsight Systems export (nsys export --type sqlite), expected %s", formats.Titles())
	}
	return fmt.Errorf("an Nsight Systems export without events: none of the tables CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET, _RUNTIME, NVTX_EVENTS or OSRT_API (capture with nsys profile --trace=cuda,nvtx,osrt)")
}

// drop drops a row for reason (see Builder.Drop).
func (r *reader) drop(reason string) { r.b.Drop(reason) }

// noEvents says why an export gave no events.
func (r *reader) noEvents() error {
	if n, first := r.b.Drops(); n > 0 {
		return fmt.Errorf("no usable events: dropped %s (first: %s)", human.Count(n, "row"), first)
	}
	return fmt.Errorf("no events: the export's event tables are empty (capture with nsys profile --trace=cuda,nvtx,osrt)")
}

// knownVersion reports whether v is an export schema version the reader
// was made against: 2.x (Nsight Systems 2021-2022) and 3.x (2023-2026).
func knownVersion(v string) bool { return strings.HasPrefix(v, "2.") || strings.HasPrefix(v, "3.") }

// read reads the metadata, then each table of events there is, then the
// names of the threads and devices met.
func (r *reader) read() error {
	if err := r.meta(); err != nil {
		return err
	}
	if err := r.s.check(&stringTable); err != nil {
		return err
	}
	stmt, err := r.c.prepare(`SELECT value FROM StringIds WHERE id = ?`)
	if err != nil {
		return dbError(err)
	}
	defer stmt.close()
	r.lookup = stmt
	if err := r.grow(); err != nil {
		return err
	}
	for _, t := range []struct {
		spec *tableSpec
		row  func(*liteStmt) error
	}{
		{&kernelTable, r.kernel}, {&memcpyTable, r.memcpy}, {&memsetTable, r.memset},
		{&syncTable, r.sync}, {&runtimeTable, r.runtime}, {&nvtxTable, r.nvtx}, {&osrtTable, r.osrt},
	} {
		if r.s[t.spec.name] == nil {
			continue
		}
		if err := r.table(t.spec, t.row); err != nil {
			return err
		}
	}
	if err := r.threadNames(); err != nil {
		return err
	}
	return r.gpuNames()
}

// minRowBytes is less than the bytes any row of events takes in a file:
// the bound on the rows a file of a given size can hold.
const minRowBytes = 16

// grow makes room for the events to come, counted: the rows of the event
// tables, as SQLite counts the cells of their pages, no more than the file
// can hold or the limit allows. The builder then keeps the events in one
// slice and groups them in place (Builder.Grow), which saves a copy of
// them at the peak; room not used costs address space only.
func (r *reader) grow() error {
	var n int64
	for _, t := range eventTables {
		if r.s[t.name] == nil {
			continue
		}
		err := query(r.c, `SELECT count(*) FROM "`+t.name+`"`, func(v *liteStmt) error {
			c, _ := v.int(0)
			n += max(c, 0)
			return nil
		})
		if err != nil {
			return fmt.Errorf("table %s: %w", t.name, err)
		}
	}
	r.b.Grow(int(min(n, r.size/minRowBytes, int64(r.max))))
	return nil
}

// table streams the rows of spec's table through row.
func (r *reader) table(spec *tableSpec, row func(*liteStmt) error) error {
	q, err := r.s.selectList(spec)
	if err != nil {
		return err
	}
	if err := query(r.c, q, row); err != nil {
		return fmt.Errorf("table %s: %w", spec.name, err)
	}
	return nil
}

// stop returns the error that stops the read after a row was not added:
// a failed lookup, or a limit reached; nil when the row was dropped only.
func (r *reader) stop() error {
	if r.err != nil {
		return r.err
	}
	return r.b.Err()
}

// add adds e to track, within the limits.
func (r *reader) add(track int32, e trace.Event) error {
	if err := r.b.Err(); err != nil {
		return err
	}
	if r.b.NumEvents() >= r.max {
		return trace.Limitf("more than %d events (raise --max-events if the trace is genuine)", r.max)
	}
	r.b.Add(track, e)
	return nil
}

// span returns an event starting at column start of the row and ending at
// column end, false (and the row dropped) when they are not integers in
// order.
func (r *reader) span(v *liteStmt, start, end int32) (trace.Event, bool) {
	s, ok1 := v.int(start)
	e, ok2 := v.int(end)
	switch {
	case !ok1 || !ok2:
		r.drop("start or end not an integer")
		return trace.Event{}, false
	case e < s:
		r.drop("end before start")
		return trace.Event{}, false
	}
	ev := trace.Event{Start: s}
	r.b.SetDur(&ev, e-s)
	return ev, true
}

// corr returns the Event.Corr of the correlationId in column i.
func (r *reader) corr(v *liteStmt, i int32) uint32 {
	if id, ok := v.int(i); ok && id > 0 {
		return r.b.Corr(uint64(id))
	}
	return 0
}

// stream returns the track of a device's stream, false (and the row
// dropped) when they are not integers.
func (r *reader) stream(v *liteStmt, dev, stream int32) (int32, bool) {
	d, ok1 := v.int(dev)
	s, ok2 := v.int(stream)
	if !ok1 || !ok2 {
		r.drop("deviceId or streamId not an integer")
		return 0, false
	}
	if tr, ok := r.streams[[2]int64{d, s}]; ok {
		return tr, true
	}
	device := "GPU:" + strconv.FormatInt(d, 10)
	sid := strconv.FormatInt(s, 10)
	tr := r.b.Track("d"+strconv.FormatInt(d, 10)+"/"+sid, trace.Track{
		Kind: trace.TrackDevice, Device: device, Process: device,
		Thread: "stream " + sid, Name: device + " stream " + sid,
	})
	if r.b.Err() == nil {
		r.streams[[2]int64{d, s}] = tr
	}
	return tr, true
}

// thread returns a host thread by its globalTid (a serialized id: the
// process in bits 24-47, the thread in bits 0-23), nil (and the row
// dropped) when it is not an integer.
func (r *reader) thread(v *liteStmt, col int32) *thread {
	g, ok := v.int(col)
	if !ok {
		r.drop("globalTid not an integer")
		return nil
	}
	if th, ok := r.threads[g]; ok {
		return th
	}
	pid, tid := g>>24&0xffffff, g&0xffffff
	ts := strconv.FormatInt(tid, 10)
	tr := r.b.Track("t"+strconv.FormatInt(g, 10), trace.Track{
		Kind: trace.TrackHost, Process: strconv.FormatInt(pid, 10), Thread: ts, Name: "thread " + ts,
	})
	th := &thread{track: tr, tid: tid}
	if r.b.Err() == nil {
		r.threads[g] = th
	}
	return th
}

// deviceRow reads what every device row starts with: start, end, deviceId,
// streamId and correlationId, as device work on its stream's track; ok is
// false for a row to skip.
func (r *reader) deviceRow(v *liteStmt) (e trace.Event, tr int32, ok bool) {
	if e, ok = r.span(v, 0, 1); !ok {
		return e, 0, false
	}
	if tr, ok = r.stream(v, 2, 3); !ok {
		return e, 0, false
	}
	e.Kind, e.Corr = trace.KindWork, r.corr(v, 4)
	return e, tr, true
}

// kernel reads a CUPTI_ACTIVITY_KIND_KERNEL row: start, end, deviceId,
// streamId, correlationId, name.
func (r *reader) kernel(v *liteStmt) error {
	e, tr, ok := r.deviceRow(v)
	if !ok {
		return nil
	}
	if e.Name, ok = r.name(v, 5, useKernel); !ok {
		return r.stop()
	}
	r.work++
	return r.add(tr, e)
}

// memcpy reads a CUPTI_ACTIVITY_KIND_MEMCPY row: start, end, deviceId,
// streamId, correlationId, bytes, copyKind, srcKind, dstKind.
func (r *reader) memcpy(v *liteStmt) error {
	e, tr, ok := r.deviceRow(v)
	if !ok {
		return nil
	}
	kind, src, dst := intOr(v, 6, 0), intOr(v, 7, -1), intOr(v, 8, -1)
	e.Flags = trace.FlagMemcpy | copyFlags(kind, src, dst)
	e.Name = r.copyName(kind, src, dst)
	if n, ok := v.int(5); ok {
		r.b.CopyBytes(e.Corr, n)
	}
	r.work++
	return r.add(tr, e)
}

// memset reads a CUPTI_ACTIVITY_KIND_MEMSET row: start, end, deviceId,
// streamId, correlationId, bytes. In an export without kernels or copies
// (read before the memsets) a memset is no workload: the capture ended
// before the work began, while the program was still setting up its
// buffers. Its memsets are then kept as overlays, not work, and a warning
// says so.
func (r *reader) memset(v *liteStmt) error {
	e, tr, ok := r.deviceRow(v)
	if !ok {
		return nil
	}
	e.Flags = trace.FlagMemset
	if r.work == 0 {
		e.Kind = trace.KindOverlay
		r.memsets++
	}
	e.Name = r.b.Intern("Memset (Device)")
	if n, ok := v.int(5); ok {
		r.b.CopyBytes(e.Corr, n)
	}
	return r.add(tr, e)
}

// syncNames name CUPTI's synchronisation types (ENUM_CUPTI_SYNC_TYPE).
var syncNames = []string{"Unknown Sync", "Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync"}

// sync reads a CUPTI_ACTIVITY_KIND_SYNCHRONIZATION row (start, end,
// deviceId, streamId, correlationId, syncType): the device side of a
// synchronisation, which Kineto writes as a cuda_sync overlay on the
// stream. The host call that blocked is the runtime row of the same
// correlationId.
func (r *reader) sync(v *liteStmt) error {
	e, ok := r.span(v, 0, 1)
	if !ok {
		return nil
	}
	tr, ok := r.stream(v, 2, 3)
	if !ok {
		return nil
	}
	k := intOr(v, 5, 0)
	if k < 0 || k >= int64(len(syncNames)) {
		k = 0
	}
	e.Kind, e.Corr, e.Name = trace.KindOverlay, r.corr(v, 4), r.b.Intern(syncNames[k])
	return r.add(tr, e)
}

// runtime reads a CUPTI_ACTIVITY_KIND_RUNTIME row: start, end, globalTid,
// correlationId, nameId. Older exports record some calls twice, under
// the plain and the versioned name ("cudaMemcpy" and, inside it,
// "cudaMemcpy_v3020"), with one correlationId: the inner record is
// dropped.
func (r *reader) runtime(v *liteStmt) error {
	e, ok := r.span(v, 0, 1)
	if !ok {
		return nil
	}
	th := r.thread(v, 2)
	if th == nil {
		return r.stop()
	}
	e.Kind, e.Corr = trace.KindHost, r.corr(v, 3)
	if e.Name, ok = r.name(v, 4, useRuntime); !ok {
		return r.stop()
	}
	if e.Corr != 0 && e.Corr == th.lastCorr && e.Name == th.lastName && e.Start >= th.lastStart && e.End() <= th.lastE {
		return nil
	}
	th.lastCorr, th.lastName, th.lastStart, th.lastE = e.Corr, e.Name, e.Start, e.End()
	e.Flags = trace.HostFlags(r.b.Str(e.Name))
	return r.add(th.track, e)
}

// NVTX event types (ENUM_NSYS_EVENT_TYPE) the reader reads.
const (
	nvtxMark       = 34
	nvtxThreadName = 39
	nvtxPushPop    = 59
	nvtxStartEnd   = 60
	nvtxtMark      = 65
	nvtxtPushPop   = 70
	nvtxtStartEnd  = 71
)

// mpiRank reads the rank in the thread name the MPI tracing gives the
// rank's main thread.
var mpiRank = regexp.MustCompile(`^MPI Rank (\d+)$`)

// nvtx reads an NVTX_EVENTS row: start, end, eventType, text, textId,
// globalTid. Ranges are host events, marks instants; the name nsys's MPI
// tracing gives a rank's thread says the rank.
func (r *reader) nvtx(v *liteStmt) error {
	typ, _ := v.int(2)
	end := int32(1)
	switch typ {
	case nvtxThreadName:
		if s, ok := v.text(3); ok {
			if m := mpiRank.FindStringSubmatch(s); m != nil {
				r.b.Meta["rank"] = m[1]
			}
		}
		return nil
	case nvtxMark, nvtxtMark:
		end = 0 // an instant: it ends where it starts
	case nvtxPushPop, nvtxStartEnd, nvtxtPushPop, nvtxtStartEnd:
		if v.null(1) {
			r.drop("NVTX range without an end")
			return nil
		}
	default:
		return nil
	}
	e, ok := r.span(v, 0, end)
	if !ok {
		return nil
	}
	if v.null(5) {
		r.drop("NVTX event without a thread")
		return nil
	}
	th := r.thread(v, 5)
	if th == nil {
		return r.stop()
	}
	if s, isText := v.bytes(3); isText && len(s) > 0 {
		e.Name = r.b.InternBytes(s[:nvtxNameLen(s)])
	} else if e.Name, ok = r.name(v, 4, useNVTX); !ok {
		return r.stop()
	}
	e.Kind, e.Flags = trace.KindHost, trace.HostFlags(r.b.Str(e.Name))
	if typ == nvtxMark || typ == nvtxtMark {
		e.Flags |= trace.FlagInstant
	}
	return r.add(th.track, e)
}

// osrt reads an OSRT_API row (start, end, globalTid, nameId): a call into
// the OS runtime libraries (a blocking wait, a read, a sleep).
func (r *reader) osrt(v *liteStmt) error {
	e, ok := r.span(v, 0, 1)
	if !ok {
		return nil
	}
	th := r.thread(v, 2)
	if th == nil {
		return r.stop()
	}
	e.Kind = trace.KindHost
	if e.Name, ok = r.name(v, 3, useOSRT); !ok {
		return r.stop()
	}
	return r.add(th.track, e)
}

// intOr returns column i of the row as an integer, or def when it is not
// one.
func intOr(v *liteStmt, i int32, def int64) int64 {
	if n, ok := v.int(i); ok {
		return n
	}
	return def
}
