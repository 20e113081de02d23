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
