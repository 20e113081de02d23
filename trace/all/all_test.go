package all_test

import (
	"testing"

	"github.com/tracegap/tracegap/trace"
	_ "github.com/tracegap/tracegap/trace/all"
)

// TestEveryFormatComplete: every shipped format registers what the
// commands rely on: file-name endings (directories are searched by them)
// and its memory bound (memory budgets admit inputs by it), which grows
// with the input and covers at least the input itself.
func TestEveryFormatComplete(t *testing.T) {
	fs := trace.Formats()
	if len(fs) == 0 {
		t.Fatal("no format registered")
	}
	for _, f := range fs {
		if len(f.Suffixes) == 0 || f.Need == nil || f.Sniff == nil || f.Read == nil || f.Title == "" {
			t.Errorf("%s: suffixes %q, Need %t, Sniff %t, Read %t, title %q: want all", f.Name, f.Suffixes, f.Need != nil, f.Sniff != nil, f.Read != nil, f.Title)
			continue
		}
		small, large := f.Need(1<<10, -1), f.Need(1<<30, -1)
		if small <= 0 || large <= small || large < 1<<30 {
			t.Errorf("%s: Need(1 kB) = %d, Need(1 GB) = %d: want positive, growing, at least the input", f.Name, small, large)
		}
	}
}
