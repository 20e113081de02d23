package objects

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"strings"
	"sync"

	"gocloud.dev/blob"
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
	return upload(ctx, b, l.key, raw, write)
}

// errAbandoned ends the stream of an upload whose write failed or
// panicked.
var errAbandoned = errors.New("the write failed: upload abandoned")

// upload streams what write writes to key in b through Bucket.Upload,
// which a goroutine runs, and commits it only once write has succeeded.
// Cancelling ctx (deferred, for a panic in write too) abandons the upload
// (gocloud's contract). Bucket.Upload rather than a Writer: gocloud's
// azblob Writer (v0.47.0) panics in Close once its upload has failed,
// losing the store's error, where its Upload returns it.
func upload(ctx context.Context, b *blob.Bucket, key, raw string, write func(io.Writer) error) error {
	ctx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := b.Upload(ctx, key, pr, &blob.WriterOptions{ContentType: contentType(key)})
		pr.CloseWithError(cmp.Or(err, io.ErrClosedPipe)) // write's next Write fails
		done <- err
	}()
	uploaded := sync.OnceValue(func() error { return <-done })
	abandon := func() error {
		cancel()
		pw.CloseWithError(errAbandoned) // nothing once closed
		return uploaded()
	}
	defer abandon() // after a panic in write too, and waits for the upload to end
	if err := write(pw); err != nil {
		if uerr := abandon(); errors.Is(err, uerr) { // the store's error, which ended the write
			err = describe(uerr)
		}
		return fmt.Errorf("writing %s: %w", raw, err)
	}
	pw.Close()
	if err := uploaded(); err != nil {
		return fmt.Errorf("writing %s: %w", raw, describe(err))
	}
	return nil
}

// contentType is the media type an object is stored with, by its name's
// extension.
func contentType(key string) string {
	return cmp.Or(mime.TypeByExtension(path.Ext(key)), "application/octet-stream")
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
