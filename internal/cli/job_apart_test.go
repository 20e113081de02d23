package cli

import (
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
)

// TestJobApartRealTraces: traces of separate runs forced into a job (two
// ResNet-50 runs, two JAX programs whose XPlanes count from their own
// start) are refused on one line naming both, exit 2: their device work
// does not overlap and no collective aligns them. analyze and check agree.
func TestJobApartRealTraces(t *testing.T) {
	tests := []struct {
		a, b, apart string
	}{
		{workers0, workers4, "65.1 s"},
		{"tracelens-jax-conv-block-until-ready.xplane.pb", "tracelens-jax-te-fused-attn.xplane.pb", "9.58 s"},
	}
	for _, tt := range tests {
		a, b := realtraces.Path(t, tt.a), realtraces.Path(t, tt.b)
		line := a + " and " + b + ": not one job's ranks: their device work does not overlap in time (the second's starts " + tt.apart + " after the first's ends) and no collective aligns their clocks; expected the ranks of one job, traced together: analyse each trace on its own (--no-job)\n"
		// check prints its errors as it prints failed rules.
		for cmd, prefix := range map[string]string{"analyze": "tracegap: ", "check": "ERROR "} {
			want := prefix + line
			code, out, errs := tg(cmd, "--job", a, b)
			if code != exitUsage || out != "" || errs != want {
				t.Errorf("%s --job %s %s: exit %d, stdout %q\nstderr %q\nwant   %q", cmd, tt.a, tt.b, code, strings.TrimSpace(out), errs, want)
			}
		}
	}
}
