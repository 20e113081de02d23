package serve

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/internal/run"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
	_ "github.com/tracegap/tracegap/trace/all"
)

// realServer runs a Server with the real readers, analysis and reports.
func realServer(t *testing.T, maxBytes int64) *testServer {
	t.Helper()
	cfg := Config{MaxAnalyses: 4}
	cfg.UseEngine(&run.Engine{Analysis: analyze.DefaultOptions(), Read: trace.Options{MaxBytes: maxBytes}}, render.Options{})
	return start(t, cfg)
}

// v1 is the part of a v1 report these tests check.
type v1 struct {
	Schema  string `json:"schema"`
	Verdict string `json:"verdict"`
	Source  struct {
		Path   string `json:"path"`
		Format string `json:"format"`
		Bytes  int64  `json:"bytes"`
	} `json:"source"`
	Devices []struct {
		ID     string `json:"id"`
		BusyNs int64  `json:"busy_ns"`
		SpanNs int64  `json:"span_ns"`
	} `json:"devices"`
}

func TestRealTraces(t *testing.T) {
	expect := expectedVerdicts(t)
	ts := realServer(t, 0)
	tests := []struct{ file, format string }{
		{"kineto-resnet50-workers4.pt.trace.json.gz", "chrome"},
		{"hta-cpu-only.pt.trace.json.gz", "chrome"},
		{"tracelens-jax-te-fused-attn.xplane.pb", "xplane"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data := realTrace(t, tt.file)
			a := ts.mustUpload(t, tt.file, data)
			var rep v1
			if err := jsonUnmarshal(a.Report, &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Schema != "tracegap/report/v1" || rep.Source.Format != tt.format || rep.Source.Path != tt.file {
				t.Errorf("report source = %+v (schema %q), want %s read as %s", rep.Source, rep.Schema, tt.file, tt.format)
			}
			if !slices.Contains(expect[tt.file], rep.Verdict) {
				t.Errorf("verdict %q, want one of %v (expected.tsv)", rep.Verdict, expect[tt.file])
			}
			raw := get(t, ts.URL+"/api/v1/traces/"+a.ID+"/raw")
			if sha(raw.body) != sha(data) {
				t.Errorf("raw: %d bytes with another SHA-256, want the %d uploaded", len(raw.body), len(data))
			}
			page := get(t, ts.URL+"/traces/"+a.ID)
			if page.code != 200 || !bytes.Contains(page.body, []byte(tt.file)) {
				t.Errorf("HTML report: %d, want 200 naming %s", page.code, tt.file)
			}
		})
	}
}

// TestErrorsMatchCommandLine checks that a bad upload is refused with the
// error the command line prints for the same file, named by the upload.
func TestErrorsMatchCommandLine(t *testing.T) {
	ts := realServer(t, 0)
	dir := t.TempDir()
	gz := realTrace(t, "kineto-resnet50-workers4.pt.trace.json.gz")
	tests := []struct {
		name string
		data []byte
		code int
	}{
		{"corrupted.xplane.pb", realTrace(t, "xprof-tpu-inference-corrupted-upstream.xplane.pb"), 422},
		{"truncated.json.gz", gz[:200], 422},
		{"notes.txt", []byte("these are not the traces you are looking for\n"), 422},
		{"empty.json", nil, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			os.WriteFile(path, tt.data, 0o600)
			_, cliErr := trace.Open(path, trace.Options{})
			if cliErr == nil {
				t.Fatalf("trace.Open(%s) succeeded; the case needs a bad file", tt.name)
			}
			r := ts.upload(t, tt.name, tt.data, nil)
			if r.code != tt.code {
				t.Fatalf("status %d %s, want %d", r.code, r.body, tt.code)
			}
			want := tt.name + strings.TrimPrefix(cliErr.Error(), path)
			if got := r.errorText(t); got != want {
				t.Errorf("error\n  %s\nwant the command line's\n  %s", got, want)
			}
			assertNothingStored(t, ts)
		})
	}
	r := ts.upload(t, "forced&format=xplane", gz, nil)
	if r.code != 422 || !strings.Contains(r.errorText(t), "XSpace") {
		t.Errorf("a Chrome trace forced to xplane = %d %s, want 422 from the XPlane reader", r.code, r.body)
	}
}

// TestGzipBomb uploads a few hundred KB that expand to 100 MB of a Chrome
// trace's opening and blanks: refused with 413 once MaxBytes is crossed.
func TestGzipBomb(t *testing.T) {
	const maxBytes = 8 << 20
	// 100 MiB of blanks after the array's start, made without compressing
	// them.
	zr, err := tracetest.GzipBomb([]byte(`{"traceEvents":[`), ' ', 100<<20)
	if err != nil {
		t.Fatal(err)
	}
	var bomb bytes.Buffer
	if _, err := bomb.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	if bomb.Len() > 1<<20 {
		t.Fatalf("bomb is %d bytes, want under 1 MiB", bomb.Len())
	}

	an := NewAnalyzer(&run.Engine{Analysis: analyze.DefaultOptions(), Read: trace.Options{MaxBytes: maxBytes}}, render.Options{})
	path := filepath.Join(t.TempDir(), "bomb.json.gz")
	os.WriteFile(path, bomb.Bytes(), 0o600)
	if _, err := an(context.Background(), Upload{Path: path, Name: "bomb"}); !errors.Is(err, trace.ErrLimit) {
		t.Errorf("analysing the bomb: %v, want an error wrapping trace.ErrLimit", err)
	}

	ts := realServer(t, maxBytes)
	r := ts.upload(t, "bomb.json.gz", bomb.Bytes(), nil)
	if r.code != http.StatusRequestEntityTooLarge {
		t.Fatalf("bomb upload = %d %s, want 413", r.code, r.body)
	}
	// The ratio guard holds from the first MiB, so it refuses the bomb
	// before the size cap does.
	if msg := r.errorText(t); !strings.HasPrefix(msg, "bomb.json.gz: ") || !strings.Contains(msg, "likely a decompression bomb") {
		t.Errorf("error %q, want the upload named and the bomb refused", msg)
	}
	assertNothingStored(t, ts)
}

