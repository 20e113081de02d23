package xplane

import (
	"errors"
	"runtime"
	"sync"

	"github.com/tracegap/tracegap/trace"
)

// With more than one processor, a plane's events are decoded by several
// goroutines: once the plane's metadata is read, its lines' events depend
// on nothing but their bytes. The scan notes where every chunkEvents-th
// event of a line starts; workers decode such chunks into Events, and the
// decoder adds them to the trace in file order, making the tracks as it
// goes. A worker never touches the Builder: a chunk with anything that
// would (an event to drop, a metadata id the plane does not define, a step
// name to make up, a correlation id to key, a duration to cut, an error)
// is decoded again by the decoder itself, in order, exactly as a serial
// read does. The trace is the same either way.

// chunkEvents is how many events a chunk of a line holds: 1.25 MB of
// Events, about 1 MB of input. A variable for tests.
var chunkEvents = 32 << 10

// parallelMin is how many events a plane has at least for its chunks to be
// decoded in parallel. A variable for tests.
var parallelMin = 4 * chunkEvents

// workers returns how many goroutines decode chunks. A variable for tests.
var workers = func() int { return runtime.GOMAXPROCS(0) }

// errSerial says that a chunk must be decoded by the decoder itself.
var errSerial = errors.New("chunk needs the serial decoder")

// chunk is a run of one line's events.
type chunk struct {
	line   int
	lo, hi int // the bytes of its events
	first  int // the line's index of its first event
	events []trace.Event
	copies []copySize // the sizes of its copies, for the Builder
	err    error
	done   chan struct{}
}

// parallel reports whether a plane's lines are decoded by several
// goroutines.
func (d *decoder) parallel(pl *planeScan) bool {
	return pl.events >= parallelMin && workers() > 1
}

// chunks cuts a plane's lines into chunks.
func chunks(pl *planeScan) []*chunk {
	var cs []*chunk
	for i, h := range pl.lines {
		lo := h.events.lo
		for k, cut := range h.cuts {
			cs = append(cs, &chunk{line: i, lo: lo, hi: cut, first: k * chunkEvents, done: make(chan struct{})})
			lo = cut
		}
		if lo < h.events.hi || len(h.cuts) == 0 {
			cs = append(cs, &chunk{line: i, lo: lo, hi: h.events.hi, first: len(h.cuts) * chunkEvents, done: make(chan struct{})})
		}
	}
	return cs
}

// readLinesParallel decodes a plane's lines, whose metadata is read, with
// a worker per processor, and adds their events in file order.
func (d *decoder) readLinesParallel(pl *planeScan, pk planeKind) error {
	cs := chunks(pl)
	p := d.startPool(cs, pl, pk)
	defer p.stop()
	states := make([]lineState, len(pl.lines))
	for i, h := range pl.lines {
		states[i] = newLineState(h, pk)
	}
	for _, c := range cs {
		<-c.done
		if err := d.addChunk(c, &states[c.line]); err != nil {
			return err
		}
		p.release(c)
		d.dropBehind(c.hi) // no worker reads a chunk added
	}
	return nil
}

// pool runs the workers of one plane. At most a few chunks per worker are
// handed out ahead of the one being added, which bounds their memory.
type pool struct {
	ahead chan struct{} // a token per chunk handed out and not yet added
	jobs  chan *chunk
	// free holds the event slices of added chunks for the next ones:
	// fresh ones for every chunk were garbage the size of the trace,
	// which the heap grew by.
	free chan []trace.Event
	quit chan struct{}
	wg   sync.WaitGroup
}

// startPool starts a goroutine handing out the chunks cs in order and the
// workers decoding them.
func (d *decoder) startPool(cs []*chunk, pl *planeScan, pk planeKind) *pool {
	n := workers()
	p := &pool{ahead: make(chan struct{}, 4*n), jobs: make(chan *chunk, 4*n), free: make(chan []trace.Event, 5*n), quit: make(chan struct{})}
	p.wg.Go(func() {
		defer close(p.jobs)
		for _, c := range cs {
			select {
			case p.ahead <- struct{}{}:
				p.jobs <- c
			case <-p.quit:
				return
			}
		}
	})
	for range n {
		w := d.worker()
		p.wg.Go(func() {
			if w.mapped != nil {
				defer guardFaults()()
			}
			for c := range p.jobs {
				select {
				case <-p.quit: // the read failed: skip what is left
				default:
					w.decodeChunk(c, pl.lines[c.line], pk, p.free)
				}
				close(c.done)
			}
		})
	}
	return p
}

