package run

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/analyze"
	"github.com/tracegap/tracegap/trace"
	"github.com/tracegap/tracegap/trace/tracetest"
)

// TestBudgetAccounting takes and gives back parts of a budget: a need that
// fits is taken at once, one that does not waits for a release, one over
// the whole budget is refused, and releasing twice gives back once.
func TestBudgetAccounting(t *testing.T) {
	ctx := context.Background()
	b := NewBudget(100)
	r60, err := b.Acquire(ctx, 60)
	if err != nil || b.InUse() != 60 {
		t.Fatalf("acquire 60: %v, in use %d; want 60", err, b.InUse())
	}
	if _, err := b.Acquire(ctx, 101); !errors.Is(err, trace.ErrLimit) || !strings.Contains(err.Error(), "more than the whole memory budget of 100 bytes") {
		t.Errorf("acquire 101 of 100: %v, want a refusal wrapping trace.ErrLimit", err)
	}
	admitted := make(chan func())
	go func() {
		r, err := b.Acquire(ctx, 50)
		if err != nil {
			t.Error(err)
		}
		admitted <- r
	}()
	waitFor(t, b, 1)
	if b.InUse() != 60 {
		t.Errorf("in use %d while 50 wait, want 60", b.InUse())
	}
	r60()
	r50 := <-admitted
	if b.InUse() != 50 {
		t.Errorf("in use %d after the release, want 50", b.InUse())
	}
	r60() // a second release must not give back twice
	if b.InUse() != 50 {
		t.Errorf("in use %d after releasing twice, want 50", b.InUse())
	}
	r50()
	if b.InUse() != 0 {
		t.Errorf("in use %d after every release, want 0", b.InUse())
	}
}

// TestBudgetOrder checks that waiters are admitted oldest first, that a
// small need does not pass a large one waiting before it, and that one
// giving up lets those behind it in.
func TestBudgetOrder(t *testing.T) {
	b := NewBudget(100)
	hold, _ := b.Acquire(context.Background(), 90)
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error)
	go func() {
		_, err := b.Acquire(ctx, 80)
		gaveUp <- err
	}()
	waitFor(t, b, 1)
	small := make(chan func())
	go func() {
		r, _ := b.Acquire(context.Background(), 10)
		small <- r
	}()
	waitFor(t, b, 2) // 10 fits beside 90, but waits behind 80
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v, want context.Canceled", err)
	}
	(<-small)()
	hold()
	if b.InUse() != 0 || b.waiters() != 0 {
		t.Errorf("in use %d with %d waiting at the end, want 0 and 0", b.InUse(), b.waiters())
	}
}

// waitFor waits until n acquisitions wait in b.
func waitFor(t *testing.T, b *Budget, n int) {
	t.Helper()
	for b.waiters() != n {
		runtime.Gosched()
	}
}

func (b *Budget) waiters() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.waiting.Len()
}

// TestNeed checks the estimate of an input's memory from its head.
func TestNeed(t *testing.T) {
	json := []byte(`{"traceEvents":[` + strings.Repeat(`{"ph":"X","name":"k"},`, 1000) + `{}]}`)
	gz := tracetest.Gzip(json)
	n, zn := int64(len(json)), int64(len(gz))
	xspace := []byte{0x0a, 0x05, 0x08, 0x01, 0x12, 0x01, 'x'}
	for _, tc := range []struct {
		name       string
		head, tail []byte
		size       int64
		format     string
		max        int64
		want       int64
	}{
		{"json: a third", json, nil, 3000, "", 0, fixedNeed + 1000},
		{"xplane: four times", xspace, nil, 3000, "", 0, fixedNeed + 12000},
		{"forced chrome", xspace, nil, 3000, "chrome", 0, fixedNeed + 1000},
		{"nsight: its size", []byte("SQLite format 3\x00\x10\x00"), nil, 3000, "", 0, fixedNeed + 3000},
		{"gzip json, trailer", gz, gz[zn-4:], zn, "", 0, fixedNeed + n/3},
		{"gzip json, no trailer", gz, nil, zn, "", 0, fixedNeed + zn*gzipRatio/3},
		// A trailer smaller than the file cannot be the size.
		{"gzip json, short trailer", gz, []byte{1, 0, 0, 0}, zn, "", 0, fixedNeed + zn*gzipRatio/3},
		{"capped by max bytes", json, nil, 3000, "", 600, fixedNeed + 200},
		{"stream of unknown size", json, nil, 0, "", 0, fixedNeed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := need(tc.head, tc.tail, tc.size, tc.format, tc.max); got != tc.want {
				t.Errorf("need = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestEngineBudget checks that the engine admits an input by its estimate
// and gives it back once analysed, and refuses one over the budget, for a
// file and for a stream (whose gzip trailer cannot be read).
func TestEngineBudget(t *testing.T) {
	data := readFile(t, example)
	for _, tc := range []struct {
		name string
		in   func() Input
		need int64
	}{
		// The example expands to 102895 bytes, as its trailer records.
		{"file", func() Input { return Input{Path: example, Name: "example"} }, fixedNeed + 102895/3},
		{"stream", func() Input {
			return Input{R: io.MultiReader(bytes.NewReader(data)), Size: int64(len(data)), Name: "example"}
		},
			fixedNeed + int64(len(data))*gzipRatio/3},
	} {
		for _, budget := range []int64{tc.need, tc.need - 1} {
			e := &Engine{Analysis: analyze.DefaultOptions(), Budget: NewBudget(budget)}
			res, err := e.Analyze(context.Background(), tc.in())
			if budget == tc.need && (err != nil || res.Verdict != analyze.DataBound) {
				t.Errorf("%s, budget %d: %v, want the example analysed", tc.name, budget, err)
			}
			if budget < tc.need && (!errors.Is(err, trace.ErrLimit) || !strings.HasPrefix(err.Error(), "example: needs an estimated")) {
				t.Errorf("%s, budget %d: %v, want a refusal naming the example", tc.name, budget, err)
			}
			if e.Budget.InUse() != 0 {
				t.Errorf("%s, budget %d: %d bytes still in use after the analysis", tc.name, budget, e.Budget.InUse())
			}
		}
	}
}
