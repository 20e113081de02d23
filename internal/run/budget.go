package run

import (
	"bytes"
	"compress/gzip"
	"container/list"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"sync"

	"github.com/tracegap/tracegap/trace"
	"github.com/tracegap/tracegap/trace/chrome"
	"github.com/tracegap/tracegap/trace/nsight"
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
		return nil, fmt.Errorf("needs an estimated %d bytes of memory to analyse, more than the whole memory budget of %d bytes: %w", n, b.total, trace.ErrLimit)
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
		n, _ := e.estimate(r, size, in.Format)
		closeIn()
		total += n
	}
	return total
}

// The estimate of what an input needs. Reading and analysing Chrome JSON
// peaks at a quarter to a third of its bytes after decompression (the soft
// memory limit keeps it there, see heapBudget); XPlane events are smaller
// on the wire than in memory, and the realistic TPU capture peaked at four
// times its bytes; an Nsight export, whose rows are bigger than events and
// which holds tables the reader never reads, at most its bytes (0.9 times
// on a dense generated export, docs/performance.md). Each input also costs its read buffers and the
// process's share of fixed costs.
const (
	// headLen is how much of an input is peeked at: enough to inflate
	// the 512 bytes that tell the format from a gzip stream's start.
	headLen = 16 << 10
	// fixedNeed is the cost of an input of any size: its buffers, the
	// analysis's tables and the reports rendered from it. Measured on
	// small traces of many steps (serve's TestBombsAdmittedWithinBudget),
	// whose analysis outgrows their events: about 24 MiB each.
	fixedNeed = 32 << 20
	// gzipRatio is taken for a gzip input whose trailer cannot be trusted
	// (see trailerSize): real traces expand 5 to 30 times.
	gzipRatio = 10
)

// need estimates the peak memory of reading and analysing an input whose
// first bytes as stored are head, whose last four are tail (nil if
// unknown), of size bytes as stored (0 if unknown), with the format forced
// on it (empty: sniffed from head), read with at most maxBytes after
// decompression (0: the default). A stream of unknown size is estimated
// at the fixed cost: MaxBytes bounds its reading.
func need(head, tail []byte, size int64, format string, maxBytes int64) int64 {
	if maxBytes <= 0 {
		maxBytes = trace.DefaultMaxBytes
	}
	n, plain := size, head
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		n = trailerSize(tail, size)
		if n == 0 {
			n = size * gzipRatio
		}
		plain = inflate(head, 512)
	}
	n = min(n, maxBytes)
	switch {
	case format == "chrome" || (format == "" && chrome.Sniff(plain)):
		return fixedNeed + n/3
	case format == "nsight" || (format == "" && nsight.Sniff(plain)):
		return fixedNeed + n
	}
	return fixedNeed + 4*n
}

// trailerSize returns the decompressed size a gzip file of size bytes
// records in its last four bytes, when it can be trusted as trace.Read
// trusts it (the file is small enough that the size, kept modulo 4 GiB,
// has not wrapped), else 0.
func trailerSize(tail []byte, size int64) int64 {
	if len(tail) != 4 || size < 18 || size*30 >= 1<<32 {
		return 0
	}
	n := int64(binary.LittleEndian.Uint32(tail))
	if n < size {
		return 0
	}
	return n
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
