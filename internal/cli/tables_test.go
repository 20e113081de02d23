package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/analyze/job"
	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/internal/trace/formats"
	"github.com/tracegap/tracegap/report"
)

// tableNames are the names of each table that docs and hand-written lists
// repeat: verdicts, causes (names, JSON keys, the parts of a job's wait),
// finding ids, trace formats and report formats.
func tableNames() map[string][]string {
	names := map[string][]string{"finding": advice.FindingIDs(), "format": formats.Names()}
	for _, v := range analyze.Verdicts() {
		names["verdict"] = append(names["verdict"], string(v))
	}
	for _, c := range analyze.Causes() {
		names["cause"] = append(names["cause"], c.String())
	}
	for _, k := range report.CauseKeys {
		names["cause key"] = append(names["cause key"], k)
		names["cause ns"] = append(names["cause ns"], k+"_ns")
	}
	for _, p := range (&job.WaitSplit{}).Parts() {
		names["doing"] = append(names["doing"], p.Name)
	}
	for _, f := range render.Formats(render.OfRuns) {
		names["report format"] = append(names["report format"], string(f))
		names["report suffix"] = append(names["report suffix"], f.Suffix())
	}
	return names
}

// TestListsFollowTables: every place outside the code that lists the
// verdicts, the causes, the finding ids, the trace formats or the report
// formats lists all of them: the line that starts with prefix (or, where prefix is a row
// template with %s, a row per name) names each.
func TestListsFollowTables(t *testing.T) {
	tests := []struct {
		file, prefix, table string
	}{
		{"README.md", "| `%s` |", "verdict"},
		{"docs/verdicts.md", "| `%s` |", "verdict"},
		{"docs/report-v1.md", "| `verdict` | string |", "verdict"},
		{"docs/ci.md", "| `--fail-on V1,V2` |", "verdict"},
		{"docs/report-v1.md", "| `cause` | string | the cause with the largest share", "cause"},
		{"docs/report-v1.md", "| `id` | string | stable identifier", "finding"},
		{"docs/report-v1.md", "| `format` | string | the reader that read it", "format"},
		{"docs/inputs.md", "input's first bytes, whatever the file is called", "format"},
		{"docs/serve.md", "# upload (plain or gzip", "format"},
		{"docs/report-v1.md", "`in_sync_ns`, `after_sync_ns`", "cause ns"},
		{"docs/report-v1.md", "`sync` (in-sync and after-sync)", "doing"},
		{"docs/report-v1.md", "(`in_sync`, `after_sync`", "cause key"},
		{"README.md", "| `%s`", "report format"},
		{"docs/reports.md", "when `--format` is not given", "report suffix"},
	}
	names := tableNames()
	for _, tt := range tests {
		t.Run(tt.file+" "+tt.table, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "..", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(data), "\n")
			for _, name := range names[tt.table] {
				if !listed(lines, tt.prefix, name) {
					t.Errorf("%s: %q does not list the %s %s", tt.file, tt.prefix, tt.table, name)
				}
			}
		})
	}
}

// listed reports whether a line starting with prefix names name (a word
// of its own: `name`, chrome|name), or, for a row template, whether a row
// of name starts a line.
func listed(lines []string, prefix, name string) bool {
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if strings.Contains(prefix, "%s") {
			if strings.HasPrefix(l, strings.Replace(prefix, "%s", name, 1)) {
				return true
			}
			continue
		}
		word := regexp.MustCompile(`(^|[^a-z0-9_-])` + regexp.QuoteMeta(name) + `([^a-z0-9_-]|$)`)
		if strings.HasPrefix(l, prefix) && word.MatchString(l) {
			return true
		}
	}
	return false
}

// TestOpenAPIFormats: the service's format parameter lists the formats
// that are registered.
func TestOpenAPIFormats(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "serve", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	enum, _ := json.Marshal(formats.Names())
	want := `"enum": ` + strings.ReplaceAll(string(enum), ",", ", ")
	if !strings.Contains(string(data), `{"name": "format", "in": "query", "schema": {"type": "string", `+want+`}`) {
		t.Errorf("openapi.json: the format parameter's enum is not %s", want)
	}
}
