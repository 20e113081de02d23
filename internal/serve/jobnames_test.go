package serve

import (
	"bytes"
	"maps"
	"mime/multipart"
	"net/http"
	"slices"
	"testing"
)

// TestJobSameNamesDownload: the ranks of a job uploaded under one file
// name download as a tar of as many files, each renamed apart, where the
// tar held the one name eight times and extracted to one file.
func TestJobSameNamesDownload(t *testing.T) {
	ts := jobServer(t)
	files, names := dlrmRanks(t)
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, n := range names {
		fw, _ := mw.CreateFormFile("file", "logs/w.pt.trace.json.gz")
		fw.Write(files[n])
	}
	mw.Close()
	r := do(t, "POST", ts.URL+"/api/v1/traces?name=dlrm", &buf, map[string]string{"Content-Type": mw.FormDataContentType()})
	var got []uploadAnswer
	r.json(t, &got)
	if r.code != http.StatusCreated || len(got) != 1 || got[0].Kind != KindJob {
		t.Fatalf("job upload: %d %.300s, want 201 and one job", r.code, r.body)
	}
	raw := untar(t, get(t, ts.URL+"/api/v1/traces/"+got[0].ID+"/raw").body)
	if len(raw) != len(names) {
		t.Fatalf("raw job: %d files, want %d", len(raw), len(names))
	}
	for _, n := range names {
		if !slices.ContainsFunc(slices.Collect(maps.Values(raw)), func(b []byte) bool { return bytes.Equal(b, files[n]) }) {
			t.Errorf("raw job lacks rank file %s", n)
		}
	}
}

// TestDistinctNames: a name that repeats an earlier one gets the next
// free number after its stem; thousands of one name are numbered in one
// pass (each name's next number is kept, not searched for again).
func TestDistinctNames(t *testing.T) {
	tests := []struct {
		names, want []string
	}{
		{[]string{"a.pt.trace.json"}, []string{"a.pt.trace.json"}},
		{[]string{"a.pt.trace.json", "b.json"}, []string{"a.pt.trace.json", "b.json"}},
		{[]string{"logs/a.pt.trace.json.gz", "logs/a.pt.trace.json.gz"}, []string{"logs/a.pt.trace.json.gz", "logs/a-2.pt.trace.json.gz"}},
		{[]string{"a.json", "a-2.json", "a-3.json", "a.json"}, []string{"a.json", "a-2.json", "a-3.json", "a-4.json"}},
		{[]string{"a.json", "a.json", "a-2.json"}, []string{"a.json", "a-2.json", "a-2-2.json"}},
		{[]string{"x.y/noext", "x.y/noext"}, []string{"x.y/noext", "x.y/noext-2"}},
	}
	for _, tt := range tests {
		if got := distinctNames(tt.names); !slices.Equal(got, tt.want) {
			t.Errorf("distinctNames(%q) = %q, want %q", tt.names, got, tt.want)
		}
	}
	same := slices.Repeat([]string{"w.pt.trace.json.gz"}, 10_000)
	got := distinctNames(same)
	if len(slices.Compact(slices.Sorted(slices.Values(got)))) != len(same) || got[9_999] != "w-10000.pt.trace.json.gz" {
		t.Errorf("10,000 of one name: last %q, not all distinct", got[9_999])
	}
}
