package render

import (
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/untrusted"
)

// TestTimelineWideNames: the step timeline's bars start in the same
// column whatever the steps are named, Chinese names (two columns a
// character) and names cut to the column included.
func TestTimelineWideNames(t *testing.T) {
	res := &analyze.Result{Steps: []analyze.Step{
		{Name: "ProfilerStep#2", Dur: 10e6},
		{Name: "数据加载#3", Dur: 10e6},
		{Name: "训练步骤训练步骤训练步骤#4", Dur: 10e6}, // 26 columns, cut
	}}
	for _, l := range timelineLines(res, 10, untrusted.Terminal, nil) {
		bar := strings.IndexByte(l, '|')
		if bar < 0 {
			t.Fatalf("no bar in %q", l)
		}
		if col := untrusted.Width(l[:bar]); col != timelineName+1 {
			t.Errorf("%q: the bar starts at column %d, want %d", l, col, timelineName+1)
		}
	}
}
