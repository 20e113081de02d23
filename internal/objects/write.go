package objects

import (
	"context"
	"fmt"
	"io"
	"strings"

	"gocloud.dev/gcerrors"
)

// WriteFile writes the object that the URL raw names with write, and
// commits it only once write has succeeded: when write fails (or panics),
// the upload is abandoned and nothing is written, as render.WriteFile
// leaves no file behind. Errors name raw.
func WriteFile(ctx context.Context, raw string, write func(io.Writer) error) (err error) {
	l, err := parse(raw)
	if err != nil {
		return fmt.Errorf("creating %s: %w", raw, err)
	}
	if l.key == "" || strings.HasSuffix(l.key, "/") {
		return fmt.Errorf("creating %s: names a directory, expected an object's name", raw)
	}
	b, err := bucket(ctx, l)
	if err != nil {
		return fmt.Errorf("creating %s: %w", raw, describe(err))
	}
	// Cancelling ctx before Close abandons the upload (gocloud's
	// contract): deferred, so that a panic in write abandons it too.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := b.NewWriter(ctx, l.key, nil)
	if err != nil {
		return fmt.Errorf("creating %s: %w", raw, describe(err))
	}
	if err := write(w); err != nil {
		cancel()
		w.Close()
		return fmt.Errorf("writing %s: %w", raw, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", raw, describe(err))
	}
	return nil
}

// Remove deletes the object that the URL raw names; one that is not there
// is not an error.
func Remove(ctx context.Context, raw string) error {
	l, err := parse(raw)
	if err != nil {
		return fmt.Errorf("removing %s: %w", raw, err)
	}
	b, err := bucket(ctx, l)
	if err != nil {
		return fmt.Errorf("removing %s: %w", raw, describe(err))
	}
	if err := b.Delete(ctx, l.key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return fmt.Errorf("removing %s: %w", raw, describe(err))
	}
	return nil
}
