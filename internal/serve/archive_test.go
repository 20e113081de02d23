package serve

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"testing"
)

// tarball writes files (name -> content, in order) as a tar, gzipped when
// gz is set.
func tarball(t *testing.T, gz bool, order []string, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	var gw *gzip.Writer
	tw := tar.NewWriter(&buf)
	if gz {
		gw = gzip.NewWriter(&buf)
		tw = tar.NewWriter(gw)
	}
	for _, name := range order {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(files[name])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(files[name])
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if gw != nil {
		gw.Close()
	}
	return buf.Bytes()
}

// TestArchiveUploadIsAJob: a tarred TensorBoard log directory holding the 8
// DLRM ranks (and files that are not traces) is analysed as one job of 8
// ranks, as the 8 files uploaded together are.
func TestArchiveUploadIsAJob(t *testing.T) {
	ranks, names := dlrmRanks(t)
	files := map[string][]byte{"logs/events.out.tfevents.1": []byte("not a trace")}
	order := []string{"logs/events.out.tfevents.1"}
	for _, n := range names {
		p := "logs/plugins/profile/2023_09_07/" + n
		files[p] = ranks[n]
		order = append(order, p)
	}
	for _, gz := range []bool{false, true} {
		ts := jobServer(t)
		name := "logs.tar"
		if gz {
			name += ".gz"
		}
		body, ctype := multipartBody(t, nil, map[string][]byte{name: tarball(t, gz, order, files)}, []string{name})
		r := do(t, "POST", ts.URL+"/api/v1/traces?name=dlrm", body, map[string]string{"Content-Type": ctype})
		var got []uploadAnswer
		r.json(t, &got)
		if r.code != http.StatusCreated || len(got) != 1 || got[0].Kind != KindJob {
			t.Fatalf("upload of %s = %d %+v, want 201 and one job", name, r.code, got)
		}
		var rep jobReport
		if err := jsonUnmarshal(got[0].Report, &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Job.Ranks != 8 || len(rep.Ranks) != 8 {
			t.Errorf("%s: job of %d ranks (%d listed), want 8", name, rep.Job.Ranks, len(rep.Ranks))
		}
	}
}

// TestArchiveBounds: archives past the bounds, or without a trace, are
// refused with what was expected, and leave nothing stored.
func TestArchiveBounds(t *testing.T) {
	trace := []byte(`{"traceEvents": []}`)
	many := map[string][]byte{}
	var manyOrder []string
	for i := range maxArchiveTraces + 1 {
		n := "r" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "/" + string(rune('a'+i/26)) + ".trace.json"
		many[n] = trace
		manyOrder = append(manyOrder, n)
	}
	big := bytes.Repeat([]byte(" "), 4096)
	tests := []struct {
		name string
		tar  []byte
		code int
		msg  string
	}{
		{"no-trace.tar", tarball(t, false, []string{"a.txt"}, map[string][]byte{"a.txt": trace}), http.StatusUnprocessableEntity, "no trace in the tar"},
		{"many.tar", tarball(t, false, manyOrder, many), http.StatusRequestEntityTooLarge, "more than 256 traces"},
		{"bomb.tar.gz", tarball(t, true, []string{"a.trace.json", "b.trace.json"}, map[string][]byte{"a.trace.json": big, "b.trace.json": big}), http.StatusRequestEntityTooLarge, "expands past"},
		{"broken.tar.gz", []byte("not gzip"), http.StatusBadRequest, "expected a gzipped tar"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// 6 KiB: every archive above fits as uploaded, the bomb's
			// 8 KiB of traces do not once expanded.
			ts := start(t, Config{Analyze: (&fakeAnalyzer{}).analyze, MaxUpload: 6 << 10})
			if tt.name == "many.tar" {
				ts = start(t, Config{Analyze: (&fakeAnalyzer{}).analyze})
			}
			body, ctype := multipartBody(t, nil, map[string][]byte{tt.name: tt.tar}, []string{tt.name})
			r := do(t, "POST", ts.URL+"/api/v1/traces", body, map[string]string{"Content-Type": ctype})
			if r.code != tt.code || !bytes.Contains(r.body, []byte(tt.msg)) {
				t.Errorf("upload = %d %s, want %d and %q", r.code, r.body, tt.code, tt.msg)
			}
			if l := get(t, ts.URL+"/api/v1/traces"); !bytes.Contains(l.body, []byte(`"total":0`)) {
				t.Errorf("after a refused archive the list is %s, want it empty", l.body)
			}
		})
	}
}

// TestArchivesBoundedTogether: two archives that each expand within
// MaxUpload, but not together, are refused: the bound is the request's.
func TestArchivesBoundedTogether(t *testing.T) {
	big := bytes.Repeat([]byte(" "), 2048)
	one := func(name string) []byte {
		return tarball(t, true, []string{name}, map[string][]byte{name: big})
	}
	// 4 KiB: each archive's 2 KiB trace (and its tar headers) fits alone.
	ts := start(t, Config{Analyze: (&fakeAnalyzer{}).analyze, MaxUpload: 4 << 10})
	for _, files := range [][]string{{"a.tgz"}, {"b.tgz"}} {
		body, ctype := multipartBody(t, nil, map[string][]byte{files[0]: one(files[0] + ".trace.json")}, files)
		if r := do(t, "POST", ts.URL+"/api/v1/traces", body, map[string]string{"Content-Type": ctype}); r.code == http.StatusRequestEntityTooLarge {
			t.Fatalf("%s alone = %d %s, want it to fit", files[0], r.code, r.body)
		}
	}
	body, ctype := multipartBody(t, nil, map[string][]byte{"a.tgz": one("a.trace.json"), "b.tgz": one("b.trace.json")}, []string{"a.tgz", "b.tgz"})
	r := do(t, "POST", ts.URL+"/api/v1/traces", body, map[string]string{"Content-Type": ctype})
	// The first fits; the second is refused, on its own line of the
	// multipart answer.
	if !bytes.Contains(r.body, []byte(`b.tgz: expands past 4096 bytes with the request's other archives`)) || !bytes.Contains(r.body, []byte(`"status":413`)) {
		t.Errorf("both in one request = %d %s, want b.tgz refused with 413", r.code, r.body)
	}
}
