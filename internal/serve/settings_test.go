package serve

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/internal/run"
)

// TestHTMLRendersWithStoredSettings: a trace uploaded to a server with one
// set of options and first viewed after a restart with others gets the
// page the upload's options make, not the new server's.
func TestHTMLRendersWithStoredSettings(t *testing.T) {
	// kinetoTrace(6, 3000, 1000): six idle gaps of about 3 ms waiting on
	// the loader. At the upload, min-gap 20 us keeps them and two are
	// listed; after the restart, min-gap 5 ms would keep none, and one
	// would be listed.
	data := kinetoTrace(6, 3000, 1000)
	atUpload := settings{analysis: analyze.DefaultOptions(), report: render.Options{Top: 2}}
	later := settings{analysis: analyze.DefaultOptions(), report: render.Options{Top: 1}}
	later.analysis.MinGap = 5_000_000
	later.analysis.InputThreshold = 0.5

	dir := t.TempDir()
	first := start(t, atUpload.config(dir))
	a := first.mustUpload(t, "gen.json", data)
	first.stop(t)
	restarted := start(t, later.config(dir))
	r := get(t, restarted.URL+"/traces/"+a.ID)
	if r.code != http.StatusOK {
		t.Fatalf("view: %d %s", r.code, r.body)
	}

	want, other := atUpload.page(t, data), later.page(t, data)
	if footer(t, want) == footer(t, other) {
		t.Fatalf("both settings give the footer %q: the test cannot tell them apart", footer(t, want))
	}
	if got := footer(t, r.body); got != footer(t, want) {
		t.Errorf("page footer %q, want the upload's %q", got, footer(t, want))
	}
	if got := gapRows(r.body); got != 2 {
		t.Errorf("page lists %d gaps, want the upload's top 2", got)
	}
}

// settings are a server's analysis and report options.
type settings struct {
	analysis analyze.Options
	report   render.Options
}

func (s settings) config(dir string) Config {
	cfg := Config{DataDir: dir}
	cfg.UseEngine(&run.Engine{Analysis: s.analysis}, s.report)
	return cfg
}

// page renders data's HTML report with s, as the command line does.
func (s settings) page(t *testing.T, data []byte) []byte {
	t.Helper()
	e := &run.Engine{Analysis: s.analysis}
	res, err := e.Analyze(t.Context(), run.Input{R: bytes.NewReader(data), Name: "gen.json"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := render.Write(&b, res, render.HTML, s.report); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var footerRE = regexp.MustCompile(`<footer>Thresholds: [^<]*</footer>`)

// footer returns the page's footer, which states its thresholds.
func footer(t *testing.T, page []byte) string {
	t.Helper()
	f := footerRE.Find(page)
	if f == nil {
		t.Fatalf("page has no thresholds footer")
	}
	return string(f)
}

// gapRows counts the rows of the page's gap table.
func gapRows(page []byte) int {
	_, sec, ok := strings.Cut(string(page), "<h2>Longest gaps</h2>")
	if !ok {
		return 0
	}
	sec, _, _ = strings.Cut(sec, "<h2>")
	return strings.Count(sec, "<tr>") - 1 // less the header's
}

// TestStoredSettingsLeaveTheServersOwn: rendering a record stored with
// other patterns gives the record's patterns and leaves the server's as
// they were (json.Unmarshal fills a slice in place).
func TestStoredSettingsLeaveTheServersOwn(t *testing.T) {
	e := &run.Engine{Analysis: analyze.DefaultOptions()}
	e.Analysis.SyncPatterns = []string{"server_sync"}
	e.Analysis.InputPatterns = []string{"server_input"}
	stored := Settings{Analysis: analyze.DefaultOptions()}
	stored.Analysis.SyncPatterns = []string{"record_sync"}
	stored.Analysis.InputPatterns = []string{"record_input"}
	b, err := json.Marshal(stored)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := storedSettings(e, render.Options{}, b)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Analysis.SyncPatterns, []string{"record_sync"}) || !slices.Equal(got.Analysis.InputPatterns, []string{"record_input"}) {
		t.Errorf("record's patterns %q, %q; want the stored ones", got.Analysis.SyncPatterns, got.Analysis.InputPatterns)
	}
	if !slices.Equal(e.Analysis.SyncPatterns, []string{"server_sync"}) || !slices.Equal(e.Analysis.InputPatterns, []string{"server_input"}) {
		t.Errorf("the server's patterns became %q, %q", e.Analysis.SyncPatterns, e.Analysis.InputPatterns)
	}
}
