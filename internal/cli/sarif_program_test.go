package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
)

// sarifDoc is what the tests read of a SARIF log.
type sarifDoc struct {
	Runs []struct {
		Results []struct {
			Message   struct{ Text string }
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct{ URI, URIBaseID string }
					Region           struct{ StartLine int }
				}
			}
		}
	}
}

// checkSARIF runs check with --format sarif and args, wants exit status
// code and returns the log's results.
func checkSARIF(t *testing.T, code int, args ...string) sarifDoc {
	t.Helper()
	got, out, stderr := runCmd(append([]string{"check", "--isolated", "--format", "sarif"}, args...)...)
	if got != code {
		t.Fatalf("check %q: exit %d, want %d: %s", args, got, code, stderr)
	}
	var log sarifDoc
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	return log
}

// TestCheckSARIFProgram: the JAX conv trace's Python frames are all
// JAX's (the loop was entered before the capture), but its HLO metadata
// names the user's lines: the sync failure is located where the program
// the device waited on, jit_forward_3d_conv, has its code, its
// conv_general_dilated at generate_conv_trace.py:23 (the source_line of
// all five of its ops that name one), and the message says it is not the
// blocking call. With --source-root the location is relative to the
// repository, against %SRCROOT%.
func TestCheckSARIFProgram(t *testing.T) {
	conv := filepath.Join(realtraces.Dir(t), "tracelens-jax-conv-block-until-ready.xplane.pb")
	for _, c := range []struct {
		args      []string
		uri, base string
	}{
		{nil, "/workspace/traces/generate_conv_trace.py", ""},
		{[]string{"--source-root", "/workspace/"}, "traces/generate_conv_trace.py", "%SRCROOT%"},
	} {
		res := checkSARIF(t, exitCheck, append(c.args, conv)...).Runs[0].Results
		if len(res) != 1 || len(res[0].Locations) != 1 {
			t.Fatalf("%q: results %+v: want one, located", c.args, res)
		}
		p := res[0].Locations[0].PhysicalLocation
		if a := p.ArtifactLocation; a.URI != c.uri || a.URIBaseID != c.base || p.Region.StartLine != 23 {
			t.Errorf("%q: result at %+v line %d, want %s (base %q) line 23", c.args, a, p.Region.StartLine, c.uri, c.base)
		}
		for _, want := range []string{"api.py:3154 block_until_ready", "program jit_forward_3d_conv", "jit(forward_3d_conv)/conv_general_dilated", "not the blocking call"} {
			if !strings.Contains(res[0].Message.Text, want) {
				t.Errorf("message %q lacks %q", res[0].Message.Text, want)
			}
		}
	}
}
