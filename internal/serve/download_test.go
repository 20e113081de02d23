package serve

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/internal/run"
	"github.com/tracegap/tracegap/internal/testservers"
)

// TestDownloadOutlivesDelete deletes a record kept in an S3 bucket (the
// SeaweedFS gateway) while its raw files are being downloaded, the
// download held at its first write, through the same server or through
// another sharing the store (PostgreSQL): the record is gone at once, its
// files stay in the bucket until the download has ended, which has every
// byte, and are removed after, unless stored again meanwhile. A job's tar
// reads each rank's file only when it reaches it, so that a file removed
// at once cut it.
func TestDownloadOutlivesDelete(t *testing.T) {
	s3 := testservers.S3(t)
	s3.UseEnv(t)
	const bucket = "downloads"
	s3.Bucket(t, bucket)
	files, names := dlrmRanks(t)
	trace := func(t *testing.T, ts *testServer) (string, []string) {
		return ts.mustUpload(t, "rank0.json.gz", files[names[0]]).ID, []string{sha(files[names[0]])}
	}
	checkTrace := func(t *testing.T, body []byte) {
		if !bytes.Equal(body, files[names[0]]) {
			t.Errorf("download cut by the delete: %d of %d bytes", len(body), len(files[names[0]]))
		}
	}
	job := func(t *testing.T, ts *testServer) (string, []string) {
		body, ctype := multipartBody(t, nil, files, names)
		r := do(t, "POST", ts.URL+"/api/v1/traces?name=dlrm", body, map[string]string{"Content-Type": ctype})
		var got []uploadAnswer
		r.json(t, &got)
		if r.code != http.StatusCreated || len(got) != 1 {
			t.Fatalf("job upload: %d %s, want 201 and one job", r.code, r.body)
		}
		var shas []string
		for _, n := range names {
			shas = append(shas, sha(files[n]))
		}
		return got[0].ID, shas
	}
	checkJob := func(t *testing.T, body []byte) {
		got := untar(t, body)
		for _, n := range names {
			if !bytes.Equal(got[n], files[n]) {
				t.Errorf("%s in the tar: %d of %d bytes", n, len(got[n]), len(files[n]))
			}
		}
	}
	for _, c := range []struct {
		name     string
		upload   func(t *testing.T, ts *testServer) (id string, shas []string)
		check    func(t *testing.T, body []byte)
		again    bool // stored again before the download ends
		replicas bool // deleted through another server
	}{
		{"trace", trace, checkTrace, false, false},
		{"stored-again", trace, checkTrace, true, false},
		{"job", job, checkJob, false, false},
		{"trace-replicas", trace, checkTrace, false, true},
		{"stored-again-replicas", trace, checkTrace, true, true},
		{"job-replicas", job, checkJob, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{Blobs: "s3://" + bucket + "/" + c.name + "/"}
			if c.replicas {
				cfg.Database, cfg.Blobs = testservers.Storage(t)
			}
			cfg.UseEngine(&run.Engine{Analysis: analyze.DefaultOptions(), Jobs: 2}, render.Options{})
			ts := startAlone(t, cfg)
			ts.sweptAll()
			other := ts
			if c.replicas {
				other = startAlone(t, cfg)
				other.sweptAll()
			}
			b, prefix, _ := strings.Cut(strings.TrimPrefix(cfg.Blobs, "s3://"), "/")
			id, shas := c.upload(t, ts)

			w := &heldWriter{ResponseRecorder: httptest.NewRecorder(), first: make(chan struct{}), release: make(chan struct{})}
			done := make(chan struct{})
			go func() {
				defer close(done)
				ts.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/api/v1/traces/"+id+"/raw", nil))
			}()
			<-w.first
			if del := do(t, "DELETE", other.URL+"/api/v1/traces/"+id, nil, nil); del.code != http.StatusNoContent {
				t.Fatalf("DELETE during the download: %d %s, want 204", del.code, del.body)
			}
			if again := get(t, ts.URL+"/api/v1/traces/"+id+"/raw"); again.code != http.StatusNotFound {
				t.Errorf("a download after the delete: %d, want 404", again.code)
			}
			if kept := blobsIn(t, s3, b, prefix); !slices.Equal(kept, slices.Sorted(slices.Values(shas))) {
				t.Errorf("during the download the bucket holds %d of its %d files, want all", len(kept), len(shas))
			}
			var want []string
			if c.again {
				c.upload(t, other)
				want = slices.Sorted(slices.Values(shas))
			}
			close(w.release)
			<-done
			if w.Code != http.StatusOK {
				t.Fatalf("download: %d, want 200", w.Code)
			}
			c.check(t, w.Body.Bytes())
			ts.stop(t) // waits for the removals the download held back
			if kept := blobsIn(t, s3, b, prefix); !slices.Equal(kept, want) {
				t.Errorf("after the download the bucket holds %d files, want %d", len(kept), len(want))
			}
		})
	}
}

// heldWriter is a ResponseRecorder whose first write waits for release,
// after closing first: a client that has the answer's start and reads no
// further yet.
type heldWriter struct {
	*httptest.ResponseRecorder
	once           sync.Once
	first, release chan struct{}
}

func (w *heldWriter) Write(p []byte) (int, error) {
	w.once.Do(func() {
		close(w.first)
		<-w.release
	})
	return w.ResponseRecorder.Write(p)
}

// blobsIn returns the blobs kept under prefix in bucket, sorted.
func blobsIn(t *testing.T, s3 *testservers.S3Server, bucket, prefix string) []string {
	t.Helper()
	var shas []string
	for _, k := range s3.Keys(t, bucket, strings.TrimSuffix(prefix, "/")+"/") {
		if i := strings.LastIndexByte(k, '/'); validSHA(k[i+1:]) {
			shas = append(shas, k[i+1:])
		}
	}
	slices.Sort(shas)
	return shas
}
