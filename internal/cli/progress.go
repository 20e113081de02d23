package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Progress bar tuning: inputs smaller than progressMin read too fast for a
// bar to help, and redrawing more often than progressEvery only costs.
const (
	progressMin   = 50 << 20
	progressEvery = 100 * time.Millisecond
	progressWidth = 24 // cells of the bar itself
)

// progress draws one line on a terminal while traces are read: the bytes
// read of all inputs started so far, a bar, the rate and the time left.
// Several inputs read at once (analyze -j) share the line. A nil *progress
// draws nothing, so callers need not check.
type progress struct {
	w   io.Writer
	now func() time.Time

	mu          sync.Mutex
	read, total int64
	start, last time.Time
	drawn       int // width of the line on screen, 0 when none
}

// newProgress returns a progress line on w, a terminal; now is the clock
// (time.Now, or a fake one in tests).
func newProgress(w io.Writer, now func() time.Time) *progress {
	return &progress{w: w, now: now, start: now()}
}

// watch returns a callback for trace.Options.Progress that counts one
// input's bytes into the line. It returns nil on a nil *progress.
func (p *progress) watch() func(read, total int64) {
	if p == nil {
		return nil
	}
	var seen, last int64
	return func(read, total int64) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if total > seen { // the input's size, on its first report
			p.total += total - seen
			seen = total
		}
		p.read += read - last
		last = read
		p.drawLocked(false)
	}
}

// drawLocked redraws the line, at most every progressEvery unless force.
func (p *progress) drawLocked(force bool) {
	t := p.now()
	if p.total < progressMin || (!force && t.Sub(p.last) < progressEvery) {
		return
	}
	p.last = t
	line := p.line(t.Sub(p.start))
	pad := max(p.drawn-len(line), 0)
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", pad))
	p.drawn = len(line)
}

// line renders the state after elapsed time.
func (p *progress) line(elapsed time.Duration) string {
	read := min(p.read, p.total)
	frac := float64(read) / float64(p.total)
	cells := int(frac * progressWidth)
	bar := strings.Repeat("#", cells) + strings.Repeat(".", progressWidth-cells)
	s := fmt.Sprintf("reading %s of %s [%s] %3.0f%%", megabytes(read), megabytes(p.total), bar, frac*100)
	if read >= p.total {
		return s + "  analysing"
	}
	secs := elapsed.Seconds()
	if secs < 0.5 || read == 0 {
		return s
	}
	rate := float64(read) / secs
	left := time.Duration(float64(p.total-read) / rate * float64(time.Second))
	return s + fmt.Sprintf("  %.0f MB/s  %s left", rate/1e6, left.Round(time.Second))
}

// megabytes formats a byte count for the line.
func megabytes(n int64) string {
	if n >= 1e9 {
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	}
	return fmt.Sprintf("%.0f MB", float64(n)/1e6)
}

// done clears the line, so that what is printed next starts clean.
func (p *progress) done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.drawn))
		p.drawn = 0
	}
}

// wantProgress reports whether analyze should draw a progress line: only
// on a terminal, never for JSON output or with --quiet.
func wantProgress(jsonOut, quiet bool, stderr io.Writer) bool {
	return !jsonOut && !quiet && isTerminal(stderr)
}
