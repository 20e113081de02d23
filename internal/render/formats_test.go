package render

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze/job"
	"github.com/tracegap/tracegap/internal/compare"
	"github.com/tracegap/tracegap/internal/human"
)

// TestFormatTable: every row of formats is named by its own name first,
// parsed from each of its names and picked by each of its endings, in any
// case; no name or ending picks two formats; every format writes runs.
func TestFormatTable(t *testing.T) {
	owner := map[string]Format{}
	claim := func(key string, f Format) {
		t.Helper()
		if g, ok := owner[key]; ok && g != f {
			t.Errorf("%q names both %s and %s", key, g, f)
		}
		owner[key] = f
	}
	for i := range formats {
		d := &formats[i]
		if len(d.names) == 0 || d.names[0] != string(d.format) || len(d.suffixes) == 0 || d.runs == nil {
			t.Errorf("%s: names %q, suffixes %q, runs writer %t; want its own name first, an ending and a runs writer",
				d.format, d.names, d.suffixes, d.runs != nil)
		}
		for _, n := range d.names {
			claim(n, d.format)
			for _, s := range []string{n, strings.ToUpper(n), " " + n + " "} {
				if got, err := ParseFormat(s); got != d.format || err != nil {
					t.Errorf("ParseFormat(%q) = %q, %v; want %s", s, got, err, d.format)
				}
			}
		}
		for _, s := range d.suffixes {
			claim(s, d.format)
		}
	}
}

// TestFormatErrors: what each thing can be written as comes from the
// table, and so do the errors that refuse the others.
func TestFormatErrors(t *testing.T) {
	var all []string
	for i := range formats {
		all = append(all, string(formats[i].format))
	}
	if _, err := ParseFormat("pdf"); err == nil || err.Error() != `unknown report format "pdf": expected `+human.OrList(all) {
		t.Errorf("ParseFormat(pdf): %v", err)
	}
	for _, o := range []Of{OfRuns, OfJob, OfComparison, OfSweep} {
		supported := Formats(o)
		if len(supported) == 0 || supported[0] != Text {
			t.Errorf("%s: formats %q; want text first", o, supported)
		}
		for _, f := range append(Formats(OfRuns), "pdf") {
			err := f.For(o)
			want := fmt.Sprintf("%s cannot be written as %s: expected %s", o, f, FormatNames(o))
			if slices.Contains(supported, f) {
				want = ""
			}
			if got := fmt.Sprint(err); err != nil && got != want || err == nil && want != "" {
				t.Errorf("%s.For(%s) = %v, want %q", f, o, err, want)
			}
		}
	}
}

// TestWriterErrors: a writer asked for a format it has no writer for says
// which it has, without writing.
func TestWriterErrors(t *testing.T) {
	tests := []struct {
		name  string
		write func(*strings.Builder) error
		want  string
	}{
		{"runs pdf", func(w *strings.Builder) error { return WriteAll(w, nil, "pdf", Options{}) },
			`report: unknown format "pdf": expected ` + FormatNames(OfRuns)},
		{"job pdf", func(w *strings.Builder) error { return WriteJob(w, &job.Result{}, "pdf", Options{}) },
			`report: unknown format "pdf": expected ` + FormatNames(OfJob)},
		{"comparison html", func(w *strings.Builder) error { return WriteComparison(w, testComparison(), HTML, Options{}) },
			`report: a comparison cannot be written as "html": expected text, json or markdown`},
		{"sweep pdf", func(w *strings.Builder) error { return WriteSweep(w, &compare.Sweep{}, "pdf", Options{}) },
			`report: a sweep cannot be written as "pdf": expected ` + FormatNames(OfSweep)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := tt.write(&b); err == nil || err.Error() != tt.want || b.Len() != 0 {
				t.Errorf("error %v, wrote %d bytes; want %q and nothing written", err, b.Len(), tt.want)
			}
		})
	}
}
