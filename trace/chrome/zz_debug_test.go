package chrome

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracegap/tracegap/trace"
)

func TestZZDump(t *testing.T) {
	for _, f := range filepath.SplitList(os.Getenv("DUMP")) {
		tr, err := trace.Open(f, trace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("==", f, tr.Meta, tr.Warnings, tr.StartNs)
		for i, k := range tr.Tracks {
			kinds := map[trace.Kind]int{}
			fl := map[trace.Flag]int{}
			corr := 0
			for _, e := range tr.TrackEvents(i) {
				kinds[e.Kind]++
				if e.Corr != 0 {
					corr++
				}
				for b := trace.Flag(1); b != 0 && b <= trace.FlagStep; b <<= 1 {
					if e.Flags&b != 0 {
						fl[b]++
					}
				}
			}
			fmt.Printf("  %d %-6s %-6q %q p=%q t=%q der=%v n=%d kinds=%v flags=%v corr=%d\n", i, k.Kind, k.Device, k.Name, k.Process, k.Thread, k.Derived, k.Hi-k.Lo, kinds, fl, corr)
		}
	}
}
