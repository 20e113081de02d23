package nsight

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/trace"
)

// name returns the StrID of the StringIds entry whose id is in column col
// of the row, cleaned for its use, looking each id up once. An id the
// table lacks gives a name that says so ("string id 12"). It returns false
// when the column holds no integer (the row is dropped), a lookup failed
// or a limit was reached (see stop).
func (r *reader) name(v *liteStmt, col int32, u use) (trace.StrID, bool) {
	id, ok := v.int(col)
	if !ok {
		r.drop("name id not an integer")
		return 0, false
	}
	k := nameKey{id, u}
	if s, ok := r.names[k]; ok {
		return s, true
	}
	s, err := r.str(id)
	if err != nil {
		r.err = err
		return 0, false
	}
	switch u {
	case useRuntime:
		s = versionSuffix.ReplaceAllString(s, "")
	case useNVTX:
		s = cleanNVTX(s)
	}
	sid := r.b.Intern(s)
	if r.b.Err() != nil {
		return 0, false
	}
	r.names[k] = sid
	return sid, true
}

// str looks the string id up in StringIds.
func (r *reader) str(id int64) (string, error) {
	st := r.lookup
	defer st.reset()
	if err := st.bindInt(1, id); err != nil {
		return "", dbError(err)
	}
	switch ok, err := st.next(); {
	case err != nil:
		return "", dbError(err)
	case !ok:
		return "string id " + strconv.FormatInt(id, 10), nil
	}
	if s, ok := st.text(0); ok {
		return s, nil
	}
	return "string id " + strconv.FormatInt(id, 10), nil
}

// versionSuffix is the API version older exports append to runtime
// function names ("cudaLaunchKernel_v7000"); Kineto and the analysis use
// the plain name. The driver API's own "_v2" names are kept.
var versionSuffix = regexp.MustCompile(`_v\d{4,}$`)

// cleanNVTX returns the name of an NVTX range without what PyTorch's
// emit_nvtx appends to an operator's name (", seq = 12, op_id = 40, sizes
// = [[8, 3]], input_op_ids = [...]"): the name alone is the operator's,
// as Kineto writes it, and the rules know it.
func cleanNVTX(s string) string { return s[:nvtxNameLen([]byte(s))] }

// emitNVTXSeps start what emit_nvtx appends to an operator's name.
var emitNVTXSeps = []string{", seq = ", ", op_id = ", ", sizes = "}

// nvtxNameLen is cleanNVTX for a name in bytes: the length of the name
// it keeps.
func nvtxNameLen(b []byte) int {
	n := len(b)
	for _, sep := range emitNVTXSeps {
		if i := bytes.Index(b[:n], []byte(sep)); i > 0 {
			n = i
		}
	}
	return n
}

// memKinds name CUDA's memory kinds (ENUM_CUDA_MEM_KIND) as Kineto does.
var memKinds = []string{"Pageable", "Pinned", "Device", "Array", "Managed", "Device", "Managed", "Unknown"}

// copyKinds name CUDA's copy kinds (ENUM_CUDA_MEMCPY_OPER) as Kineto does.
var copyKinds = []string{"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP", "HtoD", "DtoH", "DtoD"}

// copyName returns the name Kineto gives a copy of these kinds: "Memcpy
// HtoD (Pageable -> Device)".
func (r *reader) copyName(kind, src, dst int64) trace.StrID {
	k := [3]int64{kind, src, dst}
	if id, ok := r.copyNames[k]; ok {
		return id
	}
	name := "Memcpy " + enumName(copyKinds, kind)
	if src >= 0 || dst >= 0 {
		name += " (" + enumName(memKinds, src) + " -> " + enumName(memKinds, dst) + ")"
	}
	id := r.b.Intern(name)
	if len(r.copyNames) < 1<<10 {
		r.copyNames[k] = id
	}
	return id
}

func enumName(names []string, k int64) string {
	if k >= 0 && k < int64(len(names)) {
		return names[k]
	}
	return "Unknown"
}

// copyFlags returns the flags of a copy of these kinds: from or to
// pageable host memory, and device to host.
func copyFlags(kind, src, dst int64) trace.Flag {
	var f trace.Flag
	if src == 0 || dst == 0 {
		f |= trace.FlagPageable
	}
	if kind == 2 || kind == 4 || kind == 12 {
		f |= trace.FlagDtoH
	}
	return f
}

