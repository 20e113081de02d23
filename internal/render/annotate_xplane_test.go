package render

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/xplane"
	pb "github.com/tracegap/tracegap/internal/trace/xplane/xplanepb"
	"github.com/tracegap/tracegap/trace"
)

// TestAnnotateXPlane annotates each shared XPlane as an XPlane: decoded
// with the protobuf schema, every original plane (lines, events, stats)
// is there unchanged, followed by the annotation plane with a line per
// device of one event per gap; read with the project's reader it holds
// the original events and the gaps' and analyses as the original did.
func TestAnnotateXPlane(t *testing.T) {
	dir := realtraces.Dir(t)
	for _, name := range []string{"xprof-tpu-inference.xplane.pb", "tracelens-jax-conv-block-until-ready.xplane.pb", "tracelens-jax-te-fused-attn.xplane.pb"} {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			tr, err := xplane.Decode(raw, trace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := advice.Analyze(tr, analyze.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := AnnotateXPlane(&out, bytes.NewReader(raw), tr, res); err != nil {
				t.Fatal(err)
			}
			var before, after pb.XSpace
			if err := proto.Unmarshal(raw, &before); err != nil {
				t.Fatal(err)
			}
			if err := proto.Unmarshal(out.Bytes(), &after); err != nil {
				t.Fatal(err)
			}
			n := len(before.Planes)
			if len(after.Planes) != n+1 {
				t.Fatalf("%d planes, want the %d original and one more", len(after.Planes), n)
			}
			for i := range before.Planes {
				if !proto.Equal(before.Planes[i], after.Planes[i]) {
					t.Errorf("plane %d (%s) changed", i, before.Planes[i].Name)
				}
			}
			added := after.Planes[n]
			events := 0
			for _, l := range added.Lines {
				events += len(l.Events)
			}
			if added.Name != AnnotationPlane || events != len(res.Gaps)+len(res.Steps) {
				t.Errorf("added plane %q with %d events, want %q with %d gaps and %d steps", added.Name, events, AnnotationPlane, len(res.Gaps), len(res.Steps))
			}
			again, err := xplane.Decode(out.Bytes(), trace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(again.Events) != len(tr.Events)+events {
				t.Errorf("read back: %d events, want %d and %d added", len(again.Events), len(tr.Events), events)
			}
			res2, err := advice.Analyze(again, analyze.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if res2.Verdict != res.Verdict || res2.Idle != res.Idle {
				t.Errorf("annotated: %s %+v, original %s %+v", res2.Verdict, res2.Idle, res.Verdict, res.Idle)
			}
		})
	}
}
