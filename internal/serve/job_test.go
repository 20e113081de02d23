package serve

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/internal/run"
)

// jobServer runs a Server that analyses jobs, as `tracegap serve` wires it.
func jobServer(t *testing.T) *testServer {
	t.Helper()
	e := &run.Engine{Analysis: analyze.DefaultOptions(), Jobs: 2}
	var cfg Config
	cfg.UseEngine(e, render.Options{})
	return start(t, cfg)
}

// dlrmRanks returns the 8 rank files of the real DLRM job, by name, and
// their names in directory order.
func dlrmRanks(t *testing.T) (map[string][]byte, []string) {
	t.Helper()
	dir := filepath.Join(realtraces.Dir(t), "param-dlrm-8ranks")
	names, err := filepath.Glob(filepath.Join(dir, "*.pt.trace.json.gz"))
	if err != nil || len(names) != 8 {
		t.Fatalf("want the 8 ranks of %s, got %v (%v)", dir, names, err)
	}
	files := map[string][]byte{}
	for i, p := range names {
		names[i] = filepath.Base(p)
		if files[names[i]], err = os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}
	return files, names
}

// jobReport is the part of a job's v1 report these tests check.
type jobReport struct {
	Verdict string `json:"verdict"`
	Source  struct {
		Path string `json:"path"`
	} `json:"source"`
	Job struct {
		Ranks     int `json:"ranks"`
		WorldSize int `json:"world_size"`
	} `json:"job"`
	Ranks []struct {
		Rank int    `json:"rank"`
		Path string `json:"path"`
	} `json:"ranks"`
}

// TestJobUpload uploads the 8 ranks of the DLRM job in one multipart form:
// one record of kind job whose report is the job's, listed with its
// verdict, deduplicated whatever the order of the ranks, its files kept
// as uploaded and shared with a trace of the same content.
func TestJobUpload(t *testing.T) {
	ts := jobServer(t)
	files, names := dlrmRanks(t)
	body, ctype := multipartBody(t, nil, files, names)
	r := do(t, "POST", ts.URL+"/api/v1/traces?name=dlrm", body, map[string]string{"Content-Type": ctype})
	var got []uploadAnswer
	r.json(t, &got)
	if r.code != http.StatusCreated || len(got) != 1 || got[0].Name != "dlrm" {
		t.Fatalf("job upload: %d %s, want 201 and one result named dlrm", r.code, r.body)
	}
	var rep jobReport
	if err := jsonUnmarshal(got[0].Report, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Job.Ranks != 8 || rep.Job.WorldSize != 8 || len(rep.Ranks) != 8 || rep.Source.Path != "dlrm" || rep.Ranks[0].Path != "dlrm/"+names[0] {
		t.Errorf("report: %d ranks of world %d, source %q, rank 0 %+v; want 8 of 8 from dlrm/", rep.Job.Ranks, rep.Job.WorldSize, rep.Source.Path, rep.Ranks[0])
	}
	id := got[0].ID
	var compact bytes.Buffer
	if stored := get(t, ts.URL+"/api/v1/traces/"+id); json.Compact(&compact, stored.body) != nil || !bytes.Equal(compact.Bytes(), got[0].Report) {
		t.Errorf("stored report differs from the upload's answer")
	}

	var l listAnswer
	get(t, ts.URL+"/api/v1/traces").json(t, &l)
	if l.Total != 1 || l.Traces[0].Kind != KindJob || l.Traces[0].Verdict != rep.Verdict || len(l.Traces[0].Files) != 8 {
		t.Fatalf("list = %+v, want the one job with verdict %q and 8 files", l, rep.Verdict)
	}
	if page := get(t, ts.URL+"/traces/"+id); page.code != 200 || !bytes.Contains(page.body, []byte("rank 7 GPU:7")) {
		t.Errorf("job page: %d, want 200 showing rank 7's device", page.code)
	}

	// The same ranks in another order are the same job.
	rev := slices.Clone(names)
	slices.Reverse(rev)
	body, ctype = multipartBody(t, nil, files, rev)
	r = do(t, "POST", ts.URL+"/api/v1/traces", body, map[string]string{"Content-Type": ctype})
	got = nil
	r.json(t, &got)
	if r.code != http.StatusOK || len(got) != 1 || got[0].ID != id || !got[0].Duplicate {
		t.Errorf("job upload again: %d %s, want 200, a duplicate of %s", r.code, r.body, id)
	}

	raw := get(t, ts.URL+"/api/v1/traces/"+id+"/raw")
	if got := untar(t, raw.body); len(got) != 8 || !bytes.Equal(got[names[3]], files[names[3]]) {
		t.Errorf("raw job: %d files, want the 8 ranks as uploaded", len(got))
	}

	// Rank 0 alone is a trace that shares its blob with the job.
	one := ts.mustUpload(t, "rank0", files[names[0]])
	if r := do(t, "DELETE", ts.URL+"/api/v1/traces/"+id, nil, nil); r.code != http.StatusNoContent {
		t.Fatalf("delete job: %d %s", r.code, r.body)
	}
	if raw := get(t, ts.URL+"/api/v1/traces/"+one.ID+"/raw"); sha(raw.body) != sha(files[names[0]]) {
		t.Errorf("rank 0's trace after deleting the job: %d %.100s, want its file", raw.code, raw.body)
	}
	if r := do(t, "DELETE", ts.URL+"/api/v1/traces/"+one.ID, nil, nil); r.code != http.StatusNoContent {
		t.Fatalf("delete trace: %d %s", r.code, r.body)
	}
	assertNothingStored(t, ts)
}

// TestNotAJob: files that are not the ranks of one job (two traces of no
// job; two copies of one rank) stay one trace each.
func TestNotAJob(t *testing.T) {
	ts := jobServer(t)
	files, names := dlrmRanks(t)
	files["w4.json.gz"] = realTrace(t, "kineto-resnet50-workers4.pt.trace.json.gz")
	files["copy.json.gz"] = files[names[0]]
	for _, order := range [][]string{{names[0], "w4.json.gz"}, {names[0], "copy.json.gz"}} {
		body, ctype := multipartBody(t, nil, files, order)
		r := do(t, "POST", ts.URL+"/api/v1/traces", body, map[string]string{"Content-Type": ctype})
		var got []uploadAnswer
		r.json(t, &got)
		if len(got) != 2 || got[0].Kind != KindTrace || got[1].Kind != KindTrace {
			t.Errorf("upload of %v: %d %.300s, want two traces", order, r.code, r.body)
		}
	}
}

// untar returns the files of a tar by name.
func untar(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("reading tar: %v", err)
		}
		if out[h.Name], err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
}
