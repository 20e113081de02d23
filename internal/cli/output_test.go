package cli

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// TestOutputEnding: every command's -o follows one rule. The ending,
// after an optional .gz that gzips, picks the format; a --format that
// disagrees is refused, and so is an ending the command cannot write.
func TestOutputEnding(t *testing.T) {
	dir := t.TempDir()
	loop := tracetest.Loop{Steps: 4, Input: 2_000_000, Dispatch: 20_000, Compute: 500_000}
	in := writeLoop(t, dir, "run.xplane.pb", loop)
	in2 := writeLoop(t, dir, "run2.xplane.pb", loop)
	tests := []struct {
		args []string
		out  string
		// gz says the file is gzipped; head is how its (gunzipped) text
		// starts; want, when set, is the error the command must print.
		gz   bool
		head string
		want string
	}{
		{[]string{"analyze"}, "r.json.gz", true, "{", ""},
		{[]string{"analyze"}, "r.html.gz", true, "<!DOCTYPE html>", ""},
		{[]string{"analyze", "--format", "json"}, "r.json.gz", true, "{", ""},
		{[]string{"analyze"}, "r.txt", false, "", ""},
		{[]string{"analyze"}, "r.pdf", false, "", "R.PDF: analyze cannot write that: expected a name ending in .txt, .json, .md, .markdown, .html or .htm"},
		{[]string{"analyze", "--format", "html"}, "r.json.gz", false, "", "R.JSON.GZ disagree"},
		{[]string{"gaps"}, "g.json", false, "{", ""},
		{[]string{"gaps"}, "g.tsv.gz", true, "device\t", ""},
		{[]string{"gaps", "--format", "json"}, "g.tsv", false, "", "G.TSV disagree"},
		{[]string{"gaps"}, "g.html", false, "", "gaps cannot write that: expected a name ending in .tsv, .jsonl or .json"},
		{[]string{"pprof"}, "p.json", false, "", "pprof cannot write that: expected a name ending in .pb"},
		{[]string{"pprof"}, "p.pb.gz", true, "", ""},
		{[]string{"summarize"}, "s.json", false, "{", ""},
		{[]string{"summarize"}, "s.summary.json.gz", true, "{", ""},
		{[]string{"summarize"}, "s.txt", false, "", "summarize cannot write that"},
		{[]string{"compare"}, "c.json.gz", true, "{", ""},
		{[]string{"compare"}, "c.html", false, "", "compare cannot write that: expected a name ending in .txt, .json, .md or .markdown"},
		{[]string{"annotate"}, "a.json", false, "{", ""},
	}
	for _, tt := range tests {
		out := filepath.Join(dir, strings.ToUpper(tt.out))
		os.Remove(out)
		args := append(append([]string{}, tt.args...), "-o", out, in)
		if tt.args[0] == "compare" {
			args = append(args, in2)
		}
		code, _, stderr := tg(args...)
		if tt.want != "" {
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("%q: exit %d, stderr %q; want 2 and %q", args, code, stderr, tt.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%q wrote %s", args, out)
			}
			continue
		}
		if code != exitOK {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
			continue
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if isGz := bytes.HasPrefix(data, []byte{0x1f, 0x8b}); isGz != tt.gz {
			t.Errorf("%q: gzipped %t, want %t", args, isGz, tt.gz)
			continue
		}
		if tt.gz {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if data, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		if !strings.HasPrefix(string(data), tt.head) || bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
			t.Errorf("%q: file starts %.30q, want %q (gzipped once at most)", args, data, tt.head)
		}
	}
}

// TestPlurals: one thing is said in the singular.
func TestPlurals(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one.json")
	os.WriteFile(one, []byte(`{"traceEvents":[{"ph":"E","name":"x","pid":1,"tid":1,"ts":5}]}`), 0o644)
	host := filepath.Join(dir, "host.json")
	os.WriteFile(host, []byte(`{"traceEvents":[{"ph":"X","name":"step","pid":1,"tid":1,"ts":0,"dur":10}]}`), 0o644)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", one}, "got 1 argument\n"},
		{[]string{"gaps"}, "got 0 arguments"},
		{[]string{"analyze", one}, "dropped 1 event (first"},
		{[]string{"analyze", "-q", host}, "the trace holds 1 host event but"},
	} {
		_, stdout, stderr := tg(tt.args...)
		if !strings.Contains(stdout+stderr, tt.want) {
			t.Errorf("%q: %q %q, want %q", tt.args, stdout, stderr, tt.want)
		}
	}
}
