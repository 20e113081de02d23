package job

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/trace/tracefile"
)

// SummarySuffix ends the name of a rank summary's file: a directory of
// inputs that holds such files is read for them, as the ranks of a job.
const SummarySuffix = ".summary.json.gz"

// MaxSummaryBytes bounds a summary's JSON once decompressed: far above what
// a rank's summary holds, it keeps a hostile file from taking the merge's
// memory.
const MaxSummaryBytes = 1 << 30

// WriteSummary writes s as gzip-compressed JSON, the form ReadSummary and
// the job mode of `tracegap analyze` read.
func WriteSummary(w io.Writer, s *Summary) error {
	zw := gzip.NewWriter(w)
	enc := json.NewEncoder(zw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(asWritten(s)); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// ReadSummary reads a summary written by WriteSummary, compressed or not,
// and checks that it is whole and of this version. Whether it was made
// with the options of the job analysis is Merge's to check.
func ReadSummary(r io.Reader) (*Summary, error) {
	br := bufio.NewReader(r)
	var in io.Reader = br
	if head, _ := br.Peek(2); tracefile.IsGzip(head) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("read summary: %w", err)
		}
		defer zr.Close()
		in = zr
	}
	lr := &io.LimitedReader{R: in, N: MaxSummaryBytes + 1}
	dec := json.NewDecoder(lr)
	var s Summary
	ws := summaryJSON{Summary: &s}
	if err := dec.Decode(&ws); err != nil {
		if lr.N <= 0 {
			return nil, fmt.Errorf("read summary: over %d bytes of JSON: expected a rank summary", MaxSummaryBytes)
		}
		return nil, fmt.Errorf("read summary: %w: expected a tracegap rank summary (tracegap summarize)", err)
	}
	// Read the compressed stream to its end: gzip checks its checksum and
	// length there, which a flipped bit or a cut trailer fails, after
	// JSON that may decode whole.
	if _, err := io.Copy(io.Discard, lr); err != nil {
		return nil, fmt.Errorf("read summary: %w: expected a whole, undamaged summary", err)
	}
	if err := s.check(nil); err != nil {
		return nil, err
	}
	if err := ws.restore(); err != nil {
		return nil, err
	}
	return &s, nil
}

// summaryJSON is a summary as written: the rank's result keeps its gaps'
// segments in tables of its own, which JSON does not see, so they are
// written beside it as those tables (a long trace has millions of
// segments, on a few hundred stacks); its devices' busy intervals
// (hundreds of thousands on a long trace) are written beside it too,
// packed (see packIntervals).
type summaryJSON struct {
	*Summary
	Segments *analyze.SegmentTables `json:"segments"`
	Busy     [][]byte               `json:"busy"`
}

// asWritten returns s as WriteSummary writes it: the result's segments
// and busy intervals beside it, the result itself without the intervals.
func asWritten(s *Summary) summaryJSON {
	ws := summaryJSON{Summary: s}
	if s.Result == nil {
		return ws
	}
	ws.Segments = s.Result.SegmentTables()
	r := *s.Result
	r.Devices = slices.Clone(r.Devices)
	for i := range r.Devices {
		ws.Busy = append(ws.Busy, packIntervals(r.Devices[i].Intervals))
		r.Devices[i].Intervals = nil
	}
	sum := *s
	sum.Result = &r
	ws.Summary = &sum
	return ws
}

// packIntervals encodes intervals as varints: each one's start less the
// previous one's end, then its length (zig-zag, so that any intervals
// come back exactly; merged busy intervals take 2 to 8 bytes each).
func packIntervals(ivs []analyze.Interval) []byte {
	var b []byte
	var at int64
	for _, iv := range ivs {
		b = binary.AppendVarint(b, iv.Start-at)
		b = binary.AppendVarint(b, iv.End-iv.Start)
		at = iv.End
	}
	return b
}

