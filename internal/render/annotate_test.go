package render

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestSpliceEvents(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		err      error
	}{
		{`{"traceEvents":[]}`, `{"traceEvents":[<empty>` + "\n" + `]}`, nil},
		{`[{"a":"]"}]`, `[{"a":"]"}<more>` + "\n" + `]`, nil},
		// Only the top-level member counts, whatever strings hold.
		{`{"x":{"traceEvents":[1]},"traceEvents":[ {"b":"\"]"} ],"y":[]}`,
			`{"x":{"traceEvents":[1]},"traceEvents":[ {"b":"\"]"} <more>` + "\n" + `],"y":[]}`, nil},
		{`{"traceName":"traceEvents","traceEvents" : [1]}`, `{"traceName":"traceEvents","traceEvents" : [1<more>` + "\n" + `]}`, nil},
		{`{"a":1}`, `{"a":1}`, errNoEvents},
		{`{"traceEvents":[1,2`, `{"traceEvents":[1,2`, errNoEvents},
	} {
		var out bytes.Buffer
		w := bufio.NewWriter(&out)
		err := spliceEvents(w, strings.NewReader(tc.in), func(w *bufio.Writer, empty bool) error {
			_, err := w.WriteString(map[bool]string{true: "<empty>", false: "<more>"}[empty])
			return err
		})
		w.Flush()
		if !errors.Is(err, tc.err) || out.String() != tc.want {
			t.Errorf("splicing %s: got %s (%v), want %s (%v)", tc.in, out.String(), err, tc.want, tc.err)
		}
	}
}

func TestChromeMicros(t *testing.T) {
	for ns, want := range map[int64]string{0: "0.000", 7: "0.007", 1_234_567: "1234.567", 1_700_000_000_123_456_789: "1700000000123456.789", -5: "-0.005"} {
		if got := chromeMicros(ns); string(got) != want {
			t.Errorf("chromeMicros(%d) = %s, want %s", ns, got, want)
		}
	}
}
