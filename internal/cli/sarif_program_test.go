package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
)

// TestCheckSARIFProgram: the JAX conv trace's Python frames are all
// JAX's (the loop was entered before the capture), but its HLO metadata
// names the user's lines: the sync failure is located where the program
// the device waited on, jit_forward_3d_conv, has its code, its
// conv_general_dilated at generate_conv_trace.py:23 (the source_line of
// all five of its ops that name one), and the message says it is not the
// blocking call.
func TestCheckSARIFProgram(t *testing.T) {
	conv := filepath.Join(realtraces.Dir(t), "tracelens-jax-conv-block-until-ready.xplane.pb")
	code, out, stderr := runCmd("check", "--isolated", "--format", "sarif", conv)
	if code != exitCheck {
		t.Fatalf("exit %d, %s", code, stderr)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				Message   struct{ Text string }
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	res := log.Runs[0].Results
	if len(res) != 1 || len(res[0].Locations) != 1 {
		t.Fatalf("results %+v: want one, located", res)
	}
	p := res[0].Locations[0].PhysicalLocation
	if p.ArtifactLocation.URI != "/workspace/traces/generate_conv_trace.py" || p.Region.StartLine != 23 {
		t.Errorf("result at %s:%d, want /workspace/traces/generate_conv_trace.py:23", p.ArtifactLocation.URI, p.Region.StartLine)
	}
	for _, want := range []string{"api.py:3154 block_until_ready", "program jit_forward_3d_conv", "jit(forward_3d_conv)/conv_general_dilated", "not the blocking call"} {
		if !strings.Contains(res[0].Message.Text, want) {
			t.Errorf("message %q lacks %q", res[0].Message.Text, want)
		}
	}
}