// unpackIntervals decodes what packIntervals encoded.
func unpackIntervals(b []byte) ([]analyze.Interval, error) {
	var ivs []analyze.Interval
	var at int64
	for len(b) > 0 {
		d, n := binary.Varint(b)
		if n <= 0 {
			return nil, errors.New("busy intervals cut short")
		}
		dur, m := binary.Varint(b[n:])
		if m <= 0 {
			return nil, errors.New("busy intervals cut short")
		}
		b = b[n+m:]
		start := at + d
		ivs = append(ivs, analyze.Interval{Start: start, End: start + dur})
		at = start + dur
	}
	return ivs, nil
}

// restore gives the result's gaps their segments back.
func (ws *summaryJSON) restore() error {
	r := ws.Summary.Result
	if r == nil {
		return nil
	}
	if ws.Segments == nil {
		return errors.New("read summary: no segments: expected the result's segment tables")
	}
	if len(ws.Busy) != len(r.Devices) {
		return fmt.Errorf("read summary: busy intervals of %d devices for %d devices: expected a list per device", len(ws.Busy), len(r.Devices))
	}
	for i, b := range ws.Busy {
		ivs, err := unpackIntervals(b)
		if err != nil {
			return fmt.Errorf("read summary: device %d: %w", i, err)
		}
		r.Devices[i].Intervals = ivs
	}
	if err := r.SetSegmentTables(ws.Segments); err != nil {
		return fmt.Errorf("read summary: %w", err)
	}
	return nil
}

// LooksLikeSummary reports whether head, the first bytes of a file, start
// a summary, compressed or not.
func LooksLikeSummary(head []byte) bool {
	if tracefile.IsGzip(head) {
		zr, err := gzip.NewReader(bytes.NewReader(head))
		if err != nil {
			return false
		}
		head, _ = io.ReadAll(io.LimitReader(zr, 64))
	}
	return bytes.HasPrefix(head, []byte(`{"format":"`+SummaryFormat+`"`))
}

// check reports the first thing about s that a merge cannot use: another
// format or version, indexes out of range, intervals out of order, and,
// when opt is set, analysis options other than opt.
func (s *Summary) check(opt *analyze.Options) error {
	switch {
	case s.Format != SummaryFormat:
		return fmt.Errorf("format %q: expected a tracegap rank summary (%q)", s.Format, SummaryFormat)
	case s.Version != SummaryVersion:
		return fmt.Errorf("summary version %d: expected version %d (summarize the trace again with this tracegap)", s.Version, SummaryVersion)
	case s.Result == nil:
		return errors.New("summary holds no result: expected a whole rank summary")
	case opt != nil && !sameOptions(&s.Result.Options, opt):
		return optionsError(&s.Result.Options, opt)
	case len(s.Devices) != len(s.Result.Devices):
		return fmt.Errorf("%d device summaries for %d devices: expected one per device", len(s.Devices), len(s.Result.Devices))
	}
	for _, i := range s.Result.TopGaps {
		if i < 0 || i >= len(s.Result.Gaps) {
			return fmt.Errorf("top gap %d of %d gaps: expected an index of a gap", i, len(s.Result.Gaps))
		}
	}
	for di := range s.Devices {
		if err := s.checkDevice(&s.Devices[di]); err != nil {
			return fmt.Errorf("device %d: %w", di, err)
		}
	}
	return nil
}

func (s *Summary) checkDevice(d *DeviceSummary) error {
	if len(d.StepBusy) != len(s.Result.Steps) {
		return fmt.Errorf("%d step figures for %d steps: expected one per step", len(d.StepBusy), len(s.Result.Steps))
	}
	if !ordered(d.Overlap) {
		return errors.New("overlapping work: expected sorted, disjoint intervals")
	}
	for i, c := range d.Colls {
		switch {
		case c.Name < 0 || c.Name >= len(s.Names):
			return fmt.Errorf("collective %d: name %d of %d: expected an index of a name", i, c.Name, len(s.Names))
		case c.StepIdx < -1 || c.StepIdx >= len(s.Steps):
			return fmt.Errorf("collective %d: step %d of %d: expected an index of a step or -1", i, c.StepIdx, len(s.Steps))
		case c.End < c.Start || c.Seg.End < c.Seg.Start || (i > 0 && c.Start < d.Colls[i-1].Start):
			return fmt.Errorf("collective %d: expected collectives in start order, each ending after it starts", i)
		}
	}
	return nil
}

