package chrome

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/tracegap/tracegap/trace"
)

// Parallel parsing of big uncompressed files. The events array is cut into
// pieces at seams, places where one event ends and the next begins; workers
// parse the pieces at once, each into a batch of records; the main parser
// reads the file's head and tail (the document around the pieces) and, where
// the head's events end, replays the batches in file order through the very
// code that keeps an event in a serial read. The trace is thus identical to
// a serial read's: same events in the same order, same string table, same
// tracks, drops and warnings.
//
// A seam is only a guess (a "},{" may sit inside a string), so each is
// proved before it is used: the main parser must end an event exactly at the
// first seam, and each piece must parse as whole values ending exactly at
// the next seam. Anything else (a bad guess, invalid JSON in a piece, a
// piece that is not in the events array) abandons the parallel read and the
// file is read serially, which reports errors with their exact offsets.

// Tuning, variables so that tests can cut small traces into many pieces.
var (
	// parallelMin is the smallest input read in parallel.
	parallelMin int64 = 64 << 20
	// pieceBytes is the size of a piece: large against the cost of
	// starting one, small enough that batches in flight stay small.
	pieceBytes int64 = 4 << 20
	// parallelWorkers returns how many pieces are parsed at once.
	parallelWorkers = func() int { return runtime.GOMAXPROCS(0) }
)

// errSplice says a parallel read could not stand in for a serial one.
var errSplice = errors.New("parallel read abandoned")

// seam is a place where the events array may be cut: next is the offset of
// an event's opening brace, prev the offset just past the closing brace of
// the value before it. Only a comma and white space lie between.
type seam struct{ prev, next int64 }

// findSeams looks for a seam at every pieceBytes of the file.
func findSeams(ra io.ReaderAt, size int64) []seam {
	var seams []seam
	buf := make([]byte, 64<<10)
	for t := pieceBytes; t < size-pieceBytes/2; t += pieceBytes {
		if n := len(seams); n > 0 && t <= seams[n-1].next {
			continue
		}
		if s, ok := seamAfter(ra, t, size, buf); ok {
			seams = append(seams, s)
		}
	}
	return seams
}

// seamLook bounds the search for a seam after its target, and seamBack how
// far before an opening brace the comma and closing brace may be.
const (
	seamLook = 1 << 20
	seamBack = 64
)

// seamAfter returns the first seam whose opening brace is at or after t.
func seamAfter(ra io.ReaderAt, t, size int64, buf []byte) (seam, bool) {
	for from := t; from < min(t+seamLook, size); from += int64(len(buf) - seamBack) {
		base := max(from-seamBack, 0)
		n, _ := ra.ReadAt(buf, base)
		b := buf[:n]
		for i := int(from - base); i < len(b); i++ {
			j := bytes.IndexByte(b[i:], '{')
			if j < 0 {
				break
			}
			i += j
			if prev, ok := seamBefore(b, i); ok {
				return seam{prev: base + int64(prev), next: base + int64(i)}, true
			}
		}
		if n < len(buf) {
			break
		}
	}
	return seam{}, false
}

// seamBefore reports whether "}" white space "," white space comes right
// before b[i], and returns the offset just past that closing brace.
func seamBefore(b []byte, i int) (int, bool) {
	j := i - 1
	for j >= 0 && isSpace(b[j]) {
		j--
	}
	if j < 0 || b[j] != ',' {
		return 0, false
	}
	j--
	for j >= 0 && isSpace(b[j]) {
		j--
	}
	if j < 0 || b[j] != '}' {
		return 0, false
	}
	return j + 1, true
}

