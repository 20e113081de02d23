package objects

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"strings"
	"sync"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// Object is an object opened for reading. It reads as a file does: as a
// stream from its start (Read, Seek) and at offsets (ReadAt), which
// trace.Read and the memory estimate use for a file, and its Size is known
// before it is read. Each stretch read in order is one ranged request
// streamed as it is read, so that reading an object holds no more of it
// than reading a file does; a few such streams are kept open at once, for
// readers that read several parts of an input in parallel.
type Object struct {
	ctx  context.Context
	b    *blob.Bucket
	key  string
	size int64

	mu      sync.Mutex
	pos     int64     // where Read reads next
	streams []*stream // idle streams, each at its next offset
	closed  bool
}

// stream is a ranged read of the object from off to its end.
type stream struct {
	r   *blob.Reader
	off int64
}

// maxStreams bounds the idle streams an Object keeps, and skipAhead how
// far a stream is read forward to serve a read a little past it rather
// than opening another.
const (
	maxStreams = 8
	skipAhead  = 256 << 10
)

// Open opens the object that the URL raw names. Its errors say what was
// wrong in a few words (not found, access denied, no credentials), without
// the URL, which the caller names.
func Open(ctx context.Context, raw string) (*Object, error) {
	l, err := parse(raw)
	if err != nil {
		return nil, err
	}
	b, err := bucket(ctx, l)
	if err != nil {
		return nil, describe(err)
	}
	if l.key == "" || strings.HasSuffix(l.key, "/") {
		return nil, dirError(ctx, b, l.key)
	}
	a, err := b.Attributes(ctx, l.key)
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound {
			// A listing says whether the bucket is there, which an
			// answer to HEAD, with no body, cannot.
			dir, lerr := hasUnder(ctx, b, l.key)
			switch {
			case dir:
				return nil, errDir
			case errors.Is(lerr, fs.ErrNotExist):
				return nil, lerr
			}
		}
		return nil, describe(err)
	}
	return &Object{ctx: ctx, b: b, key: l.key, size: a.Size}, nil
}

// Size returns the object's size in bytes.
func (o *Object) Size() int64 { return o.size }

// Read reads from the object's stream at the current position.
func (o *Object) Read(p []byte) (int, error) {
	o.mu.Lock()
	off := o.pos
	o.mu.Unlock()
	n, err := o.read(p, off, false)
	o.mu.Lock()
	o.pos = off + int64(n)
	o.mu.Unlock()
	return n, err
}

// ReadAt reads len(p) bytes at off, as io.ReaderAt does.
func (o *Object) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	return o.read(p, off, true)
}

// Seek sets where Read reads next, as io.Seeker does.
func (o *Object) Seek(offset int64, whence int) (int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch whence {
	case io.SeekCurrent:
		offset += o.pos
	case io.SeekEnd:
		offset += o.size
	}
	if offset < 0 {
		return 0, errors.New("seek before the start")
	}
	o.pos = offset
	return offset, nil
}

// Close closes the object's streams.
func (o *Object) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range o.streams {
		s.r.Close()
	}
	o.streams, o.closed = nil, true
	return nil
}

// read reads into p at off from a stream there: all of p when full (as
// ReadAt), else what one read gives (as Read).
func (o *Object) read(p []byte, off int64, full bool) (int, error) {
	if off >= o.size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	s, err := o.take(off)
	if err != nil {
		return 0, err
	}
	var n int
	if full {
		n, err = io.ReadFull(s.r, p[:min(int64(len(p)), o.size-off)])
	} else {
		n, err = s.r.Read(p)
	}
	s.off += int64(n)
	switch {
	case err == nil || (err == io.EOF && s.off >= o.size):
		o.give(s)
	default:
		// Short of the size its attributes gave, or a failed read.
		s.r.Close()
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			return n, errors.New("the object ended early (changed while it was read?)")
		}
		return n, describe(err)
	}
	if full && n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// take returns an idle stream at off, or one a little before it read
// forward to it, else a new one.
func (o *Object) take(off int64) (*stream, error) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return nil, errors.New("read after close")
	}
	best := -1
	for i, s := range o.streams {
		if s.off <= off && off-s.off <= skipAhead && (best < 0 || s.off > o.streams[best].off) {
			best = i
		}
	}
	var s *stream
	if best >= 0 {
		s = o.streams[best]
		o.streams = append(o.streams[:best], o.streams[best+1:]...)
	}
	o.mu.Unlock()
	if s != nil {
		if _, err := io.CopyN(io.Discard, s.r, off-s.off); err == nil {
			s.off = off
			return s, nil
		}
		s.r.Close()
	}
	r, err := o.b.NewRangeReader(o.ctx, o.key, off, -1, nil)
	if err != nil {
		return nil, describe(err)
	}
	return &stream{r: r, off: off}, nil
}

// give keeps s for a later read, unless enough are kept.
func (o *Object) give(s *stream) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || len(o.streams) >= maxStreams || s.off >= o.size {
		s.r.Close()
		return
	}
	o.streams = append(o.streams, s)
}

// dirError says why the directory URL with key cannot be opened as an
// object: it is a directory, or there is nothing under it (or its bucket
// cannot be listed).
func dirError(ctx context.Context, b *blob.Bucket, key string) error {
	dir, err := hasUnder(ctx, b, key)
	switch {
	case err != nil:
		return err
	case !dir:
		return &Error{What: "not found (no objects under this prefix)", code: gcerrors.NotFound}
	}
	return errDir
}
