package job

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

// roundTrip summarizes every trace, writes each summary out and reads it
// back, as the two phases of a job on a cluster do.
func roundTrip(t *testing.T, ts []*trace.Trace, opt analyze.Options) (sums []*Summary, size int) {
	t.Helper()
	for _, tr := range ts {
		s, err := Summarize(tr, opt)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteSummary(&buf, s); err != nil {
			t.Fatal(err)
		}
		size = max(size, buf.Len())
		if s, err = ReadSummary(&buf); err != nil {
			t.Fatal(err)
		}
		sums = append(sums, s)
	}
	return sums, size
}

// jsonOf is the whole of v as JSON, every figure in it.
func jsonOf(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMergeSameAsWhole analyses jobs whole and through summaries written
// and read back, and asserts the same job.Result to the last field: the 64
// ranks of a generated job whose ranks all differ (different inputs, extra
// compute, clocks, and a kernel running inside every all-reduce, so that
// waits fall on busy time), and the eight ranks of the DLRM job.
func TestMergeSameAsWhole(t *testing.T) {
	for _, tc := range []struct {
		name    string
		traces  func(t *testing.T) []*trace.Trace
		maxSize int // bytes of the largest compressed summary
	}{
		{"64 generated ranks", func(t *testing.T) []*trace.Trace {
			return jobTraces(t, tracetest.ManyRanks(64, 6), "build")
		}, 8 << 10},
		{"8 generated ranks via XPlane", func(t *testing.T) []*trace.Trace {
			return jobTraces(t, tracetest.ManyRanks(8, 5), "xplane")
		}, 8 << 10},
		{"DLRM 8 ranks", dlrmTraces, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := tc.traces(t)
			opt := analyze.DefaultOptions()
			whole, err := Analyze(ts, opt)
			if err != nil {
				t.Fatal(err)
			}
			sums, size := roundTrip(t, ts, opt)
			merged, err := Merge(sums, opt)
			if err != nil {
				t.Fatal(err)
			}
			if w, m := jsonOf(t, whole), jsonOf(t, merged); !bytes.Equal(w, m) {
				t.Errorf("merged summaries differ from the whole job analysis:\n%s", firstDiff(w, m))
			}
			if whole.Collectives == 0 || whole.Wait.Total() == 0 {
				t.Errorf("%d collectives, %d ns of wait: want a job that waits", whole.Collectives, whole.Wait.Total())
			}
			if size > tc.maxSize {
				t.Errorf("largest summary %d bytes, want at most %d", size, tc.maxSize)
			}
		})
	}
}

// firstDiff shows where two texts first differ.
func firstDiff(a, b []byte) string {
	i := 0
	for i < min(len(a), len(b)) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-200)
	return "whole:  ..." + string(a[lo:min(len(a), i+200)]) + "\nmerged: ..." + string(b[lo:min(len(b), i+200)])
}

func dlrmTraces(t *testing.T) []*trace.Trace {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(realtraces.Dir(t), "param-dlrm-8ranks", "*.pt.trace.json.gz"))
	if err != nil || len(files) != 8 {
		t.Fatalf("%d DLRM ranks (%v), want 8", len(files), err)
	}
	var ts []*trace.Trace
	for _, f := range files {
		tr, err := trace.Open(f, trace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tr)
	}
	return ts
}

// smallSummaries returns the summaries of a two-rank generated job.
func smallSummaries(t testing.TB) []*Summary {
	var sums []*Summary
	for _, s := range tracetest.ManyRanks(2, 3).Specs() {
		sum, err := Summarize(tracetest.Build(s), analyze.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, sum)
	}
	return sums
}

func encode(t testing.TB, s *Summary) []byte {
	var buf bytes.Buffer
	if err := WriteSummary(&buf, s); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadSummaryRefuses: a file that is not a whole summary of this
// version is refused with an error that says what was expected.
func TestReadSummaryRefuses(t *testing.T) {
	good := smallSummaries(t)[0]
	edit := func(f func(s *Summary)) []byte {
		s := *good
		s.Devices = append([]DeviceSummary(nil), good.Devices...)
		f(&s)
		return encode(t, &s)
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"not JSON", "PK\x03\x04 a zip", "expected a tracegap rank summary"},
		{"cut short", string(encode(t, good)[:100]), "unexpected EOF"},
		// The JSON decodes whole from these; the gzip trailer does not.
		{"checksum flipped", string(flip(encode(t, good), -8)), "gzip: invalid checksum: expected a whole, undamaged summary"},
		{"length flipped", string(flip(encode(t, good), -1)), "gzip: invalid checksum: expected a whole, undamaged summary"},
		{"trailer cut", string(cut(encode(t, good), 8)), "unexpected EOF: expected a whole, undamaged summary"},
		{"another format", string(edit(func(s *Summary) { s.Format = "x" })), `format "x": expected a tracegap rank summary`},
		{"another version", string(edit(func(s *Summary) { s.Version = 99 })), "summary version 99: expected version 2"},
		{"no result", string(edit(func(s *Summary) { s.Result = nil })), "summary holds no result"},
		{"a device missing", string(edit(func(s *Summary) { s.Devices = nil })), "0 device summaries for 1 devices"},
		{"a name out of range", string(edit(func(s *Summary) {
			d := s.Devices[0]
			d.Colls = append([]Coll{{Name: 7}}, d.Colls...)
			s.Devices[0] = d
		})), "device 0: collective 0: name 7 of 1"},
	} {
		_, err := ReadSummary(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line saying %q", tc.name, err, tc.want)
		}
	}
}

