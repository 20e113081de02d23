package xplane

import (
	"bufio"
	"errors"
	"io"
	"math"
)

// Count returns how many XEvents the XSpace r holds, walking its planes'
// lines and skipping everything else, without keeping anything: what a
// memory budget admits an input by (trace.Format.Count). It reads r to its
// end. ok is false when r cannot be walked as an XSpace (a length past the
// end, a group, a wire type that does not exist): the reader would refuse
// it or keep only what precedes the damage, and the count is unknown.
func Count(r io.Reader) (events int64, ok bool) {
	c := counter{br: bufio.NewReaderSize(r, 64<<10)}
	if !c.walk(math.MaxInt64, 0) {
		return 0, false
	}
	return c.events, true
}

// counter walks an XSpace as a stream: depth 0 is the XSpace, 1 a plane,
// 2 a line, whose events (field 4) are counted.
type counter struct {
	br     *bufio.Reader
	pos    int64
	events int64
}

// The fields walked into: XSpace.planes, XPlane.lines; XLine.events are
// counted.
const (
	spacePlanes = 1
	planeLines  = 3
	lineEvents  = 4
)

// walk reads fields up to end (the end of the input at depth 0).
func (c *counter) walk(end int64, depth int) bool {
	for c.pos < end {
		tag, err := c.varint()
		if depth == 0 && errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			return false
		}
		num, typ := tag>>3, tag&7
		switch typ {
		case 0:
			if _, err := c.varint(); err != nil {
				return false
			}
		case 1, 5:
			if !c.skip(int64(8 - 4*(typ/5))) {
				return false
			}
		case 2:
			n, err := c.varint()
			if err != nil || n > uint64(end-c.pos) {
				return false
			}
			switch {
			case depth == 2 && num == lineEvents:
				c.events++
				if !c.skip(int64(n)) {
					return false
				}
			case depth == 0 && num == spacePlanes, depth == 1 && num == planeLines:
				if !c.walk(c.pos+int64(n), depth+1) {
					return false
				}
			default:
				if !c.skip(int64(n)) {
					return false
				}
			}
		default:
			return false
		}
	}
	return c.pos == end || depth == 0
}

func (c *counter) varint() (uint64, error) {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		b, err := c.br.ReadByte()
		if err != nil {
			if shift > 0 && errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		c.pos++
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, nil
		}
	}
	return 0, errors.New("varint longer than 10 bytes")
}

func (c *counter) skip(n int64) bool {
	for n > 0 {
		k, err := c.br.Discard(int(min(n, 1<<30)))
		c.pos += int64(k)
		n -= int64(k)
		if err != nil {
			return false
		}
	}
	return true
}