// kinetoTrace writes a small Kineto trace: steps of a single-process data
// load (load us) followed by one launched kernel (compute us) on GPU 0.
func kinetoTrace(steps int, load, compute int64) []byte {
	var b strings.Builder
	b.WriteString(`{"schemaVersion":1,"traceEvents":[` + "\n")
	b.WriteString(`{"ph":"M","name":"process_name","pid":0,"tid":0,"args":{"name":"CUDA"}},` + "\n")
	t := int64(1000)
	for k := range steps {
		step := load + compute + 20
		fmt.Fprintf(&b, `{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":100,"tid":100,"ts":%d,"dur":%d},`+"\n", k, t, step)
		fmt.Fprintf(&b, `{"ph":"X","cat":"user_annotation","name":"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__","pid":100,"tid":100,"ts":%d,"dur":%d},`+"\n", t+1, load)
		fmt.Fprintf(&b, `{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":100,"ts":%d,"dur":5,"args":{"correlation":%d}},`+"\n", t+load+2, k+1)
		fmt.Fprintf(&b, `{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":%d,"dur":%d,"args":{"correlation":%d,"device":0,"stream":7}},`+"\n", t+load+10, compute, k+1)
		t += step
	}
	b.WriteString(`{"ph":"M","name":"thread_name","pid":100,"tid":100,"args":{"name":"python"}}]}`)
	return []byte(b.String())
}

func TestGeneratedTrace(t *testing.T) {
	ts := realServer(t, 0)
	const steps, load, compute = 6, 3000, 1000 // us: input three times the compute
	data := kinetoTrace(steps, load, compute)
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(data)
	zw.Close()

	for _, tt := range []struct {
		name string
		data []byte
	}{{"gen.json", data}, {"gen.json.gz", zipped.Bytes()}} {
		a := ts.mustUpload(t, tt.name, tt.data)
		var rep v1
		if err := jsonUnmarshal(a.Report, &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Verdict != "data-bound" || rep.Source.Bytes != int64(len(data)) {
			t.Errorf("%s: verdict %q from %d bytes, want data-bound from %d", tt.name, rep.Verdict, rep.Source.Bytes, len(data))
		}
		if len(rep.Devices) != 1 || rep.Devices[0].BusyNs != steps*compute*1000 {
			t.Errorf("%s: devices %+v, want one GPU busy %d ns", tt.name, rep.Devices, steps*compute*1000)
		}
	}
}

// TestCompareRealTraces compares two analysed uploads: the single-process
// DataLoader run against the four-worker one, before and after a restart.
func TestCompareRealTraces(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{DataDir: dir}
	cfg.UseEngine(&run.Engine{Analysis: analyze.DefaultOptions()}, render.Options{})
	ts := start(t, cfg)
	base := ts.mustUpload(t, "workers0", realTrace(t, "kineto-resnet50-workers0.pt.trace.json.gz"))
	next := ts.mustUpload(t, "workers4", realTrace(t, "kineto-resnet50-workers4.pt.trace.json.gz"))
	query := "?base=" + base.ID + "&new=" + next.ID

	r := get(t, ts.URL+"/api/v1/compare"+query)
	if r.code != 200 || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("compare: %d %s", r.code, r.body)
	}
	var doc struct {
		Schema string `json:"schema"`
		Base   struct {
			Path    string `json:"path"`
			Verdict string `json:"verdict"`
			StepNs  int64  `json:"step_ns"`
		} `json:"base"`
		New struct {
			Verdict string `json:"verdict"`
			StepNs  int64  `json:"step_ns"`
		} `json:"new"`
		Rows []struct {
			Metric string `json:"metric"`
		} `json:"rows"`
	}
	r.json(t, &doc)
	// The figures themselves are checked against the command line's in
	// internal/cli; here, that they are the stored runs'.
	if doc.Schema != "tracegap/compare/v1" || doc.Base.Path != "workers0" || doc.Base.Verdict != "sequential" || doc.New.Verdict != "parallel" ||
		doc.New.StepNs >= doc.Base.StepNs || len(doc.Rows) == 0 || doc.Rows[0].Metric != "input per step" {
		t.Errorf("comparison = %+v, want workers0 (sequential) -> workers4 (parallel, faster steps), input per step first", doc)
	}
	page := get(t, ts.URL+"/compare"+query)
	if page.code != 200 || !bytes.Contains(page.body, []byte("<td>input per step</td>")) || !bytes.Contains(page.body, []byte(">workers4</a>")) {
		t.Errorf("compare page: %d, want 200 with the input per step row and the traces named:\n%s", page.code, page.body)
	}

	ts.stop(t)
	ts = start(t, cfg)
	if again := get(t, ts.URL+"/api/v1/compare"+query); again.code != 200 || !bytes.Equal(again.body, r.body) {
		t.Errorf("compare after restart: %d, want 200 and the same document:\n%s", again.code, again.body)
	}
}