// check reports an error when spec's table is missing or cannot be read.
func (s schema) check(spec *tableSpec) error {
	if s[spec.name] == nil {
		return fmt.Errorf("no table %s", spec.name)
	}
	_, err := s.selectList(spec)
	if err != nil {
		return err
	}
	if !s[spec.name]["id"].pk {
		return fmt.Errorf("table %s: column id is not its primary key, expected the export's integer key", spec.name)
	}
	return nil
}

// metaKeys are the export's metadata entries kept in Trace.Meta; the
// report's file name (an "input" entry) is looked at for a rank.
var metaKeys = map[string]string{
	"EXPORT_PRODUCT_VERSION":  "nsys_version",
	"EXPORT_SCHEMA_VERSION":   "nsys_export_schema",
	"EXPORT_INPUT_FILE":       "input",
	"EXPORT_PARAM_INPUT_FILE": "input",
}

// fileRank finds an MPI rank in a file name, as job scripts name each
// rank's report: "report.rank3.nsys-rep", "rank_12.sqlite",
// "prof-rank-0.sqlite".
var fileRank = regexp.MustCompile(`(?i)(?:^|[^a-z0-9])rank[_.-]?(\d{1,6})(?:[^0-9]|$)`)

// rankFromName sets Meta["rank"] from the first of names that names one,
// unless the export said it (the MPI tracing's thread name).
func (r *reader) rankFromName(names ...string) {
	if _, ok := r.b.Meta["rank"]; ok {
		return
	}
	for _, n := range names {
		if m := fileRank.FindStringSubmatch(filepath.Base(n)); m != nil {
			r.b.Meta["rank"] = strings.TrimLeft(m[1], "0")
			if r.b.Meta["rank"] == "" {
				r.b.Meta["rank"] = "0"
			}
			return
		}
	}
}

// meta reads the export's metadata table, META_DATA_EXPORT or, in older
// exports, EXPORT_META_DATA: the versions.
func (r *reader) meta() error {
	for _, name := range metaTables {
		if r.s[name] == nil {
			continue
		}
		spec := tableSpec{name, []colSpec{needText("name"), optText("value")}}
		return r.table(&spec, func(v *liteStmt) error {
			k, _ := v.text(0)
			val, _ := v.text(1)
			key, ok := metaKeys[k]
			if !ok || len(val) > 256 {
				return nil
			}
			if key == "input" {
				r.input = val
				return nil
			}
			if _, dup := r.b.Meta[key]; !dup {
				r.b.Meta[key] = val
			}
			if k == "EXPORT_SCHEMA_VERSION" {
				r.version = val
			}
			return nil
		})
	}
	return nil
}

// threadNames names the host threads met after ThreadNames, in one pass
// over it.
func (r *reader) threadNames() error {
	if r.s[threadTable.name] == nil || len(r.threads) == 0 {
		return nil
	}
	return r.table(&threadTable, func(v *liteStmt) error {
		g, _ := v.int(1)
		th, ok := r.threads[g]
		if !ok {
			return nil
		}
		id, ok := r.name(v, 0, useThread)
		if !ok {
			return r.stop()
		}
		tr := r.b.TrackAt(th.track)
		tr.Name = r.b.TrackName("thread " + strconv.FormatInt(th.tid, 10) + " (" + r.b.Str(id) + ")")
		return nil
	})
}

// gpuNames keeps the names of the devices met, from TARGET_INFO_GPU, as
// Meta["device.<id>.name"], the key the Chrome reader keeps Kineto's
// deviceProperties under.
func (r *reader) gpuNames() error {
	if r.s[gpuTable.name] == nil || len(r.streams) == 0 {
		return nil
	}
	devices := map[int64]bool{}
	for k := range r.streams {
		devices[k[0]] = true
	}
	return r.table(&gpuTable, func(v *liteStmt) error {
		id, _ := v.int(0)
		name, _ := v.text(1)
		key := "device." + strconv.FormatInt(id, 10) + ".name"
		if _, dup := r.b.Meta[key]; devices[id] && name != "" && !dup {
			r.b.Meta[key] = r.b.TrackName(name)
		}
		return nil
	})
}
