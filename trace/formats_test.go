package trace_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/formats"
	"github.com/tracegap/tracegap/trace"
	_ "github.com/tracegap/tracegap/trace/all"
)

// TestFormats checks what the shipped formats register: names, titles and
// file suffixes, in sniffing order, what messages say of them, and the
// names LookupFormat knows.
func TestFormats(t *testing.T) {
	type row struct {
		name, title string
		suffixes    []string
		primary     bool
		probe       bool
	}
	want := []row{
		{"chrome", "Chrome trace-event JSON", []string{".pt.trace.json", ".trace.json", ".json"}, false, true},
		{"xplane", "XPlane protobuf", []string{".xplane.pb"}, true, false},
		{"nsight", "Nsight Systems SQLite export", []string{".sqlite"}, false, false},
	}
	var got []row
	for _, f := range trace.Formats() {
		got = append(got, row{f.Name, f.Title, f.Suffixes, f.Primary, f.ProbeRank != nil})
	}
	if !slices.EqualFunc(got, want, func(a, b row) bool {
		return a.name == b.name && a.title == b.title && slices.Equal(a.suffixes, b.suffixes) && a.primary == b.primary && a.probe == b.probe
	}) {
		t.Errorf("Formats() =\n %+v\nwant\n %+v", got, want)
	}
	if got, want := formats.Names(), []string{"chrome", "xplane", "nsight"}; !slices.Equal(got, want) {
		t.Errorf("formats.Names() = %q, want %q", got, want)
	}
	if got, want := formats.Titles(), "Chrome trace-event JSON, XPlane protobuf or Nsight Systems SQLite export"; got != want {
		t.Errorf("formats.Titles() = %q, want %q", got, want)
	}
	if got, want := formats.FilePatterns(), "*.pt.trace.json, *.trace.json, *.json (Chrome trace-event JSON), *.xplane.pb (XPlane protobuf) or *.sqlite (Nsight Systems SQLite export)"; got != want {
		t.Errorf("formats.FilePatterns() = %q, want %q", got, want)
	}
	for _, tt := range []struct{ name, err string }{
		{"xplane", ""},
		{"chrome", ""},
		{"pdf", `unknown format "pdf", expected chrome, xplane or nsight`},
		{"", `unknown format "", expected chrome, xplane or nsight`},
	} {
		f, err := trace.LookupFormat(tt.name)
		if gotErr := fmt.Sprint(err); tt.err == "" && (err != nil || f.Name != tt.name) || tt.err != "" && gotErr != tt.err {
			t.Errorf("LookupFormat(%q) = %q, %v; want %q, %q", tt.name, f.Name, err, tt.name, tt.err)
		}
	}
}
