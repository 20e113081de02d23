package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
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

// TestNeed checks the bound on an input's memory: its format's Need of
// its bytes after decompression, whatever its gzip trailer says.
func TestNeed(t *testing.T) {
	json := []byte(`{"traceEvents":[` + strings.Repeat(`{"ph":"X","name":"k"},`, 1000) + `{}]}`)
	xspace := []byte{0x0a, 0x05, 0x08, 0x01, 0x12, 0x01, 'x'}
	chromeNeed := func(n int64) int64 { return fixedNeed + n/2 + eventsNeed(n/18) }
	for _, tc := range []struct {
		name          string
		head          []byte
		plain, events int64
		format        string
		want          int64
	}{
		{"json", json, 3600, -1, "", chromeNeed(3600)},
		{"xplane", xspace, 3000, -1, "", fixedNeed + 3000 + eventsNeed(1500)},
		{"xplane, events counted", xspace, 3000, 7, "", fixedNeed + 3000 + eventsNeed(7)},
		{"forced chrome", xspace, 3600, -1, "chrome", chromeNeed(3600)},
		{"unknown format", []byte("hello"), 3000, -1, "", fixedNeed + 12000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := need(formatFor(tc.head, tc.format), tc.plain, tc.events); got != tc.want {
				t.Errorf("need = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestMeasure: a gzip file's size after decompression is counted, not
// read from its trailer, which a forged file sets low; the count stops
// where reading would refuse the input; XPlane's events are counted.
func TestMeasure(t *testing.T) {
	json := []byte(`{"traceEvents":[` + strings.Repeat(`{"ph":"X","name":"k"},`, 50000) + `{}]}`)
	gz := tracetest.Gzip(json)
	forged := bytes.Clone(gz)
	copy(forged[len(forged)-4:], []byte{100, 0, 0, 0}) // "100 bytes"
	chrome, _ := trace.LookupFormat("chrome")
	xplane, _ := trace.LookupFormat("xplane")
	empty := tracetest.EmptyEvents(5000, 0)
	for _, tc := range []struct {
		name          string
		data          []byte
		gz            bool
		f             trace.Format
		opt           trace.Options
		plain, events int64
	}{
		{"true trailer", gz, true, chrome, trace.Options{}, int64(len(json)), -1},
		{"forged trailer", forged, true, chrome, trace.Options{}, int64(len(json)), -1},
		{"capped by max bytes", gz, true, chrome, trace.Options{MaxBytes: 1000}, 1001, -1},
		{"capped by the ratio", gz, true, chrome, trace.Options{MaxRatio: 1}, trace.RatioGrace + int64(len(gz)) + 1, -1},
		{"plain chrome, not read", json, false, chrome, trace.Options{}, int64(len(json)), -1},
		{"xplane events counted", empty, false, xplane, trace.Options{}, int64(len(empty)), 5000},
		{"gzipped xplane events counted", tracetest.Gzip(empty), true, xplane, trace.Options{}, int64(len(empty)), 5000},
		{"xplane cut short", empty[:len(empty)-1], false, xplane, trace.Options{}, int64(len(empty)) - 1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "capped by the ratio" && int64(len(json)) <= tc.plain {
				t.Fatalf("the trace (%d bytes) is too small to pass the ratio", len(json))
			}
			plain, events := measure(bytes.NewReader(tc.data), int64(len(tc.data)), tc.gz, tc.f, tc.opt)
			if plain != tc.plain || events != tc.events {
				t.Errorf("measure = %d bytes, %d events; want %d, %d", plain, events, tc.plain, tc.events)
			}
		})
	}
}

// TestEngineBudget checks that the engine admits a file by its bound and
// gives it back once analysed, and refuses one over the budget, by its
// gaps once read; and that a stream, admitted by its first bytes, is
// checked again as it is read.
func TestEngineBudget(t *testing.T) {
	data := readFile(t, example)
	// The example expands to 102895 bytes of Chrome JSON; its one device
	// has 5 gaps between its work and one at each end.
	readNeed := int64(fixedNeed) + 102895/2 + eventsNeed(102895/18)
	fileNeed := readNeed + 7*gapNeed
	for _, budget := range []int64{fileNeed, fileNeed - 1, readNeed - 1} {
		e := &Engine{Analysis: analyze.DefaultOptions(), Budget: NewBudget(budget)}
		res, err := e.Analyze(context.Background(), Input{Path: example, Name: "example"})
		if budget == fileNeed && (err != nil || res.Verdict != analyze.DataBound) {
			t.Errorf("file, budget %d: %v, want the example analysed", budget, err)
		}
		if budget < fileNeed && (!errors.Is(err, trace.ErrLimit) || !strings.HasPrefix(err.Error(), "example: needs up to") || !strings.Contains(err.Error(), "--max-memory")) {
			t.Errorf("file, budget %d: %v, want a refusal naming the example and --max-memory", budget, err)
		}
		if gaps := strings.Contains(fmt.Sprint(err), "bytes of memory for its 7 gaps"); gaps != (budget == fileNeed-1) {
			t.Errorf("file, budget %d: %v; want the gaps named only once the trace is read", budget, err)
		}
		if e.Budget.InUse() != 0 {
			t.Errorf("file, budget %d: %d bytes still in use after the analysis", budget, e.Budget.InUse())
		}
	}
	stream := func() Input { return Input{R: io.MultiReader(bytes.NewReader(data)), Name: "example"} }
	admitted := int64(fixedNeed) + headLen/2 + eventsNeed(headLen/18)
	for _, tc := range []struct {
		budget int64
		want   string
	}{
		{1 << 30, ""},
		{admitted - 1, "example: needs up to"},
		{admitted, "bytes read, more than the memory budget of"},
	} {
		e := &Engine{Analysis: analyze.DefaultOptions(), Budget: NewBudget(tc.budget)}
		res, err := e.Analyze(context.Background(), stream())
		if tc.want == "" && (err != nil || res.Verdict != analyze.DataBound) {
			t.Errorf("stream, budget %d: %v, want the example analysed", tc.budget, err)
		}
		if tc.want != "" && (!errors.Is(err, trace.ErrLimit) || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("stream, budget %d: %v, want an error with %q", tc.budget, err, tc.want)
		}
		if e.Budget.InUse() != 0 {
			t.Errorf("stream, budget %d: %d bytes still in use after the analysis", tc.budget, e.Budget.InUse())
		}
	}
}

// eventsNeed is the memory that n events take (trace.EventsNeed).
func eventsNeed(n int64) int64 { return trace.EventsNeed(0, n, 1) }
