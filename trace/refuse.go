package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"

	"github.com/tracegap/tracegap/internal/trace/formats"
)

// nsysExport is the command that turns an Nsight Systems report into the
// SQLite export tracegap reads.
const nsysExport = "nsys export --type sqlite --output X.sqlite report.nsys-rep"

// NsysReportError refuses an Nsight Systems report (.nsys-rep), which only
// nsys reads. Name, when known, is the report's file name, which the
// error's hint then uses: Read does not know it; Open, and a caller
// reading a file it opened itself, set it.
type NsysReportError struct {
	Name string
}

func (e *NsysReportError) Error() string { return formats.NsysReport(e.Name) }

// refusals are inputs that tracegap recognises but does not read: each
// says what the input is and what to do instead, for the one line that
// refuses it, in place of "unrecognised format".
var refusals = []struct {
	match func(head []byte) bool
	what  string
}{
	{nsysReport, ""}, // an *NsysReportError
	{nsysJax, "an nsys-jax archive (a zip of parquet tables), which tracegap does not read: export the Nsight Systems report inside or beside it with `" + nsysExport + "` and analyse X.sqlite"},
	{zipArchive, "a zip archive: unpack it and pass the trace inside"},
	{pickle, "a Python pickle (such as a PyTorch memory snapshot from torch.cuda.memory._dump_snapshot), not a profiler trace"},
}

// refused returns the error with which Read refuses an input it
// recognises, from head, its first (up to 512) bytes after decompression:
// what the input is and what to do instead. It returns nil for any other
// input.
func refused(head []byte) error {
	for _, r := range refusals {
		if r.match(head) {
			if r.what == "" {
				return &NsysReportError{}
			}
			return errors.New(r.what)
		}
	}
	return nil
}

// nsysReport reports whether head starts an Nsight Systems report: its
// files (.nsys-rep, and .qdrep before 2021) begin with this text.
func nsysReport(head []byte) bool {
	return bytes.HasPrefix(head, []byte("NVIDIA Tegra Profiler Report")) || bytes.HasPrefix(head, []byte("NVIDIA Nsight Systems Report"))
}

// zipName returns the name of the first file of a zip archive, "" when
// head is not one.
func zipName(head []byte) (string, bool) {
	if !bytes.HasPrefix(head, []byte("PK\x03\x04")) {
		return "", false
	}
	if len(head) < 30 {
		return "", true
	}
	n := int(binary.LittleEndian.Uint16(head[26:28]))
	return string(head[30:min(len(head), 30+n)]), true
}

// nsysJax reports whether head starts a zip whose first file is a parquet
// table or is named for nsys-jax.
func nsysJax(head []byte) bool {
	name, ok := zipName(head)
	return ok && (strings.HasSuffix(name, ".parquet") || strings.Contains(name, "nsys"))
}

func zipArchive(head []byte) bool {
	_, ok := zipName(head)
	return ok
}

// pickle reports whether head starts a Python pickle of protocol 2 to 5,
// as torch.cuda.memory._dump_snapshot writes.
func pickle(head []byte) bool {
	return len(head) >= 3 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5 && (head[2] == 0x95 || head[2] == '}' || head[2] == 'c' || head[2] == ']')
}
