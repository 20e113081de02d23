package tracetest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
)

// Tar returns a tar of regular files named names, in order, each holding
// the content content returns for it; gzipped when gz is set.
func Tar(gz bool, names []string, content func(name string) []byte) []byte {
	var buf bytes.Buffer
	var gw *gzip.Writer
	tw := tar.NewWriter(&buf)
	if gz {
		gw, _ = gzip.NewWriterLevel(&buf, gzip.BestCompression)
		tw = tar.NewWriter(gw)
	}
	for _, name := range names {
		b := content(name)
		// Writes to a bytes.Buffer cannot fail, nor can a header whose
		// size is the content's.
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg})
		tw.Write(b)
	}
	tw.Close()
	if gw != nil {
		gw.Close()
	}
	return buf.Bytes()
}

// ExpandingTar returns a .tar.gz of n traces of size bytes each, all
// spaces after a Chrome JSON opening: about a thousandth of n x size on
// the wire, the whole of it on the disk of whoever expands it.
func ExpandingTar(n int, size int) []byte {
	names := make([]string, n)
	for i := range names {
		names[i] = "logs/rank" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + ".trace.json"
	}
	return Tar(true, names, func(string) []byte {
		b := bytes.Repeat([]byte(" "), size)
		copy(b, `{"traceEvents":[`)
		return b
	})
}
