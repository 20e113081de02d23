package xplane

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

// TestCount: the events counted are at least those read, on generated
// XSpaces and on the real ones; a cut XSpace cannot be counted.
func TestCount(t *testing.T) {
	inputs := map[string][]byte{"empty events": tracetest.EmptyEvents(1000, 100)}
	var buf bytes.Buffer
	if err := tracetest.WriteXPlane(&buf, tracetest.HostileLoop()); err != nil {
		t.Fatal(err)
	}
	inputs["loop"] = buf.Bytes()
	real, _ := filepath.Glob("../../../../shared/traces/*.xplane.pb")
	for _, p := range real {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		inputs[filepath.Base(p)] = b
	}
	for name, b := range inputs {
		n, ok := Count(bytes.NewReader(b))
		tr, err := Read(bytes.NewReader(b), trace.Options{})
		switch {
		case err != nil && ok:
			t.Logf("%s: %d counted, unreadable: %v", name, n, err)
		case err != nil:
		case !ok:
			t.Errorf("%s: read %d events, not counted", name, len(tr.Events))
		case int64(len(tr.Events)) > n:
			t.Errorf("%s: read %d events, counted %d", name, len(tr.Events), n)
		default:
			t.Logf("%s: read %d events, counted %d", name, len(tr.Events), n)
		}
	}
	if _, ok := Count(bytes.NewReader(inputs["loop"][:len(inputs["loop"])-1])); ok {
		t.Errorf("a cut XSpace was counted")
	}
}
