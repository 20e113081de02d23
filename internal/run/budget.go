package run

import (
	"bytes"
	"compress/gzip"
	"container/list"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/tracegap/tracegap/trace"
)

// Budget admits inputs by the memory they are estimated to need, so that
// a service analysing many uploads at once stays within the memory it was
// given: an input acquires its estimate before it is read and releases it
// when its analysis is done. Inputs wait their turn first come, first
// served, so a large one is not passed over for ever by small ones.
type Budget struct {
	mu      sync.Mutex
	total   int64
	used    int64
	waiting list.List // of *waiter, oldest first
}

type waiter struct {
	n     int64
	ready chan struct{} // closed when admitted
}

// NewBudget returns a budget of total bytes.
func NewBudget(total int64) *Budget { return &Budget{total: total} }

// InUse returns the bytes acquired and not yet released.
func (b *Budget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Acquire waits until n bytes fit in the budget, or ctx is done, and takes
// them; release gives them back. A need larger than the whole budget is
// refused at once with an error wrapping trace.ErrLimit, as reading refuses
// an input over a limit.
func (b *Budget) Acquire(ctx context.Context, n int64) (release func(), err error) {
	if n > b.total {
		return nil, fmt.Errorf("needs up to %d bytes of memory to analyse, by its size and format, more than the whole memory budget of %d bytes (raise --max-memory if the trace is genuine): %w", n, b.total, trace.ErrLimit)
	}
	release = sync.OnceFunc(func() { b.release(n) })
	b.mu.Lock()
	if b.waiting.Len() == 0 && b.used+n <= b.total {
		b.used += n
		b.mu.Unlock()
		return release, nil
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	elem := b.waiting.PushBack(w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return release, nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	select {
	case <-w.ready: // admitted meanwhile: give it back
		b.mu.Unlock()
		release()
	default:
		b.waiting.Remove(elem)
		b.admitLocked() // those behind it may fit now
		b.mu.Unlock()
	}
	return nil, fmt.Errorf("gave up waiting for %d bytes of the memory budget: %w", n, ctx.Err())
}

// reservation is memory taken from a budget for one input, which may
// grow as the input is read.
type reservation struct {
	b       *Budget
	n       int64
	release func()
}

// reserve acquires n bytes (as Acquire) as a reservation.
func (b *Budget) reserve(ctx context.Context, n int64) (*reservation, error) {
	r := &reservation{b: b, n: n}
	free, err := b.Acquire(ctx, n)
	if err != nil {
		return nil, err
	}
	r.release = sync.OnceFunc(func() { free(); b.release(r.n - n) })
	return r, nil
}

// grow takes what the reservation lacks of to bytes, if the budget has
// room for it now, else fails with an error wrapping trace.ErrLimit that
// says when ("after N bytes read"): an input being read or analysed does
// not wait for memory while holding some. Only the goroutine reading and
// analysing the input grows its reservation.
func (r *reservation) grow(to int64, when string) error {
	b := r.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if to <= r.n {
		return nil
	}
	if b.used+to-r.n > b.total {
		return fmt.Errorf("needs up to %d bytes of memory %s, more than the memory budget of %d bytes has room for (raise --max-memory if the trace is genuine): %w", to, when, b.total, trace.ErrLimit)
	}
	b.used += to - r.n
	r.n = to
	return nil
}

// gapNeed is the memory the analysis takes for each gap it attributes
// (its segments, stacks and tallies), beyond the trace's events: 1 M gaps
// between 1 M one-byte kernels take 534 MB more peak RSS than as many
// kernels without gaps (one core; /tmp/gapm in the note of issue 32).
const gapNeed = 560

// admitGaps grows the reservation, that of a trace read, by the memory of
// up to n gaps, for analyze.Options.Admit. r.n is read unlocked: only the
// goroutine that reads and analyses the input changes it (see grow).
func (r *reservation) admitGaps(n int) error {
	return r.grow(r.n+int64(n)*gapNeed, fmt.Sprintf("for its %d gaps", n))
}

func (b *Budget) release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	b.admitLocked()
}

// admitLocked admits waiters, oldest first, while the oldest fits.
func (b *Budget) admitLocked() {
	for e := b.waiting.Front(); e != nil; e = b.waiting.Front() {
		w := e.Value.(*waiter)
		if b.used+w.n > b.total {
			return
		}
		b.used += w.n
		b.waiting.Remove(e)
		close(w.ready)
	}
}

// Need returns the memory that reading and analysing the inputs together
// is estimated to need, as the budget would admit them: a caller that
// admits work itself (the service, which bounds its queue too) asks this
// and runs the engine without a Budget. A stream is counted at the fixed
// cost, and an input that cannot be opened at none: reading it names the
// error.
func (e *Engine) Need(ins ...Input) int64 {
	var total int64
	for _, in := range ins {
		if in.R != nil {
			total += fixedNeed
			continue
		}
		r, size, closeIn, err := open(in)
		if err != nil {
			continue
		}
		n, _, _ := e.estimate(r, size, in.Format)
		closeIn()
		total += n
	}
	return total
}

// The estimate of what an input needs is an upper bound whatever the
// input holds: its format's Need (trace.Format) of its bytes after
// decompression, which bounds its events by the smallest event the format
// encodes, and the fixed cost of any input. A gzip file's size after
// decompression is counted, by inflating it once, up to the limits its
// reading would stop at (MaxBytes, MaxRatio): the size its trailer
// records can be forged, and the compressed size times the largest ratio
// allowed (200) would count a real trace (5-30x) ten times over.
const (
	// headLen is how much of an input is peeked at: enough to inflate
	// the 512 bytes that tell the format from a gzip stream's start.
	headLen = 16 << 10
	// fixedNeed is the cost of an input of any size: its buffers, the
	// analysis's tables and the reports rendered from it. Measured on
	// small traces of many steps (serve's TestBombsAdmittedWithinBudget),
	// whose analysis outgrows their events: about 24 MiB each.
	fixedNeed = 32 << 20
)

// NeedDefault is the Need of a format that registers none: its plain
// bytes four times over.
func NeedDefault(plain int64) int64 { return 4 * plain }

// NeedOf returns the memory that reading and analysing plain bytes of f,
// holding events events (-1: not counted), takes at most (f.Need, or
// NeedDefault).
func NeedOf(f trace.Format, plain, events int64) int64 {
	if f.Need == nil {
		return NeedDefault(plain)
	}
	return f.Need(plain, events)
}

// need returns the memory that reading and analysing plain bytes
// (decompressed) of the format f, holding events events (-1: not
// counted), takes at most. An input of no known format (f nil) is counted
// as NeedDefault: reading it fails early.
func need(f *trace.Format, plain, events int64) int64 {
	if f == nil {
		return fixedNeed + NeedDefault(plain)
	}
	return fixedNeed + NeedOf(*f, plain, events)
}

// formatFor returns the format forced (format), else the one sniffed from
// head, the input's first bytes; nil when there is none.
func formatFor(head []byte, format string) *trace.Format {
	if format != "" {
		if f, err := trace.LookupFormat(format); err == nil {
			return &f
		}
		return nil
	}
	if f, ok := trace.SniffFormat(head); ok {
		return &f
	}
	return nil
}

// measure returns the bytes that the file src of size bytes holds after
// decompression (gz: it is gzip), counted, and the events its format f
// counts in them (-1 when it counts none), reading no further than reading
// it would accept (plus one byte, which reading refuses): opt's MaxBytes,
// and the ratio past its grace. A plain file is read only when its
// format counts events. A corrupt stream counts what came before the
// damage.
func measure(src io.ReaderAt, size int64, gz bool, f trace.Format, opt trace.Options) (plain, events int64) {
	maxBytes, ratio := opt.MaxBytes, opt.MaxRatio
	if maxBytes <= 0 {
		maxBytes = trace.DefaultMaxBytes
	}
	if ratio <= 0 {
		ratio = trace.DefaultMaxRatio
	}
	if !gz && f.Count == nil {
		return size, -1
	}
	var r io.Reader = io.NewSectionReader(src, 0, size)
	limit := maxBytes
	if gz {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return size, -1
		}
		r = zr
		if size < (limit-trace.RatioGrace)/ratio {
			limit = trace.RatioGrace + size*ratio
		}
	}
	lr := &io.LimitedReader{R: r, N: limit + 1}
	events = -1
	if f.Count != nil {
		if n, ok := f.Count(lr); ok {
			events = n
		}
	}
	io.Copy(io.Discard, lr) // a count that failed stopped early
	return limit + 1 - lr.N, events
}

// inflate returns up to n bytes of the start of the gzip stream gz, as
// many as it holds.
func inflate(gz []byte, n int) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil
	}
	out := make([]byte, n)
	k, _ := io.ReadFull(zr, out)
	return out[:k]
}
