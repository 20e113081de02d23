package xplane

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tracegap/tracegap/internal/trace/trackname"
)

// This file reads, from the HLO protos that JAX's and TensorFlow's
// profilers put on the "/host:metadata" plane (an "Hlo Proto" stat on each
// program's event metadata), the lines of the user's code each program's
// ops were traced from. XLA's OpMetadata names the line (source_file,
// source_line) or, in newer versions, a frame of the module's stack frame
// index (stack_frame_id), whose parents lead out to the user's code.
//
// Field numbers, from xla/service/hlo.proto and xla/xla_data.proto:
//
//	HloProto:             hlo_module 1
//	HloModuleProto:       name 1, computations 3, id 5, stack_frame_index 17
//	HloComputationProto:  instructions 2
//	HloInstructionProto:  metadata 7
//	OpMetadata:           op_name 2, source_file 3, source_line 4, stack_frame_id 15
//	StackFrameIndexProto: file_names 1, file_locations 3, stack_frames 4
//	  FileLocation:       file_name_id 1, line 3 (ids 1-based)
//	  StackFrame:         file_location_id 1, parent_frame_id 2 (ids 1-based)
//
// The blob is one field's bytes, already bounds-checked; it is walked
// with protowire once, and what is kept points into it.

// hloOp is what an instruction's OpMetadata says of its source.
type hloOp struct {
	name, file []byte
	line       int32
	frame      int32 // stack_frame_id, 1-based; 0 when unset
}

// hloModule is what the reader keeps of one HloModuleProto: its name and
// id, the lines of user code its ops come from, and, while its ops are
// read, its stack frame index.
type hloModule struct {
	name  []byte
	id    uint64
	hasID bool
	lines []srcLine
	// The stack frame index.
	files  [][]byte
	locs   []hloLoc
	frames []hloFrame
	// lastFile and lastUser are the file userFile was last asked about
	// and its answer: a module's ops name few files, one after another.
	lastFile []byte
	lastUser bool
}

type hloLoc struct{ file, line int32 }
type hloFrame struct{ loc, parent int32 }

// srcLine is a line of user code and the ops that name it.
type srcLine struct {
	file, op []byte
	line     int32
	ops      int32
}

// hloError is a malformed HLO proto: the offset in its blob and what was
// wrong.
type hloError struct {
	off int
	msg string
}

func (e *hloError) Error() string { return fmt.Sprintf("byte %d of the HLO proto: %s", e.off, e.msg) }

// hloFields walks the fields of the message b, whose first byte is at
// offset base of the blob, calling f with each field's number, wire type,
// value (bytes: its content) and the offset of its content.
func hloFields(b []byte, base int, f func(num protowire.Number, typ protowire.Type, v []byte, u uint64, at int) error) error {
	for i := 0; i < len(b); {
		num, typ, n := protowire.ConsumeTag(b[i:])
		if n < 0 {
			return &hloError{base + i, "bad field tag"}
		}
		i += n
		var v []byte
		var u uint64
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b[i:])
		case protowire.VarintType:
			u, n = protowire.ConsumeVarint(b[i:])
		default:
			n = protowire.ConsumeFieldValue(num, typ, b[i:])
		}
		if n < 0 {
			return &hloError{base + i, fmt.Sprintf("field %d runs past its message", num)}
		}
		at := base + i + n - len(v)
		if err := f(num, typ, v, u, at); err != nil {
			return err
		}
		i += n
	}
	return nil
}

// readHLO decodes an HloProto's module.
func readHLO(b []byte) (hloModule, error) {
	var m hloModule
	err := hloFields(b, 0, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64, at int) error {
		if num != 1 || typ != protowire.BytesType {
			return nil
		}
		return m.read(v, at)
	})
	return m, err
}

// read decodes an HloModuleProto in two walks: its stack frame index,
// which follows the computations, then the ops of its computations, each
// resolved to its line as it is met, so that no op is held.
func (m *hloModule) read(b []byte, base int) error {
	err := hloFields(b, base, func(num protowire.Number, typ protowire.Type, v []byte, u uint64, at int) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			m.name = v
		case num == 5 && typ == protowire.VarintType:
			m.id, m.hasID = u, true
		case num == 17 && typ == protowire.BytesType:
			return m.frameIndex(v, at)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return hloFields(b, base, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64, at int) error {
		if num == 3 && typ == protowire.BytesType {
			return m.computation(v, at)
		}
		return nil
	})
}

