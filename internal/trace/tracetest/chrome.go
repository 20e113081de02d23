package tracetest

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
)

// WriteChrome writes s as a current-generation Kineto (PyTorch profiler)
// trace: an object with a traceEvents array holding process and thread
// names (ph M), host events on the host process (cpu_op, cuda_runtime,
// user_annotation, python_function), device events on process <device>,
// thread <stream> with args device, stream and correlation (kernel,
// gpu_memcpy, gpu_memset, gpu_user_annotation; a copy's Bytes as args
// bytes), and an ac2g flow from each
// launch to the device work it produced. Times are microseconds with three
// decimals, so every nanosecond survives; an event without duration is
// written as an instant.
func WriteChrome(w io.Writer, s *Spec) error {
	for i, e := range s.Events {
		if int(e.Role) >= len(roleCat) {
			return fmt.Errorf("event %d (%q): unknown role %d", i, e.Name, e.Role)
		}
	}
	cw := chromeWriter{w: bufio.NewWriter(w), pid: s.PID}
	if cw.pid == 0 {
		cw.pid = 1000
	}
	cw.str(`{"schemaVersion":1,"deviceProperties":[`)
	devices := s.devices()
	for i, d := range devices {
		if i > 0 {
			cw.str(",")
		}
		cw.str(fmt.Sprintf(`{"id":%d,"name":"tracetest GPU"}`, d))
	}
	cw.str(`],`)
	cw.distributedInfo(s)
	for _, k := range slices.Sorted(maps.Keys(s.Meta)) {
		cw.str(string(appendJSONString(nil, k)) + ":" + string(appendJSONString(nil, s.Meta[k])) + ",")
	}
	cw.str(`"traceEvents":[`)
	cw.metadata(s, devices)
	for i := range s.Events {
		cw.event(&s.Events[i])
	}
	cw.flows(s)
	cw.str("\n]}\n")
	if cw.err != nil {
		return cw.err
	}
	return cw.w.Flush()
}

// devices returns the device indexes the spec's events use, sorted.
func (s *Spec) devices() []int {
	var ds []int
	for _, e := range s.Events {
		if e.Role.Device() && !slices.Contains(ds, e.Device) {
			ds = append(ds, e.Device)
		}
	}
	slices.Sort(ds)
	return ds
}

type chromeWriter struct {
	w   *bufio.Writer
	pid int64
	n   int // events written, to place commas
	err error
	b   []byte // the event being formatted
}

func (c *chromeWriter) str(s string) {
	if c.err == nil {
		_, c.err = c.w.WriteString(s)
	}
}

// begin starts the next element of traceEvents.
func (c *chromeWriter) begin() {
	if c.n > 0 {
		c.str(",")
	}
	c.str("\n")
	c.n++
}

func (c *chromeWriter) metadata(s *Spec, devices []int) {
	c.meta("process_name", c.pid, 0, "python")
	c.meta("process_labels", c.pid, 0, "CPU")
	for _, th := range s.Threads {
		if th.Name != "" {
			c.meta("thread_name", c.pid, th.TID, fmt.Sprintf("thread %d (%s)", th.TID, th.Name))
		}
	}
	for _, d := range devices {
		c.meta("process_name", int64(d), 0, "python")
		c.meta("process_labels", int64(d), 0, fmt.Sprintf("GPU %d", d))
	}
}

func (c *chromeWriter) meta(name string, pid, tid int64, value string) {
	key := "name"
	if name == "process_labels" {
		key = "labels"
	}
	c.begin()
	b := fmt.Appendf(nil, `{"name":%q,"ph":"M","pid":%d,"tid":%d,"args":{%q:`, name, pid, tid, key)
	b = appendJSONString(b, value) // a thread name can hold anything
	c.str(string(b) + "}}")
}

// event writes one spec event; names are quoted as JSON strings.
func (c *chromeWriter) event(e *Event) {
	c.begin()
	b := c.b[:0]
	if e.Dur == 0 {
		b = append(b, `{"ph":"i","s":"t","cat":`...)
	} else {
		b = append(b, `{"ph":"X","cat":`...)
	}
	b = strconv.AppendQuote(b, roleCat[e.Role])
	b = append(b, `,"name":`...)
	b = appendJSONString(b, e.Name)
	pid, tid := c.pid, e.Thread
	if e.Role.Device() {
		pid, tid = int64(e.Device), int64(e.Stream)
	}
	b = fmt.Appendf(b, `,"pid":%d,"tid":%d,"ts":`, pid, tid)
	b = appendMicros(b, e.Start)
	if e.Dur != 0 {
		b = append(b, `,"dur":`...)
		b = appendMicros(b, e.Dur)
	}
	switch {
	case e.Role == Memcpy && e.Bytes > 0:
		b = fmt.Appendf(b, `,"args":{"device":%d,"stream":%d,"correlation":%d,"bytes":%d}`, e.Device, e.Stream, e.Corr, e.Bytes)
	case e.Role.Device():
		b = fmt.Appendf(b, `,"args":{"device":%d,"stream":%d,"correlation":%d}`, e.Device, e.Stream, e.Corr)
	case e.Corr != 0:
		b = fmt.Appendf(b, `,"args":{"correlation":%d}`, e.Corr)
	}
	b = append(b, '}')
	c.b = b
	c.str(string(b))
}

// flows writes an ac2g flow start at each launch with a correlation and a
// flow end at each piece of device work that carries it, as Kineto does.
func (c *chromeWriter) flows(s *Spec) {
	device := map[uint64]bool{}
	for _, e := range s.Events {
		if e.Role.Device() && e.Role != DeviceAnnotation && e.Corr != 0 {
			device[e.Corr] = true
		}
	}
	for _, e := range s.Events {
		if e.Corr == 0 || !device[e.Corr] {
			continue
		}
		switch {
		case e.Role == Runtime:
			c.flow("s", c.pid, e.Thread, e.Start, e.Corr, "")
		case e.Role.Device() && e.Role != DeviceAnnotation:
			c.flow("f", int64(e.Device), int64(e.Stream), e.Start, e.Corr, `,"bp":"e"`)
		}
	}
}

func (c *chromeWriter) flow(ph string, pid, tid, ts int64, id uint64, extra string) {
	c.begin()
	b := fmt.Appendf(c.b[:0], `{"ph":%q,"id":%d,"pid":%d,"tid":%d,"ts":`, ph, id, pid, tid)
	b = appendMicros(b, ts)
	b = fmt.Appendf(b, `,"cat":"ac2g","name":"ac2g"%s}`, extra)
	c.b = b
	c.str(string(b))
}

// appendMicros writes ns nanoseconds as microseconds with three decimals.
func appendMicros(b []byte, ns int64) []byte {
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1000, 10)
	frac := ns % 1000
	return append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
}

// appendJSONString quotes s for JSON. strconv.Quote is close but writes
// escapes (\x..) that JSON does not have.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r < 0x20:
			b = fmt.Appendf(b, `\u%04x`, r)
		default:
			b = append(b, string(r)...)
		}
	}
	return append(b, '"')
}

// distributedInfo writes Kineto's distributedInfo member for a spec of a
// distributed job (WorldSize > 0), as PyTorch writes it for each rank.
func (c *chromeWriter) distributedInfo(s *Spec) {
	if s.WorldSize > 0 {
		c.str(fmt.Sprintf(`"distributedInfo":{"backend":"nccl","rank":%d,"world_size":%d},`, s.Rank, s.WorldSize))
	}
}