// flip returns b with one bit flipped in the byte at i (from the end when
// negative).
func flip(b []byte, i int) []byte {
	if i < 0 {
		i += len(b)
	}
	b[i] ^= 0x10
	return b
}

// cut returns b less its last n bytes.
func cut(b []byte, n int) []byte { return b[:len(b)-n] }

// TestMergeNamesSummaryFile: a summary read from a file is named by that
// file in the merge's errors, not by the trace it was made from.
func TestMergeNamesSummaryFile(t *testing.T) {
	sums := smallSummaries(t)
	for i, s := range sums {
		s.Path = fmt.Sprintf("/elsewhere/rank%d.pt.trace.json", i)
		s.File = fmt.Sprintf("sums/rank%d.summary.json.gz", i)
		s.Meta = map[string]string{"rank": strconv.Itoa(i)}
	}
	sums[1].Meta["rank"] = "x"
	_, err := Merge(sums, analyze.DefaultOptions())
	want := `sums/rank1.summary.json.gz: rank "x": expected a number of 0 or more`
	if err == nil || err.Error() != want {
		t.Errorf("merge of a summary of rank x: %v, want %q", err, want)
	}
}

// TestMergeRefusesOtherOptions: summaries made with other options than
// the merge's are refused, naming the rank's trace.
func TestMergeRefusesOtherOptions(t *testing.T) {
	sums := smallSummaries(t)
	sums[1].Path = "rank1.json"
	opt := analyze.DefaultOptions()
	opt.MinGap *= 2
	sums[1].Result.Options = opt
	_, err := Merge(sums, analyze.DefaultOptions())
	if err == nil || err.Error() != "rank1.json: summarized with other analysis options (min-gap: summarized with 40.0 us, asked for 20.0 us): expected both phases given the same options" {
		t.Errorf("merge of a summary made with another min gap: %v, want a refusal naming rank1.json", err)
	}
}

// TestMergeListsAskedGaps: summaries made to list 1 gap, merged to list
// 4, give the job analysed from the traces with 4 (each rank's longest
// gaps and the job's): a summary holds every gap, and how many are listed
// is not an option the phases must share.
func TestMergeListsAskedGaps(t *testing.T) {
	specs := tracetest.ManyRanks(2, 3).Specs()
	few, many := analyze.DefaultOptions(), analyze.DefaultOptions()
	few.TopGaps, many.TopGaps = 1, 4
	var sums []*Summary
	var traces []*trace.Trace
	for _, s := range specs {
		tr := tracetest.Build(s)
		sum, err := Summarize(tr, few)
		if err != nil {
			t.Fatal(err)
		}
		sums, traces = append(sums, sum), append(traces, tr)
	}
	got, err := Merge(sums, many)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Analyze(traces, many)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Overall.TopGaps) < 2 || !reflect.DeepEqual(got.Overall.TopGaps, want.Overall.TopGaps) {
		t.Errorf("the job's longest gaps %v, want %v (more than 1)", got.Overall.TopGaps, want.Overall.TopGaps)
	}
	for i := range want.Ranks {
		g, w := got.Ranks[i].Result, want.Ranks[i].Result
		if !reflect.DeepEqual(g.TopGaps, w.TopGaps) || g.Options.TopGaps != 4 {
			t.Errorf("rank %d: longest gaps %v (of %d), want %v (of 4)", i, g.TopGaps, g.Options.TopGaps, w.TopGaps)
		}
	}
}

func TestLooksLikeSummary(t *testing.T) {
	gz := encode(t, smallSummaries(t)[0])
	for _, tc := range []struct {
		name string
		head []byte
		want bool
	}{
		{"compressed", gz[:min(len(gz), 512)], true},
		{"plain", []byte(`{"format":"tracegap-rank-summary","version":1}`), true},
		{"a Chrome trace", []byte(`{"traceEvents":[]}`), false},
		{"empty", nil, false},
	} {
		if got := LooksLikeSummary(tc.head); got != tc.want {
			t.Errorf("%s: LooksLikeSummary = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// FuzzReadSummary: whatever the file, reading it returns a summary or an
// error, and a summary read merges with another rank without panicking.
func FuzzReadSummary(f *testing.F) {
	sums := smallSummaries(f)
	f.Add(encode(f, sums[0]))
	plain, _ := json.Marshal(asWritten(sums[1])) // as written, not compressed
	f.Add(plain)
	f.Add([]byte(`{"format":"tracegap-rank-summary","version":2,"result":{},"devices":[{"colls":[{"name":0,"step":5}]}]}`))
	f.Add([]byte(`{"format":"tracegap-rank-summary","version":2,"result":{"Gaps":[{"Dur":5}]},"devices":[],` +
		`"segments":{"data":"AgMEBQ==","spans":[[0,4]],"kinds":[[0,0,1],[1,0,2]],"stacks":[[],["a"]],"calls":[""]}}`))
	f.Add([]byte{0x1f, 0x8b, 8, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := ReadSummary(bytes.NewReader(in))
		if err != nil {
			return
		}
		other := *s
		other.Meta = map[string]string{"rank": "1000"}
		s.Meta = map[string]string{"rank": "0"}
		_, _ = Merge([]*Summary{s, &other}, s.Result.Options)
	})
}