// computation reads the ops of an HloComputationProto.
func (m *hloModule) computation(b []byte, base int) error {
	return hloFields(b, base, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64, at int) error {
		if num != 2 || typ != protowire.BytesType {
			return nil
		}
		return hloFields(v, at, func(num protowire.Number, typ protowire.Type, md []byte, _ uint64, at int) error {
			if num != 7 || typ != protowire.BytesType {
				return nil
			}
			return m.op(md, at)
		})
	})
}

// op reads an OpMetadata and counts it on its line of user code.
func (m *hloModule) op(b []byte, base int) error {
	var op hloOp
	err := hloFields(b, base, func(num protowire.Number, typ protowire.Type, v []byte, u uint64, _ int) error {
		switch {
		case num == 2 && typ == protowire.BytesType:
			op.name = v
		case num == 3 && typ == protowire.BytesType:
			op.file = v
		case num == 4 && typ == protowire.VarintType:
			op.line = int32(u)
		case num == 15 && typ == protowire.VarintType:
			op.frame = int32(u)
		}
		return nil
	})
	if err == nil {
		m.count(&op)
	}
	return err
}

// frameIndex reads a StackFrameIndexProto.
func (m *hloModule) frameIndex(b []byte, base int) error {
	return hloFields(b, base, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64, at int) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			m.files = append(m.files, v)
		case 3:
			file, line, err := varints(v, at, 1, 3)
			m.locs = append(m.locs, hloLoc{file, line})
			return err
		case 4:
			loc, parent, err := varints(v, at, 1, 2)
			m.frames = append(m.frames, hloFrame{loc, parent})
			return err
		}
		return nil
	})
}

// varints reads the varint fields numbered a and b of the message b0 (a
// FileLocation, a StackFrame), 0 for one that is absent.
func varints(b0 []byte, base int, a, b protowire.Number) (x, y int32, err error) {
	err = hloFields(b0, base, func(num protowire.Number, typ protowire.Type, _ []byte, u uint64, _ int) error {
		switch {
		case typ != protowire.VarintType:
		case num == a:
			x = int32(u)
		case num == b:
			y = int32(u)
		}
		return nil
	})
	return x, y, err
}

// userLine returns the line of user code op came from: its own line when
// that is the user's, else the innermost frame of the user's on its stack;
// false when there is none. The walk out through parents goes at most
// maxFrameWalk frames, so that a cycle ends it and the cost of a module is
// linear in its ops.
func (m *hloModule) userLine(op *hloOp) (file []byte, line int32, ok bool) {
	if len(op.file) > 0 && op.line > 0 && m.isUserFile(op.file) {
		return op.file, op.line, true
	}
	id := op.frame
	for range maxFrameWalk {
		if id <= 0 || int(id) > len(m.frames) {
			break
		}
		f := m.frames[id-1]
		if f.loc > 0 && int(f.loc) <= len(m.locs) {
			l := m.locs[f.loc-1]
			if l.file > 0 && int(l.file) <= len(m.files) && l.line > 0 && m.isUserFile(m.files[l.file-1]) {
				return m.files[l.file-1], l.line, true
			}
		}
		id = f.parent
	}
	return nil, 0, false
}

// count adds op to the line of user code it comes from, if any; lines
// are kept in the order they are first met.
func (m *hloModule) count(op *hloOp) {
	file, line, ok := m.userLine(op)
	if !ok {
		return
	}
	k := 0
	for k < len(m.lines) && (m.lines[k].line != line || string(m.lines[k].file) != string(file)) {
		k++
	}
	if k == len(m.lines) {
		if k == maxSourceLines {
			return
		}
		m.lines = append(m.lines, srcLine{file: file, op: op.name, line: line})
	}
	m.lines[k].ops++
}

// maxFrameWalk bounds the frames walked out from an op to find the user's:
// JAX records the user's frames and few of the libraries' between them.
const maxFrameWalk = 64

// maxSourceLines bounds the lines kept of a program: a jitted function is
// tens of lines, and the lookup of a line among them is a scan.
const maxSourceLines = 256

// isUserFile is userFile, asked once for a run of ops of one file.
func (m *hloModule) isUserFile(file []byte) bool {
	if m.lastFile == nil || string(file) != string(m.lastFile) {
		m.lastFile, m.lastUser = file, userFile(file)
	}
	return m.lastUser
}

// userFile reports whether file is the user's code rather than a
// library's, as the analysis tells a Python frame's (trackname.LibraryFile).
func userFile(file []byte) bool { return !trackname.LibraryFile(string(file), false) }
