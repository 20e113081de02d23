package chrome

import (
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tracegap/tracegap/trace"
)

// maxDepth is the decoder's fixed nesting limit (RFC 8259 allows one).
// The scanner that walks an event's members does not recurse, so depth
// costs no stack; the limit only ends hostile input early.
const maxDepth = 10000

// spanReader feeds the decoder and refuses input that runs on for more
// than max bytes past the end of the last complete token. The decoder
// holds everything from there in memory (a value it reads whole, a long
// string, even a run of white space), so without the cap one string or
// one run of blanks could take memory without bound.
type spanReader struct {
	r   io.Reader
	dec *jsontext.Decoder
	n   int64 // bytes handed to the decoder
	max int64
	err error
	// failure is the input's last error other than io.EOF: a cut gzip
	// stream, an I/O error.
	failure error
}

func (s *spanReader) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	from := s.dec.InputOffset()
	room := s.max - (s.n - from)
	if room <= 0 {
		s.err = &fatalError{fmt.Errorf("JSON value or white space from byte %d runs past %d bytes, longer than any trace event (raise --max-value if the trace is genuine): %w", from, s.max, trace.ErrLimit)}
		return 0, s.err
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := s.r.Read(p)
	s.n += int64(n)
	if err != nil && err != io.EOF {
		s.failure = err
	}
	return n, err
}

// limitError returns the error that ends reading when err is a limit
// being reached: the span cap, the event cap, the decoder's depth limit or
// one of trace.Read's. It returns nil for any other error.
func limitError(err error, off int64) error {
	var fatal *fatalError
	if errors.As(err, &fatal) {
		return fatal
	}
	if errors.Is(err, trace.ErrLimit) {
		return err
	}
	var serr *jsontext.SyntacticError
	// The decoder's depth error is not exported; its text is all there is.
	if errors.As(err, &serr) && serr.Err != nil && serr.Err.Error() == "exceeded max depth" {
		return fmt.Errorf("JSON nested more than %d levels deep at byte %d, deeper than any trace: %w", maxDepth, off, trace.ErrLimit)
	}
	return nil
}
