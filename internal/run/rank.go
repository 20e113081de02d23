package run

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"

	"github.com/tracegap/tracegap/internal/trace/tracefile"
	"github.com/tracegap/tracegap/trace"
)

// ProbeRank reads the rank and world size that the trace file at path
// names near its start (trace.Format.ProbeRank), for telling the ranks of
// one distributed job apart, without reading the whole file. gzip is
// decompressed as by trace.Open.
// ok is false when the file cannot be read, is not a regular file (a pipe
// or FIFO can be read once only, by the analysis), its format is not known
// or has no probe, or it names no rank.
func ProbeRank(path string) (rank, world int, ok bool) {
	if !Regular(path) {
		return 0, 0, false
	}
	file, err := os.Open(path)
	if err != nil {
		return 0, 0, false
	}
	defer file.Close()
	return ProbeRankReader(file)
}

// ProbeRankReader is ProbeRank for a trace read from r, from its start
// (an object in a bucket); it reads no more of r than the probe needs.
func ProbeRankReader(r io.Reader) (rank, world int, ok bool) {
	br := bufio.NewReader(r)
	if magic, err := br.Peek(2); err == nil && tracefile.IsGzip(magic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return 0, 0, false
		}
		br = bufio.NewReader(zr)
	}
	head, _ := br.Peek(512) // a short file is sniffed on what it has
	f, found := trace.SniffFormat(head)
	if !found || f.ProbeRank == nil {
		return 0, 0, false
	}
	return f.ProbeRank(br)
}

// Regular reports whether path is a regular file, or a link to one: one
// that can be looked into before it is read. A pipe or FIFO (a shell's
// <(zcat trace.gz), standard input) yields its bytes once only.
func Regular(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
