package chrome

import (
	"errors"

	"github.com/tracegap/tracegap/trace"
)

// limitError returns the error that ends reading when err is a limit
// being reached (the span cap, the event cap, the nesting limit, one of
// trace.Read's) or otherwise fatal. It returns nil for any other error.
func limitError(err error) error {
	var fatal *fatalError
	if errors.As(err, &fatal) {
		return fatal
	}
	if errors.Is(err, trace.ErrLimit) {
		return err
	}
	return nil
}
