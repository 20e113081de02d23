// Package runtest registers, for tests of panic isolation, a trace format
// whose reader panics: an input starting with PanicMagic stands for an
// input that meets a bug in a reader. Import it from tests only.
package runtest

import (
	"bytes"
	"io"

	"github.com/tracegap/tracegap/trace"
)

// PanicMagic starts an input whose reading panics with PanicValue.
const PanicMagic = "TRACEGAP-TEST-PANIC\n"

// PanicValue is what the reader panics with.
const PanicValue = "reader bug"

func init() {
	trace.Register(trace.Format{
		Name:   "test-panic",
		Hidden: true,
		Sniff:  func(head []byte) bool { return bytes.HasPrefix(head, []byte(PanicMagic)) },
		Read:   func(io.Reader, trace.Options) (*trace.Trace, error) { panic(PanicValue) },
	})
}
