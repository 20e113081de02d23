package render

import (
	"math"
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
)

// shortDuration is human.Duration without trailing zeros, for settings: "20 us"
// rather than "20.0 us".
func shortDuration(ns int64) string {
	s := human.Duration(ns)
	num, unit, ok := strings.Cut(s, " ")
	if !ok || !strings.Contains(num, ".") {
		return s
	}
	return strings.TrimSuffix(strings.TrimRight(num, "0"), ".") + " " + unit
}

// shortPercent formats a fraction as a percentage without trailing zeros,
// for settings: "5%", "2.5%".
func shortPercent(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "-"
	}
	return strconv.FormatFloat(math.Round(f*1e4)/100, 'f', -1, 64) + "%"
}

// share returns part/whole, 0 when whole is not positive.
func share(part, whole int64) float64 {
	if whole <= 0 {
		return 0
	}
	return float64(part) / float64(whole)
}

// counted formats n things: "1 gap", "1,234 gaps".
func counted(n int, noun string) string {
	return count(n) + " " + human.Plural(n, noun)
}

// count formats an integer with thousands separators: "1,234,567".
func count(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// stackString joins a host stack outermost first: "a > b > c".
func stackString(stack []string) string {
	if len(stack) == 0 {
		return "(no event on this thread)"
	}
	return strings.Join(stack, " > ")
}

// shortStack keeps the innermost max names of a stack, marking the cut, so
// that a table cell says what the thread was doing right then.
func shortStack(stack []string, max int) string {
	if len(stack) <= max {
		return stackString(stack)
	}
	return "... > " + strings.Join(stack[len(stack)-max:], " > ")
}

// describeStack says in a few frames what the waited-for thread did during
// a gap: the frames its stretches of the gap's cause all share (the call it
// sat in, such as the DataLoader's __next__) and the innermost frame of the
// stack that took most of the gap (HostStack).
// A gap inside an input pipeline passes through thousands of short ops, and
// only the shared frames name the pipeline.
//
// A runtime gap whose thread waited inside a dispatch for another thread's
// runtime work names that work: the dispatch is not what held the device.
func describeStack(res *analyze.Result, g *analyze.Gap, frames int) string {
	main := HostStack(res, g)
	call := waitedCall(res, g)
	switch {
	case len(main) == 0 && call != "" && g.Cause != analyze.Runtime:
		return "blocked in " + call
	case len(main) > 0 && call != "" && g.Cause == analyze.Runtime:
		return main[len(main)-1] + " waiting on " + call
	}
	var common []string
	first := true
	for s := range res.Segments(g) {
		if s.Stack == 0 || s.Cause != g.Cause {
			continue
		}
		stack := res.Stack(s.Stack)
		if first {
			common, first = stack, false
			continue
		}
		n := 0
		for n < len(common) && n < len(stack) && common[n] == stack[n] {
			n++
		}
		common = common[:n]
	}
	if len(common) == 0 || len(main)-len(common) <= 1 {
		return shortStack(main, frames)
	}
	return shortStack(common, frames-1) + " > ... > " + main[len(main)-1]
}

// waitedCall names the call that the longest segment of a gap's cause was
// attributed to (Segment.Sync), for a sync or runtime gap, or "": when the
// waited-for thread shows nothing while another thread blocks, or waits in
// a dispatch while another thread does runtime work, that call is what
// held the device.
func waitedCall(res *analyze.Result, g *analyze.Gap) string {
	if g.Cause != analyze.InSync && g.Cause != analyze.AfterSync && g.Cause != analyze.Runtime {
		return ""
	}
	best := analyze.Segment{Dur: -1}
	for s := range res.Segments(g) {
		if s.Cause == g.Cause && s.Sync != 0 && s.Dur > best.Dur {
			best = s
		}
	}
	return res.CallName(best.Sync)
}
