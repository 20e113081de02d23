package tracetest

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// bombChunk is how much fill one repeated deflate block expands to.
const bombChunk = 1 << 20

// GzipBomb returns a reader of a gzip file (one member, a valid trailer)
// that expands to size bytes: prefix followed by the byte fill repeated.
// It costs about a thousandth of size in output and almost nothing in
// memory or time until read, so that tests and scripts can make a 10 GB
// bomb of 10 MB on the fly: after a flush, deflate encodes every further
// megabyte of fill to the same bytes, which the reader repeats.
func GzipBomb(prefix []byte, fill byte, size int64) (io.Reader, error) {
	if size < int64(len(prefix))+3*bombChunk {
		return nil, fmt.Errorf("bomb of %d bytes: expected at least 3 MiB after the %d-byte prefix", size, len(prefix))
	}
	var out bytes.Buffer
	// Header: magic, deflate, no flags, no time, best compression, Unix.
	out.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 3})
	zw, err := flate.NewWriter(&out, flate.BestCompression)
	if err != nil {
		return nil, err
	}
	chunk := bytes.Repeat([]byte{fill}, bombChunk)
	first := append(append([]byte(nil), prefix...), chunk...)
	// Two chunks prime the window; the third is the block to repeat,
	// checked against a fourth.
	var blocks [3][]byte
	for i := range blocks {
		in := chunk
		if i == 0 {
			in = first
		}
		mark := out.Len()
		if _, err := zw.Write(in); err != nil {
			return nil, err
		}
		if err := zw.Flush(); err != nil {
			return nil, err
		}
		blocks[i] = bytes.Clone(out.Bytes()[mark:])
	}
	if !bytes.Equal(blocks[1], blocks[2]) {
		return nil, errors.New("deflate did not settle on a repeatable block")
	}
	head := out.Bytes()[:out.Len()-len(blocks[2])]
	rest := size - int64(len(first)) - bombChunk
	b := &bomb{
		head:   head,
		block:  blocks[2],
		blocks: rest / bombChunk,
		zw:     zw,
		tailIn: bytes.Repeat([]byte{fill}, int(rest%bombChunk)),
		size:   size,
		sum:    crc32.Update(crc32.ChecksumIEEE(first), crc32.IEEETable, chunk),
		chunk:  chunk,
	}
	b.cur = b.head
	return b, nil
}

// bomb streams a GzipBomb: head, block repeated, then the tail and
// trailer, made only when reached.
type bomb struct {
	head, block []byte
	blocks      int64 // repeats of block left
	zw          *flate.Writer
	tailIn      []byte
	tailDone    bool
	size        int64
	sum         uint32 // CRC-32 of the input so far
	chunk       []byte
	cur         []byte // bytes left of the current piece
}

func (b *bomb) Read(p []byte) (int, error) {
	for len(b.cur) == 0 {
		switch {
		case b.blocks > 0:
			b.blocks--
			b.sum = crc32.Update(b.sum, crc32.IEEETable, b.chunk)
			b.cur = b.block
		case !b.tailDone:
			b.tailDone = true
			tail, err := b.tail()
			if err != nil {
				return 0, err
			}
			b.cur = tail
		default:
			return 0, io.EOF
		}
	}
	n := copy(p, b.cur)
	b.cur = b.cur[n:]
	return n, nil
}

// tail ends the deflate stream and writes the gzip trailer.
func (b *bomb) tail() ([]byte, error) {
	var out bytes.Buffer
	// A reset compressor's blocks refer only to their own data, so they
	// may follow the flushed blocks in the same stream.
	b.zw.Reset(&out)
	if _, err := b.zw.Write(b.tailIn); err != nil {
		return nil, err
	}
	if err := b.zw.Close(); err != nil {
		return nil, err
	}
	b.sum = crc32.Update(b.sum, crc32.IEEETable, b.tailIn)
	out.Write(binary.LittleEndian.AppendUint32(nil, b.sum))
	out.Write(binary.LittleEndian.AppendUint32(nil, uint32(b.size)))
	return out.Bytes(), nil
}

// Gzip returns data compressed with gzip, as a profiler's .gz file holds
// it. Writing to memory cannot fail.
func Gzip(data []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}
