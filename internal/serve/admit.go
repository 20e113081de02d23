package serve

import (
	"container/list"
	"context"
	"net/http"
	"sync"
)

// admission bounds the analyses running at once twice over: by count (the
// slots) and by the memory their inputs are estimated to need. An upload
// asks for admission only once its body is on disk and its token checked,
// so that neither a slow client nor an unauthorised one holds anything an
// analysis needs. What does not fit at once waits, first come first
// served, if fewer than queue others wait; else it is refused at once.
type admission struct {
	slots  int
	memory int64 // 0: no memory bound
	queue  int

	// mu guards the fields below.
	mu      sync.Mutex
	running int
	used    int64
	waiting list.List // of *ticket, oldest first
}

type ticket struct {
	need  int64
	ready chan struct{} // closed when admitted
}

func newAdmission(slots int, memory int64, queue int) *admission {
	return &admission{slots: slots, memory: memory, queue: max(queue, 0)}
}

// errBusy is acquire's refusal of an upload that neither fits nor may
// wait; the server adds Retry-After.
var errBusy = errorf(http.StatusServiceUnavailable, "server busy")

// acquire admits an analysis needing need bytes, waiting in the queue if
// there is room. It fails with errBusy when the queue is full, with 413
// when need exceeds the whole memory bound, and with ctx's error when ctx
// ends while waiting.
func (a *admission) acquire(ctx context.Context, need int64) (release func(), err error) {
	if a.memory > 0 && need > a.memory {
		return nil, errorf(http.StatusRequestEntityTooLarge, "needs up to %s of memory to analyse, by its size after decompression and its format, more than the server's whole --max-memory of %s", humanSize(need), humanSize(a.memory))
	}
	release = func() { a.release(need) }
	a.mu.Lock()
	if a.waiting.Len() == 0 && a.fits(need) {
		a.take(need)
		a.mu.Unlock()
		return release, nil
	}
	if a.waiting.Len() >= a.queue {
		a.mu.Unlock()
		return nil, errBusy
	}
	t := &ticket{need: need, ready: make(chan struct{})}
	e := a.waiting.PushBack(t)
	a.mu.Unlock()
	select {
	case <-t.ready:
		return release, nil
	case <-ctx.Done():
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	select {
	case <-t.ready: // admitted meanwhile: hand it on
		a.running--
		a.used -= need
	default:
		a.waiting.Remove(e)
	}
	a.admitLocked()
	return nil, ctx.Err()
}

func (a *admission) fits(need int64) bool {
	return a.running < a.slots && (a.memory == 0 || a.used+need <= a.memory)
}

func (a *admission) take(need int64) {
	a.running++
	a.used += need
}

func (a *admission) release(need int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.running--
	a.used -= need
	a.admitLocked()
}

// admitLocked admits waiters, oldest first, while the oldest fits.
func (a *admission) admitLocked() {
	for e := a.waiting.Front(); e != nil; e = a.waiting.Front() {
		t := e.Value.(*ticket)
		if !a.fits(t.need) {
			return
		}
		a.take(t.need)
		a.waiting.Remove(e)
		close(t.ready)
	}
}

// state returns the analyses admitted, the memory they hold and the
// uploads waiting, for the metrics.
func (a *admission) state() (running int, used int64, waiting int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.running, a.used, a.waiting.Len()
}