// ordered reports whether ivs are sorted, disjoint and not empty each.
func ordered(ivs []analyze.Interval) bool {
	for i, iv := range ivs {
		if iv.End <= iv.Start || (i > 0 && iv.Start < ivs[i-1].End) {
			return false
		}
	}
	return true
}

// CheckOptions reports whether s was summarized with the analysis options
// opt, as a merge with opt requires; the error names each option that
// differs with both values.
func (s *Summary) CheckOptions(opt analyze.Options) error {
	if s.Result == nil || sameOptions(&s.Result.Options, &opt) {
		return nil
	}
	return optionsError(&s.Result.Options, &opt)
}

func optionsError(sum, asked *analyze.Options) error {
	return fmt.Errorf("summarized with other analysis options (%s): expected both phases given the same options",
		strings.Join(optionDiffs(sum, asked), "; "))
}

// optionDiffs names each option whose value differs between the summary's
// options (sum) and the merge's (asked), by its command-line flag, with
// both values: "min-gap: summarized with 20.0 us, asked for 50.0 us".
func optionDiffs(sum, asked *analyze.Options) []string {
	dur := human.Duration
	pct := func(v float64) string { return strconv.FormatFloat(v*100, 'g', -1, 64) + "%" }
	list := func(ps []string) string { return fmt.Sprintf("%q", nilIfEmpty(ps)) }
	var out []string
	for _, o := range []struct{ name, a, b string }{
		{"min-gap", dur(sum.MinGap), dur(asked.MinGap)},
		{"sync-slack", dur(sum.SyncSlack), dur(asked.SyncSlack)},
		{"sync-threshold", pct(sum.SyncThreshold), pct(asked.SyncThreshold)},
		{"input-threshold", pct(sum.InputThreshold), pct(asked.InputThreshold)},
		{"host-threshold", pct(sum.HostThreshold), pct(asked.HostThreshold)},
		{"stall-threshold", pct(sum.StallThreshold), pct(asked.StallThreshold)},
		{"step-regex", strconv.Quote(sum.StepRegex), strconv.Quote(asked.StepRegex)},
		{"sync-pattern", list(sum.SyncPatterns), list(asked.SyncPatterns)},
		{"input-pattern", list(sum.InputPatterns), list(asked.InputPatterns)},
	} {
		if o.a != o.b {
			out = append(out, fmt.Sprintf("%s: summarized with %s, asked for %s", o.name, o.a, o.b))
		}
	}
	if len(out) == 0 { // a field this list lacks
		out = append(out, "options no flag sets")
	}
	return out
}

// sameOptions reports whether two sets of options analyse alike, an
// empty pattern list being no list. How many of the longest gaps are
// listed is not the analysis's: a summary holds every gap, and the merge
// lists as many as it is asked for (see Summary.listGaps).
func sameOptions(a, b *analyze.Options) bool {
	x, y := *a, *b
	for _, o := range []*analyze.Options{&x, &y} {
		o.SyncPatterns = nilIfEmpty(o.SyncPatterns)
		o.InputPatterns = nilIfEmpty(o.InputPatterns)
		o.TopGaps, o.Admit = 0, nil
	}
	return reflect.DeepEqual(x, y)
}

// listGaps makes the rank's longest gaps the n a merge is asked for,
// whatever number it was summarized with.
func (s *Summary) listGaps(n int) {
	s.Result.Options.TopGaps = n
	s.Result.TopGaps = analyze.TopGaps(s.Result.Gaps, n)
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
