package run

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/objects"
	"github.com/tracegap/tracegap/internal/trace/tracefile"
	"github.com/tracegap/tracegap/trace"
)

// read reads one input within the engine's limits: admitted by the budget,
// stopped when ctx is cancelled, and, once read, held under the soft
// memory limit. It returns the options to analyse the trace with: the
// engine's, the gaps admitted by its budget. The caller calls release when
// done with the trace; errors name the input, as trace.Open's do.
func (e *Engine) read(ctx context.Context, in Input) (t *trace.Trace, release func(), aopt analyze.Options, err error) {
	name := in.name()
	aopt = e.Analysis
	r, size, closeIn, err := open(in)
	if err != nil {
		return nil, nil, aopt, openError(in, err)
	}
	defer closeIn()
	free := func() {}
	opt := e.Read
	var res *reservation
	if e.Budget != nil {
		var need int64
		var plain func(int64) int64
		need, plain, r = e.estimate(r, size, in.Format)
		if res, err = e.Budget.reserve(ctx, need); err != nil {
			return nil, nil, aopt, fmt.Errorf("%s: %w", name, err)
		}
		free = res.release
		if plain != nil {
			// A stream: the budget is checked again as it is read.
			opt.Reserve = func(read int64) error {
				return res.grow(plain(read+trace.ReserveStep), fmt.Sprintf("after %d bytes read", read))
			}
		}
	}
	opt.Progress = nil
	if e.Watch != nil {
		opt.Progress = e.Watch()
	}
	if in.Format != "" {
		opt.Format = in.Format
	}
	if ctx.Done() != nil {
		r = &ctxReader{ctx: ctx, r: r}
	}
	t, err = trace.Read(r, size, opt)
	if err != nil {
		free()
		if in.R == nil && IsSummary(in.Path) { // looked at only once unreadable
			err = ErrSummaryAlone
		}
		if ne := (*trace.NsysReportError)(nil); errors.As(err, &ne) && in.R == nil {
			ne.Name = in.Path // its hint names the real file
		}
		return nil, nil, aopt, fmt.Errorf("%s: %w", name, err)
	}
	if len(t.Events) == 0 {
		free()
		return nil, nil, aopt, fmt.Errorf("%s: %w", name, ErrNoEvents)
	}
	t.Path = name
	if res != nil {
		aopt.Admit = res.admitGaps
	}
	unhold := memLimit.hold(t)
	return t, func() { unhold(); free() }, aopt, nil
}

// ErrNoEvents refuses a trace that holds no events at all (`[]`,
// `{"traceEvents":[]}`, an XSpace of empty planes): there is nothing to
// judge, not even a host-only run, which has host events and is
// analysed (verdict no-device).
var ErrNoEvents = errors.New("the trace holds no events at all: expected a profiler capture with host or device events (was the profiler stopped before anything ran?)")

// open returns the input's reader and its size as stored (0 if unknown),
// and what closes it. A URL (internal/objects) opens the object it names.
func open(in Input) (r io.Reader, size int64, closeIn func(), err error) {
	if in.R != nil {
		return in.R, in.Size, func() {}, nil
	}
	if objects.IsURL(in.Path) {
		// An object reads as a file does: streamed, at offsets, its
		// size known, so that it is budgeted and read alike.
		o, err := objects.Open(context.Background(), in.Path)
		if err != nil {
			return nil, 0, nil, err
		}
		return o, o.Size(), func() { o.Close() }, nil
	}
	f, err := os.Open(in.Path)
	if err != nil {
		if uerr := objects.UnreadURL(in.Path); uerr != nil && errors.Is(err, fs.ErrNotExist) {
			return nil, 0, nil, uerr
		}
		return nil, 0, nil, err
	}
	st, err := f.Stat()
	if err == nil && st.IsDir() {
		err = fmt.Errorf("is a directory, expected a trace file")
	}
	if err != nil {
		f.Close()
		return nil, 0, nil, err
	}
	return f, st.Size(), func() { f.Close() }, nil
}

// openError names the input once in an error from opening it
// (tracefile.FileError), by its name: an upload's, not its temporary path.
func openError(in Input, err error) error { return tracefile.FileError(in.name(), err) }

// estimate returns the memory the input r needs at most (see need),
// whether that holds for the whole input, and the reader to read it from:
// r itself for a file (read at offsets, left where it was), else r behind
// the buffer that was peeked into. For a stream, whose size is not known
// before it is read, the estimate holds for its first headLen bytes only:
// plain says how much the bytes read so far need, as the read proceeds.
func (e *Engine) estimate(r io.Reader, size int64, format string) (n int64, plain func(int64) int64, _ io.Reader) {
	head := make([]byte, headLen)
	if f, ok := r.(io.ReaderAt); ok && size > 0 && atStart(r) {
		k, _ := f.ReadAt(head, 0)
		head = head[:k]
		gz := tracefile.IsGzip(head)
		if gz {
			head = inflate(head, 512)
		}
		tf := formatFor(head, format)
		if tf == nil {
			return need(nil, size, -1), nil, r
		}
		plain, events := measure(f, size, gz, *tf, e.Read)
		return need(tf, plain, events), nil, r
	}
	br := bufio.NewReaderSize(r, headLen)
	head, _ = br.Peek(headLen)
	if tracefile.IsGzip(head) {
		head = inflate(head, 512)
	}
	tf := formatFor(head, format)
	plain = func(n int64) int64 { return need(tf, n, -1) }
	return plain(headLen), plain, br
}

// atStart reports whether r can seek and is at its start, so that offsets
// in it are offsets in the input (as trace.Read requires of an
// io.ReaderAt).
func atStart(r io.Reader) bool {
	s, ok := r.(io.Seeker)
	if !ok {
		return false
	}
	pos, err := s.Seek(0, io.SeekCurrent)
	return err == nil && pos == 0
}

// ctxReader fails reads once ctx is done, so that reading a large input
// stops soon after its client has gone.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// ReadTrace reads one input within the engine's limits, as Analyze does,
// for a caller that needs the trace itself (to write it back annotated).
// The caller calls release when done with the trace. A panic while
// reading is returned as an error naming the input.
func (e *Engine) ReadTrace(ctx context.Context, in Input) (t *trace.Trace, release func(), err error) {
	err = Protect("reading", func() error {
		t, release, _, err = e.read(ctx, in)
		return err
	})
	if _, ok := err.(*PanicError); ok {
		return nil, nil, Named(in.name(), err)
	}
	return t, release, err
}
