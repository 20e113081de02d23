package check

import (
	"runtime"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/untrusted"
)

// FuzzConfig feeds arbitrary text to the config parser, as a tracegap.toml
// and as a pyproject.toml: it must never panic or hang, allocate in
// proportion to the text, and fail with one line, once escaped for a
// terminal, that names the file. The seeds are in testdata/fuzz/FuzzConfig.
func FuzzConfig(f *testing.F) {
	f.Add([]byte("[check]\nfail_on = [\"sequential\"]\nmax_idle = \"10%\"\nmin_steps = 3\n[analysis]\nmin_gap = \"50us\"\n"))
	f.Add([]byte("[tool.tracegap.check]\nmax_idle = 0.1\n[tool.ruff]\nline-length = 100\n"))
	f.Add([]byte("check = {max_idle = \"1%\", fail_on = []}\nanalysis.top = 5\n[[check]]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, path := range []string{ConfigName, "sub/" + PyprojectName} {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			c, err := parseConfig(path, data)
			if err == nil {
				for name, k := range keys {
					if _, err = c.Section(name, k); err != nil {
						break
					}
				}
			}
			runtime.ReadMemStats(&after)
			if alloc, bound := after.TotalAlloc-before.TotalAlloc, uint64(1<<20+256*len(data)); alloc > bound {
				t.Fatalf("parsing %d bytes allocated %d, over %d", len(data), alloc, bound)
			}
			if err == nil {
				continue
			}
			if msg := untrusted.Terminal(err.Error()); !strings.HasPrefix(msg, path+":") || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error %q: want one line naming %s", msg, path)
			}
		}
	})
}
