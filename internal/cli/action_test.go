package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/testservers"
)

// TestMain lets the test binary stand in for the tracegap command when a
// test runs it with TRACEGAP_AS_CLI set (a shell script calling tracegap).
func TestMain(m *testing.M) {
	if os.Getenv("TRACEGAP_AS_CLI") != "" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	code := m.Run()
	testservers.Stop()
	os.Exit(code)
}

// actionStep returns the run script of the step named name in the
// repository's action.yml.
func actionStep(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "- name: "+name {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			if strings.TrimSpace(lines[j]) != "run: |" {
				continue
			}
			indent := len(lines[j+1]) - len(strings.TrimLeft(lines[j+1], " "))
			var script []string
			for _, s := range lines[j+1:] {
				if strings.TrimSpace(s) != "" && len(s)-len(strings.TrimLeft(s, " ")) < indent {
					break
				}
				script = append(script, strings.TrimPrefix(s, strings.Repeat(" ", indent)))
			}
			return strings.Join(script, "\n")
		}
	}
	t.Fatalf("action.yml has no step %q with a run script", name)
	return ""
}

// TestActionCheck runs the action's check step in bash, with the
// inputs a workflow gives, against a failing trace: it writes a SARIF log
// that names the failure, and exits 1 as check does.
func TestActionCheck(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash:", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	example, err := filepath.Abs(filepath.Join("..", "..", "testdata", "example.pt.trace.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	prog := "tracegap() { TRACEGAP_AS_CLI=1 \"$SELF\" \"$@\"; }\n" + actionStep(t, "Check the traces")
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", prog)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SELF="+self, "TRACEGAP_PATHS="+example, "TRACEGAP_ARGS=--isolated --fail-on data-bound", "TRACEGAP_SARIF=out.sarif")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitCheck {
		t.Fatalf("the step: %v, %s; want exit 1 for the failed rule", err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "out.sarif"))
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Version string
		Runs    []struct{ Results []struct{ RuleID string } }
	}
	if err := json.Unmarshal(data, &log); err != nil || log.Version != "2.1.0" || len(log.Runs) != 1 || len(log.Runs[0].Results) == 0 || log.Runs[0].Results[0].RuleID != "verdict" {
		t.Errorf("SARIF %s (%v): want a 2.1.0 log with the verdict's failure", data, err)
	}
	if _, err := os.Stat(filepath.Join("..", "..", "scripts", "build-wheel.sh")); err != nil {
		t.Errorf("the install step's script: %v", err)
	}
}

// TestCheckSARIFReal: on the vLLM trace, recorded with Python stacks, the
// failure is located at vLLM's own lines, the most idle first (the MoE
// layer's forward, where the trace's dispatch overhead is); the generated
// example, without stacks, gets a result without a location that says how
// to record them.
func TestCheckSARIFReal(t *testing.T) {
	vllm := filepath.Join(realtraces.Dir(t), "tracelens-vllm-eager-b200.json.gz")
	example := filepath.Join("..", "..", "testdata", "example.pt.trace.json.gz")
	log := checkSARIF(t, exitCheck, "--fail-on", "host-bound,data-bound", vllm, example)
	res := log.Runs[0].Results
	if len(res) < 2 || len(res[0].Locations) != 1 {
		t.Fatalf("results %+v: want the vLLM failure located", res)
	}
	if p := res[0].Locations[0].PhysicalLocation; p.ArtifactLocation.URI != "vllm/model_executor/layers/fused_moe/layer.py" || p.Region.StartLine != 1696 {
		t.Errorf("first result at %s:%d, want vllm/model_executor/layers/fused_moe/layer.py:1696", p.ArtifactLocation.URI, p.Region.StartLine)
	}
	last := res[len(res)-1]
	if len(last.Locations) != 0 || !strings.Contains(last.Message.Text, "with_stack=True") {
		t.Errorf("the example's result %+v: want no location and how to record stacks", last)
	}
}
