package inputs

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"os"
	"path"
	"strings"

	"github.com/tracegap/tracegap/internal/trace/tracefile"
	"github.com/tracegap/tracegap/internal/trace/trackname"
)

// annotatedCopy says why a directory's annotated trace is left out.
const annotatedCopy = "an annotated copy of a trace (tracegap annotate), derived from another trace: not read as one more run or rank"

// Markers of tracegap's annotation: the category every event of the
// "tracegap" process has in Chrome JSON, and the XPlane's added plane.
var (
	chromeMarker = []byte(`"cat":"` + trackname.AnnotationCategory)
	xplaneMarker = []byte(trackname.AnnotationPlane)
)

// tailLen is how much of a plain Chrome JSON file's end is looked at for
// the annotation that ends its events; top-level keys after the events
// (traceName, deviceProperties) are a few KB.
const tailLen = 64 << 10

// annotated reports whether the trace file at path, of format name
// ("chrome", "xplane"), carries tracegap's annotation (tracegap annotate
// appends it to a copy of a trace), looking at little of it: a plain local
// Chrome file's last tailLen bytes; a plain local XPlane's top-level
// fields, skipped by their lengths, to the last plane's name. A gzipped
// file or an object cannot be read from its end: it is looked into only
// when its name follows annotate's conventions (annotatedName), then read
// through for the marker. A file that cannot be read is not annotated:
// reading it says what is wrong.
func annotated(fs tree, file, format string) bool {
	if format != "chrome" && format != "xplane" {
		return false
	}
	if _, local := fs.(localTree); local && !strings.HasSuffix(file, ".gz") {
		f, err := os.Open(file)
		if err != nil {
			return false
		}
		defer f.Close()
		st, err := f.Stat()
		return err == nil && plainAnnotated(f, st.Size(), format)
	}
	if !annotatedName(file) {
		return false
	}
	return streamAnnotated(fs, file, format)
}

// annotatedName reports whether a file's name follows the conventions of
// annotate's documented outputs: "annotated" in its name
// (run.annotated.json.gz) or as its directory (a TensorBoard run
// plugins/profile/annotated/host.xplane.pb).
func annotatedName(file string) bool {
	file = strings.ReplaceAll(file, "\\", "/")
	return strings.Contains(strings.ToLower(path.Base(file)), "annotated") ||
		strings.EqualFold(path.Base(path.Dir(file)), "annotated")
}

// plainAnnotated looks for the annotation in a plain file of n bytes.
func plainAnnotated(r io.ReaderAt, n int64, format string) bool {
	if n <= 0 {
		return false
	}
	if format == "xplane" {
		return lastPlaneIs(r, n, xplaneMarker)
	}
	off := max(n-tailLen, 0)
	tail := make([]byte, n-off)
	if k, _ := r.ReadAt(tail, off); k != len(tail) {
		return false
	}
	return bytes.Contains(tail, chromeMarker)
}

// streamAnnotated reads the file through, decompressed, for the marker of
// its format.
func streamAnnotated(fs tree, file, format string) bool {
	rc, err := fs.open(file)
	if err != nil {
		return false
	}
	defer rc.Close()
	br := bufio.NewReader(rc)
	var r io.Reader = br
	if magic, err := br.Peek(2); err == nil && tracefile.IsGzip(magic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return false
		}
		r = zr
	}
	marker := chromeMarker
	if format == "xplane" {
		marker = xplaneMarker
	}
	return containsStream(r, marker)
}

// containsStream reports whether r's bytes hold marker, reading them in
// chunks, each after the previous one's last len(marker)-1 bytes.
func containsStream(r io.Reader, marker []byte) bool {
	keep := len(marker) - 1
	buf := make([]byte, keep+1<<16)
	have := 0 // bytes carried over at buf's start
	for {
		n, err := r.Read(buf[have:])
		data := buf[:have+n]
		if bytes.Contains(data, marker) {
			return true
		}
		if err != nil {
			return false
		}
		have = copy(buf, data[len(data)-min(len(data), keep):])
	}
}

// lastPlaneIs reports whether the last plane of the XSpace r (n bytes)
// is named name, reading the varint tags and lengths of its top-level
// fields (XSpace.planes is field 1) and the start of the last plane.
func lastPlaneIs(r io.ReaderAt, n int64, name []byte) bool {
	const planes = 1
	last := int64(-1)
	var lastLen uint64
	for off := int64(0); off < n; {
		head := make([]byte, 2*binary.MaxVarintLen64)
		k, _ := r.ReadAt(head, off)
		tag, a := binary.Uvarint(head[:k])
		if a <= 0 || tag&7 != 2 { // only length-delimited fields at the top
			return false
		}
		l, b := binary.Uvarint(head[a:k])
		if b <= 0 || l > uint64(n-off-int64(a+b)) { // a field past the end: cut
			return false
		}
		if tag>>3 == planes {
			last, lastLen = off+int64(a+b), l
		}
		off += int64(a+b) + int64(l)
	}
	if last < 0 {
		return false
	}
	return planeNamed(io.NewSectionReader(r, last, int64(lastLen)), name)
}

// planeNamed reports whether the XPlane read from r has the name name:
// its id (field 1) and name (field 2) come first.
func planeNamed(r *io.SectionReader, name []byte) bool {
	head := make([]byte, 64)
	k, _ := r.ReadAt(head, 0)
	head = head[:k]
	for len(head) > 0 {
		tag, a := binary.Uvarint(head)
		if a <= 0 {
			return false
		}
		head = head[a:]
		switch {
		case tag == 1<<3: // id, a varint
			_, b := binary.Uvarint(head)
			if b <= 0 {
				return false
			}
			head = head[b:]
		case tag == 2<<3|2: // name
			l, b := binary.Uvarint(head)
			return b > 0 && uint64(len(head)-b) >= l && bytes.Equal(head[b:b+int(l)], name)
		default:
			return false
		}
	}
	return false
}
