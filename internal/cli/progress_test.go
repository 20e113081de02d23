package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock that moves only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestProgressLine(t *testing.T) {
	const mb = 1_000_000
	tests := []struct {
		name    string
		total   int64
		reads   []int64 // bytes read so far, one report per 200 ms
		want    string  // the last line drawn
		noDraws bool
	}{
		{"small input draws nothing", 10 * mb, []int64{4 * mb, 8 * mb, 10 * mb}, "", true},
		{"half way", 1000 * mb, []int64{100 * mb, 250 * mb, 500 * mb},
			"reading 500 MB of 1.00 GB [############............]  50%  833 MB/s  1s left", false},
		{"read, analysing", 200 * mb, []int64{100 * mb, 200 * mb},
			"reading 200 MB of 200 MB [########################] 100%  analysing", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			clock := &fakeClock{t: time.Unix(1e9, 0)}
			p := newProgress(&out, clock.now)
			cb := p.watch()
			for _, r := range tc.reads {
				clock.advance(200 * time.Millisecond)
				cb(r, tc.total)
			}
			if tc.noDraws {
				if out.Len() != 0 {
					t.Fatalf("drew %q for a %d-byte input", out.String(), tc.total)
				}
				return
			}
			lines := strings.Split(out.String(), "\r")
			got := strings.TrimRight(lines[len(lines)-1], " ")
			if got != tc.want {
				t.Errorf("last line\n got %q\nwant %q", got, tc.want)
			}
			if n := len(lines) - 1; n != len(tc.reads) {
				t.Errorf("%d draws for %d reports 200 ms apart, want one each", n, len(tc.reads))
			}
		})
	}
}

// TestProgressThrottle checks that reports closer than progressEvery draw
// once, and that done clears what was drawn.
func TestProgressThrottle(t *testing.T) {
	var out bytes.Buffer
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	p := newProgress(&out, clock.now)
	cb := p.watch()
	clock.advance(time.Second)
	for i := int64(1); i <= 50; i++ {
		clock.advance(time.Millisecond)
		cb(i<<20, 100<<20)
	}
	if n := strings.Count(out.String(), "\r"); n != 1 {
		t.Errorf("%d draws for 50 reports within 50 ms, want 1", n)
	}
	drawn := p.drawn
	out.Reset()
	p.done()
	if want := "\r" + strings.Repeat(" ", drawn) + "\r"; out.String() != want || drawn == 0 {
		t.Errorf("done wrote %q, want the line blanked (%d cells)", out.String(), drawn)
	}
}

// TestProgressInputs checks that concurrent inputs add up on one line.
func TestProgressInputs(t *testing.T) {
	var out bytes.Buffer
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	p := newProgress(&out, clock.now)
	a, b := p.watch(), p.watch()
	clock.advance(time.Second)
	a(30<<20, 40<<20)
	b(10<<20, 40<<20)
	clock.advance(time.Second)
	a(40<<20, 40<<20)
	if p.read != 50<<20 || p.total != 80<<20 {
		t.Errorf("read %d of %d, want %d of %d", p.read, p.total, 50<<20, 80<<20)
	}
	if !strings.Contains(out.String(), "reading 52 MB of 84 MB") {
		t.Errorf("drew %q, want the two inputs' sum", out.String())
	}
}

func TestWantProgress(t *testing.T) {
	var buf bytes.Buffer
	if wantProgress(false, false, &buf) {
		t.Error("progress on a writer that is not a terminal")
	}
	var p *progress
	if p.watch() != nil {
		t.Error("a nil progress gave a callback")
	}
	p.done() // must not panic
}