// readParallel reads the file opt.Source in parallel when it is big and
// there is more than one processor. ok is false when it did not: the caller
// then reads serially from the start.
func readParallel(opt trace.Options) (t *trace.Trace, ok bool, err error) {
	ra, size, workers := opt.Source, opt.SizeHint, parallelWorkers()
	if ra == nil || size < parallelMin || workers < 2 {
		return nil, false, nil
	}
	seams := findSeams(ra, size)
	if len(seams) < 2 {
		return nil, false, nil
	}
	first, last := seams[0], seams[len(seams)-1]
	p := newParser(io.MultiReader(
		io.NewSectionReader(ra, 0, first.next),
		io.NewSectionReader(ra, last.next, size-last.next)), opt)
	sp := startSplice(ra, seams, opt, workers)
	defer sp.stop()
	p.splice = sp
	err = p.document()
	if !sp.done { // the seams were wrong, or a piece did not parse
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	if t, err = p.finish(); err != nil {
		return nil, true, err
	}
	t.Bytes = size
	return t, true, nil
}

// splice runs the workers and hands their batches to the main parser.
type splice struct {
	at    int64 // where the head's last event ends
	shift int64 // file offset minus stream offset in the tail
	ends  []int64
	out   []chan *batch
	slots chan struct{} // bounds the batches in flight
	free  chan *batch   // batches replayed, for reuse
	quit  chan struct{}
	wg    sync.WaitGroup
	done  bool // the batches have been replayed
	opt   trace.Options
}

// startSplice starts parsing the pieces between the seams.
func startSplice(ra io.ReaderAt, seams []seam, opt trace.Options, workers int) *splice {
	n := len(seams) - 1
	sp := &splice{
		at:    seams[0].prev,
		shift: seams[n].next - seams[0].next,
		ends:  make([]int64, n),
		out:   make([]chan *batch, n),
		slots: make(chan struct{}, 2*workers),
		free:  make(chan *batch, 2*workers),
		quit:  make(chan struct{}),
		opt:   opt,
	}
	jobs := make(chan int)
	for k := range n {
		sp.out[k] = make(chan *batch, 1)
		sp.ends[k] = seams[k+1].prev
	}
	sp.wg.Add(workers + 1)
	go func() { // hands out pieces in order, no more than the slots allow
		defer sp.wg.Done()
		defer close(jobs)
		for k := range n {
			select {
			case sp.slots <- struct{}{}:
			case <-sp.quit:
				return
			}
			select {
			case jobs <- k:
			case <-sp.quit:
				return
			}
		}
	}()
	for range workers {
		go func() {
			defer sp.wg.Done()
			var win []byte // the decoder's window, reused piece after piece
			for k := range jobs {
				var b *batch
				select {
				case b = <-sp.free:
				default:
					b = &batch{keys: map[string]uint32{}}
				}
				win = b.parse(io.NewSectionReader(ra, seams[k].next, seams[k+1].prev-seams[k].next), opt, win)
				sp.out[k] <- b
			}
		}()
	}
	return sp
}

// stop ends the workers and waits for them.
func (sp *splice) stop() {
	close(sp.quit)
	sp.wg.Wait()
}

// spliceIn is called by the main parser before each element of an events
// array: where the head's events end, it replays the pieces' batches.
func (p *parser) spliceIn() error {
	sp := p.splice
	switch off := p.offset(); {
	case sp.done || off < sp.at:
		return nil
	case off > sp.at: // the first seam was not between two events
		return &fatalError{errSplice}
	}
	for k, ch := range sp.out {
		b := <-ch
		if b.err != nil {
			return &fatalError{errSplice}
		}
		if err := p.replay(b); err != nil {
			return err
		}
		if p.reserveAt > 0 && sp.ends[k] >= p.reserveAt {
			p.reserve(sp.ends[k])
		}
		select {
		case sp.free <- b:
		default:
		}
		<-sp.slots
		if sp.opt.Progress != nil {
			sp.opt.Progress(sp.ends[k], sp.opt.SizeHint)
		}
	}
	sp.done = true
	// From here on the decoder reads the tail: its input offsets are
	// the file's less the pieces.
	p.dec.base += sp.shift
	p.dec.span += sp.shift
	return nil
}

// batch is one piece's events, read but not yet kept.
type batch struct {
	recs    []record
	threads []thread
	strs    *trace.Builder // the piece's string table
	remap   []trace.StrID  // piece StrID to main StrID, 0 when not yet
	keys    map[string]uint32
	err     error
}

// thread is a (pid, tid) pair of a piece.
type thread struct{ pid, tid string }

// record is a rawEvent with its strings as piece StrIDs and thread index.
type record struct {
	ts, dur        int64
	corr, id       uint64
	bytes          int64
	device, stream int32
	name, cat      trace.StrID
	thread         uint32
	ph             byte
	flags          trace.Flag
	hasTs, hasID   bool
	hasArg         bool
	flowCat        bool
	argName, bad   string
}

// recordBytes is about the smallest event in Kineto JSON, to size a
// batch's records at once for a piece.
const recordBytes = 128

// parse parses the events read from r, which must be whole values
// separated by commas, into b, emptied first. It reads through the window
// win, if not nil, and returns the window for the next piece.
func (b *batch) parse(r io.Reader, opt trace.Options, win []byte) []byte {
	r = io.MultiReader(strings.NewReader("["), r, strings.NewReader("]"))
	p := newParser(r, opt)
	p.dec.buf = win
	b.strs, b.err = p.b, nil
	b.recs, b.threads = b.recs[:0], b.threads[:0]
	if cap(b.recs) == 0 {
		b.recs = make([]record, 0, pieceBytes/recordBytes)
	}
	clear(b.remap)
	clear(b.keys)
	b.err = b.events(p)
	return p.dec.buf
}

// events reads the elements of the piece's array into b.
func (b *batch) events(p *parser) error {
	d := p.dec
	if _, err := d.readToken(); err != nil {
		return err
	}
	for {
		switch d.peekKind() {
		case ']':
			if _, err := d.readToken(); err != nil {
				return err
			}
			if _, ok := d.space(); ok || d.failure != nil {
				return errSplice // something after the closing bracket
			}
			return nil
		case '{':
			if err := p.readEvent(); err != nil {
				return err
			}
		default:
			v, err := d.readValue()
			if err != nil {
				return err
			}
			p.ev.reset()
			p.ev.bad = "event is a JSON " + kindName(kind(v[0])) + ", expected an object"
		}
		b.add(&p.ev)
	}
}

// add appends the event e as a record.
func (b *batch) add(e *rawEvent) {
	var key [64]byte
	k := append(append(append(key[:0], e.pid...), 0), e.tid...)
	th, ok := b.keys[string(k)]
	if !ok {
		th = uint32(len(b.threads))
		b.threads = append(b.threads, thread{string(e.pid), string(e.tid)})
		b.keys[string(k)] = th
	}
	b.recs = append(b.recs, record{
		ts: e.ts, dur: e.dur, corr: e.corr, id: e.id, bytes: e.bytes, device: int32(e.device), stream: int32(e.stream),
		name: e.name, cat: e.cat, thread: th, ph: e.ph, flags: e.flags,
		hasTs: e.hasTs, hasID: e.hasID, hasArg: e.hasArg, flowCat: e.flowCat,
		argName: string(e.argName), bad: e.bad,
	})
}

// replay keeps the batch's events as a serial read would have.
func (p *parser) replay(b *batch) error {
	e := &p.ev
	for i := range b.recs {
		r := &b.recs[i]
		e.reset()
		th := &b.threads[r.thread]
		e.pid = append(e.pid, th.pid...)
		e.tid = append(e.tid, th.tid...)
		// A serial read interns an event's name and cat in the order
		// they come in the object; in a piece, that is their ID order.
		lo, hi := min(r.name, r.cat), max(r.name, r.cat)
		b.str(p.b, lo)
		b.str(p.b, hi)
		e.name, e.cat = b.str(p.b, r.name), b.str(p.b, r.cat)
		e.ph, e.ts, e.dur, e.hasTs = r.ph, r.ts, r.dur, r.hasTs
		e.corr, e.id, e.hasID, e.bytes = r.corr, r.id, r.hasID, r.bytes
		e.device, e.stream, e.flags, e.flowCat = int64(r.device), int64(r.stream), r.flags, r.flowCat
		e.argName = append(e.argName, r.argName...)
		e.hasArg, e.bad = r.hasArg, r.bad
		if err := p.keep(); err != nil {
			return err
		}
	}
	return nil
}

// str maps a piece StrID into the main string table, interning the string
// on its first use.
func (b *batch) str(main *trace.Builder, id trace.StrID) trace.StrID {
	if id == 0 {
		return 0
	}
	if int(id) >= len(b.remap) {
		b.remap = append(b.remap, make([]trace.StrID, int(id)+1-len(b.remap))...)
	}
	if b.remap[id] == 0 {
		b.remap[id] = main.InternFrom(b.strs, id)
	}
	return b.remap[id]
}
