package realtraces

import (
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	cases, err := parse("file\texpect\twhy\na.json.gz\tparallel\tbusy\nb.pb\tsequential|host-bound\tsyncs\nc.pb\terror\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []Case{
		{"a.json.gz", []string{"parallel"}, "busy"},
		{"b.pb", []string{"sequential", "host-bound"}, "syncs"},
		{"c.pb", []string{"error"}, ""},
	}
	if !slices.EqualFunc(cases, want, func(a, b Case) bool {
		return a.File == b.File && a.Why == b.Why && slices.Equal(a.Expect, b.Expect)
	}) {
		t.Errorf("parse = %+v, want %+v", cases, want)
	}
	for _, bad := range []string{"", "file\texpect\twhy\n", "name\texpect\na\tparallel\n", "file\texpect\na\n", "file\texpect\n\tparallel\n"} {
		if _, err := parse(bad); err == nil {
			t.Errorf("parse(%q) succeeded, want an error", bad)
		}
	}
}

// TestShipped reads the real expected.tsv: every row names a trace that is
// there, with at least one verdict.
func TestShipped(t *testing.T) {
	cases := Expected(t)
	if len(cases) < 10 {
		t.Fatalf("%d rows in expected.tsv, want the full set", len(cases))
	}
	for _, c := range cases {
		Path(t, c.File)
	}
}
