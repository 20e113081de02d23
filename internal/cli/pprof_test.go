package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/spf13/pflag"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

func TestPprofCommand(t *testing.T) {
	w0 := realtraces.Path(t, workers0)
	res, err := addAnalysisFlags(pflag.NewFlagSet("", pflag.ContinueOnError)).analyzeFile(w0)
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, g := range res.Gaps {
		want += g.Dur
	}
	path := filepath.Join(t.TempDir(), "idle.pb.gz")
	code, out, errOut := tg("pprof", w0, "-o", path)
	if code != 0 || out != "" || !strings.HasPrefix(errOut, "tracegap: wrote "+path+": ") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, stdout, _ := tg("pprof", "-o", "-", w0)
	for _, b := range [][]byte{data, []byte(stdout)} {
		p, err := profile.Parse(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.CheckValid(); err != nil {
			t.Fatal(err)
		}
		var idle, gaps int64
		for _, s := range p.Sample {
			idle += s.Value[1]
			gaps += s.Value[0]
		}
		if idle != want || gaps != int64(len(res.Gaps)) {
			t.Errorf("profile holds %d ns in %d gaps, want %d ns in %d", idle, gaps, want, len(res.Gaps))
		}
	}
}

// TestGzipOutputNotToTerminal: pprof and summarize refuse to write their
// gzip-compressed output to a terminal (a pseudo-terminal's master here)
// with one line and exit 2, and write it to /dev/null, a character device
// that is no terminal.
func TestGzipOutputNotToTerminal(t *testing.T) {
	tty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil || !isTerminal(tty) {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer tty.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	var tr bytes.Buffer
	if err := tracetest.WriteChrome(&tr, tracetest.Loop{Steps: 4, Input: 2_000_000, Dispatch: 20_000, Compute: 500_000}.Spec()); err != nil {
		t.Fatal(err)
	}
	path := hostileFile(t, "loop.json", tr.Bytes())
	for _, cmd := range []string{"pprof", "summarize"} {
		var stderr bytes.Buffer
		if code := run([]string{cmd, "-o", "-", path}, tty, &stderr); code != exitUsage ||
			strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "redirect stdout") {
			t.Errorf("%s -o - to a terminal: exit %d, stderr %q; want 2 and one line", cmd, code, stderr.String())
		}
		stderr.Reset()
		if code := run([]string{cmd, "-o", "-", path}, null, &stderr); code != exitOK {
			t.Errorf("%s -o - to %s: exit %d, stderr %q; want 0", cmd, os.DevNull, code, stderr.String())
		}
	}
}