// release gives back the token and the event slice of an added chunk.
func (p *pool) release(c *chunk) {
	select {
	case p.free <- c.events[:0]:
	default:
	}
	c.events = nil
	<-p.ahead
}

// stop tells the goroutines to stop and waits for them: none outlives the
// read, whether it failed or not.
func (p *pool) stop() {
	close(p.quit)
	p.wg.Wait()
}

// worker returns a decoder for chunks of the plane whose metadata d has
// just read: with copies of the metadata tables, which the decoder may
// add to while the workers read them, and a window of its own.
func (d *decoder) worker() *decoder {
	w := &decoder{
		wire:   wire{buf: d.buf, base: d.base, size: d.size, src: d.src, mapped: d.mapped, keep: true, plane: d.plane, line: -1, event: -1},
		stats:  d.stats.clone(),
		kinds:  d.kinds,
		events: d.events.clone(),
	}
	if d.src != nil {
		w.buf, w.base = nil, 0
	}
	return w
}

// decodeChunk decodes the events of c into c.events, in a slice from free
// if there is one, or sets c.err.
func (d *decoder) decodeChunk(c *chunk, h lineHead, pk planeKind, free chan []trace.Event) {
	select {
	case d.out = <-free:
	default:
	}
	if d.out == nil { // nil would mean the serial decoder (see add)
		d.out = make([]trace.Event, 0, chunkEvents)
	}
	ls := newLineState(h, pk)
	c.err = d.readChunk(c, &ls)
	c.events, d.out = d.out, nil
	c.copies, d.copies = d.copies, nil
}

// readChunk decodes a chunk's events. A fault on a mapped file that got
// shorter is an error here, like any other the chunk has: the decoder then
// reads the chunk itself and reports it.
func (d *decoder) readChunk(c *chunk, ls *lineState) (err error) {
	defer fileChanged(d.src, d.size, &err)
	return d.readEvents(c.lo, c.hi, c.first, ls)
}

// copySize is the size of the copy of a correlation id.
type copySize struct {
	corr  uint32
	bytes int64
}

// addToChunk is add for a worker: it keeps the events that need nothing
// from the Builder and gives up on the chunk at any other.
func (d *decoder) addToChunk(ev *rawEvent, ls *lineState) error {
	if ev.occurrences {
		return errSerial
	}
	start, dur, ok := eventTimes(ls.head.ts, ev.off, ev.dur)
	if !ok {
		return errSerial
	}
	m, ok := d.events.ref(ev.meta)
	if !ok {
		return errSerial
	}
	d.out = append(d.out, trace.Event{})
	e := &d.out[len(d.out)-1]
	if !setEvent(e, ev, ls, m, start, dur) || ev.stats.corr >= trace.WideCorr || dur > trace.MaxDur {
		d.out = d.out[:len(d.out)-1]
		return errSerial
	}
	if ev.stats.bytes > 0 {
		d.copies = append(d.copies, copySize{e.Corr, ev.stats.bytes})
	}
	return nil
}

// addChunk adds a decoded chunk's events to the trace, or decodes the
// chunk again itself when the worker gave up on it.
func (d *decoder) addChunk(c *chunk, ls *lineState) error {
	d.line = c.line
	defer func() { d.line = -1 }()
	if c.err != nil {
		return d.readEvents(c.lo, c.hi, c.first, ls)
	}
	evs := c.events
	if len(evs) > 0 && ls.track < 0 {
		ls.track = d.track(ls)
		if err := d.b.Err(); err != nil {
			return err
		}
	}
	for _, c := range c.copies {
		d.b.CopyBytes(c.corr, c.bytes)
	}
	room := d.maxEvents - d.b.NumEvents()
	d.b.AddTrack(ls.track, evs[:max(min(room, len(evs)), 0)])
	if room < len(evs) {
		return eventsLimit(d.maxEvents, ls)
	}
	if d.progress != nil {
		d.progress(c.hi)
	}
	return nil
}
