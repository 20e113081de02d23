package all_test

import (
	"fmt"

	"github.com/tracegap/tracegap/trace"
	_ "github.com/tracegap/tracegap/trace/all"
)

// Example reads a trace in any shipped format, here the README's example
// (Kineto JSON, gzipped), once trace/all has registered the readers.
func Example() {
	t, err := trace.Open("../../testdata/example.pt.trace.json.gz", trace.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(t.Format, len(t.Events), len(t.Tracks))
	// Output: chrome 558 2
}
