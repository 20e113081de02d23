package tracetest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// Hostile is a name that tries every output channel at once: an OSC that
// retitles the terminal, a CSI that clears it, a CR that overwrites the
// line, a newline that starts GitHub workflow commands, a bidirectional
// override, a NUL, Markdown link, image and mention syntax, and a
// spreadsheet formula. Every report must show it inert.
const Hostile = "=cmd|' /C calc'!A0 \x1b]0;pwned\a\x1b[2J\rFAKE\n::error ::owned\n::add-mask::x \u202egnp.exe \x00 " +
	"[l](javascript:alert(1)) ![](https://evil.example/i.png) @here `x`|y"

// HostileLoop returns an input-bound loop whose loader event, host thread
// and device are named with Hostile, so that the name reaches the verdict,
// the gaps table, the findings and the gaps TSV.
func HostileLoop() *Spec {
	s := Loop{Steps: 4, Input: 2_000_000, Dispatch: 20_000, Compute: 500_000,
		InputName: SingleProcessLoader + " " + Hostile}.Spec()
	for i := range s.Threads {
		s.Threads[i].Name = Hostile
	}
	return s
}

// ManyStreams writes a Chrome trace of one device with n streams, each
// holding one kernel: a few bytes of input per stream, for the analysis
// of a device's streams to be linear in them.
func ManyStreams(n int) []byte { return kernels(n, func(i int) (int, int) { return 0, i }) }

// ManyDevices writes a Chrome trace of n devices of one kernel each.
func ManyDevices(n int) []byte { return kernels(n, func(i int) (int, int) { return i, 7 }) }

func kernels(n int, place func(i int) (dev, stream int)) []byte {
	var b bytes.Buffer
	b.WriteString(`{"traceEvents":[`)
	for i := range n {
		dev, stream := place(i)
		if i > 0 {
			b.WriteByte(',')
		}
		// Kernels of 5 us every 10 us: a gap between each.
		fmt.Fprintf(&b, `{"ph":"X","cat":"kernel","name":"k","pid":%d,"tid":%d,"ts":%d,"dur":5,"args":{"device":%d,"stream":%d}}`,
			dev, stream, 10*i, dev, stream)
	}
	b.WriteString("]}\n")
	return b.Bytes()
}

// EmptyLines writes an XSpace of one GPU plane holding n empty lines: two
// bytes each on the wire, and a few hundred in memory to a reader that
// keeps a header per line.
func EmptyLines(n int) []byte {
	var plane []byte
	plane = protowire.AppendTag(plane, 2, protowire.BytesType)
	plane = protowire.AppendString(plane, "/device:GPU:0")
	line := protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), nil)
	plane = append(plane, bytes.Repeat(line, n)...)
	space := protowire.AppendTag(nil, 1, protowire.BytesType)
	return protowire.AppendBytes(space, plane)
}

// ManySteps writes a Chrome trace of n steps, each a ProfilerStep
// annotation over one kernel: a few bytes per step, for the reports to stay
// bounded however many steps there are.
func ManySteps(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"traceEvents":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		ts := 10 * i
		fmt.Fprintf(&b, `{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":1,"tid":1,"ts":%d,"dur":9},`, i, ts)
		fmt.Fprintf(&b, `{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":%d,"dur":5,"args":{"device":0,"stream":7}}`, ts+1)
	}
	b.WriteString("]}\n")
	return []byte(b.String())
}

// EmptyEvents writes an XSpace of one GPU plane whose one line holds n
// empty events: two bytes each on the wire, the smallest an XEvent can
// be, and a few dozen in memory. pad random bytes, in a field readers
// skip, make its gzip as large as a real trace's would be for its size.
func EmptyEvents(n, pad int) []byte {
	var plane []byte
	plane = protowire.AppendTag(plane, 2, protowire.BytesType)
	plane = protowire.AppendString(plane, "/device:GPU:0")
	if pad > 0 {
		junk := make([]byte, pad)
		rand.NewChaCha8([32]byte{1}).Read(junk)
		plane = protowire.AppendTag(plane, 99, protowire.BytesType)
		plane = protowire.AppendBytes(plane, junk)
	}
	event := protowire.AppendBytes(protowire.AppendTag(nil, 4, protowire.BytesType), nil)
	line := protowire.AppendTag(nil, 3, protowire.BytesType)
	line = protowire.AppendBytes(line, bytes.Repeat(event, n))
	plane = append(plane, line...)
	space := protowire.AppendTag(nil, 1, protowire.BytesType)
	return protowire.AppendBytes(space, plane)
}

// Endless is a stream of Head, then Fill bytes without end, as a device
// (/dev/zero) or a pipe gives: a reader must refuse it by what it reads,
// not by reaching its end. N counts the bytes read from it.
type Endless struct {
	Head []byte
	Fill byte
	N    int64
}

func (e *Endless) Read(p []byte) (int, error) {
	k := copy(p, e.Head)
	e.Head = e.Head[k:]
	for i := k; i < len(p); i++ {
		p[i] = e.Fill
	}
	e.N += int64(len(p))
	return len(p), nil
}
