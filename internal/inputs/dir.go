package inputs

import (
	"bufio"
	"cmp"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/tracegap/tracegap/internal/objects"
	"github.com/tracegap/tracegap/internal/trace/formats"
	"github.com/tracegap/tracegap/internal/trace/tracefile"
	"github.com/tracegap/tracegap/trace"
)

// notTraces are the JSON files XProf writes beside a run's trace that hold
// something else, and the reports tracegap's Python hooks write beside the
// traces they analyse (<trace>.tracegap.json, <run>/tracegap.json).
var notTraces = []string{".memory_profile.", ".pod_viewer.", ".op_profile.", ".memory_viewer.", ".tracegap."}

// Skipped is a file that a directory held under a trace's name but that
// holds no trace (metrics.json or package.json beside the traces), and why
// Expand left it out.
type Skipped struct {
	Path, Reason string
}

// Expand turns command-line paths into trace files. A file stays as given
// (and "-", standard input). A directory expands to the trace files it
// holds (named with a registered format's suffix, or that suffix and .gz),
// sorted by name. A directory without any but with run directories
// holding them, such as a TensorBoard log directory
// (<logdir>/plugins/profile/<run>/, also <logdir>/<name>/plugins/profile/)
// or its plugins/profile directory, expands to each run's files, runs
// newest first: run names are timestamps like 2024_01_02_03_04_05. Where a
// run holds files of one stem in several formats, such as host.xplane.pb
// and host.trace.json.gz, only those of the primary format are kept: the
// others are conversions of it (see Format.Primary); so is the
// perfetto_trace.json.gz JAX writes beside an XPlane when asked to, which
// ExpandSkipping lists as skipped.
//
// A file named only by a format's generic suffix (".json") is kept only
// when its head holds that format's content (Format.Holds): a directory of
// artefacts analyses its traces and skips the rest; ExpandSkipping says
// which.
//
// Files of the kinds aside (a job's rank summaries) are inputs too: a
// directory that holds any, itself rather than in its runs, expands to
// those alone, sorted by name.
func Expand(paths []string, aside ...Aside) ([]string, error) {
	files, _, err := ExpandSkipping(paths, aside...)
	return files, err
}

// Aside is a kind of input file other than a trace that a directory may
// hold in place of traces, such as a rank's summary of a distributed job,
// which another package reads.
type Aside struct {
	// Suffix ends the files' names (".summary.json.gz").
	Suffix string
	// Title names them in a message ("rank summaries").
	Title string
}

// ExpandSkipping is Expand that also returns the files the directories held
// under a trace's name but left out as no trace, for a warning.
func ExpandSkipping(paths []string, aside ...Aside) ([]string, []Skipped, error) {
	x := expander{aside: aside}
	var out []string
	for _, p := range paths {
		if p == "-" {
			out = append(out, p)
			continue
		}
		dir, err := isDirArg(p)
		if err != nil {
			return nil, nil, tracefile.FileError(p, err)
		}
		if !dir {
			out = append(out, p)
			continue
		}
		x.fs = treeOf(p)
		skipped := len(x.skipped)
		files, err := x.expandDir(p)
		if err != nil {
			return nil, nil, err
		}
		if len(files) == 0 {
			if s := nsysReport(x.skipped[skipped:]); s != nil {
				// The report is what the directory holds: say what to do with it.
				return nil, nil, fmt.Errorf("%s: %s", s.Path, s.Reason)
			}
			return nil, nil, fmt.Errorf("%s: no trace files in this directory%s, expected %s files (gzipped or not)%s, or a TensorBoard log directory with plugins/profile/<run>/", p, skippedNote(x.skipped[skipped:]), formats.FilePatterns(), asidePatterns(aside))
		}
		out = append(out, files...)
	}
	return out, x.skipped, nil
}

// nsysReport returns the first Nsight Systems report among skipped, nil
// when there is none.
func nsysReport(skipped []Skipped) *Skipped {
	for i := range skipped {
		if formats.IsNsysReport(skipped[i].Path) {
			return &skipped[i]
		}
	}
	return nil
}

// skippedNote says which files named as traces a directory with none to
// read held, and why each was skipped (a FIFO, a symbolic link loop): the
// error replaces the warnings that would have said so.
func skippedNote(skipped []Skipped) string {
	if len(skipped) == 0 {
		return ""
	}
	const most = 3
	var parts []string
	for _, s := range skipped[:min(len(skipped), most)] {
		parts = append(parts, s.Path+": "+s.Reason)
	}
	if len(skipped) > most {
		parts = append(parts, fmt.Sprintf("and %d more", len(skipped)-most))
	}
	return " (skipped " + strings.Join(parts, "; ") + ")"
}

// expander expands directories, noting the files it skips.
type expander struct {
	fs      tree // where the directory being expanded is
	aside   []Aside
	skipped []Skipped
	seen    map[string]bool // the paths in skipped
}

// skip notes path as skipped for why, once however often it is met (a
// directory given twice).
func (x *expander) skip(path, why string) {
	if x.seen[path] {
		return
	}
	if x.seen == nil {
		x.seen = map[string]bool{}
	}
	x.seen[path] = true
	x.skipped = append(x.skipped, Skipped{Path: path, Reason: why})
}

// expandDir finds a directory's input files: its files of a kind aside,
// else its trace files, else those of its runs.
func (x *expander) expandDir(dir string) ([]string, error) {
	files, subdirs, err := x.listDir(dir)
	if err != nil {
		return nil, err
	}
	if asides := x.asides(files); len(asides) > 0 {
		return asides, nil
	}
	if len(files) > 0 {
		return files, nil
	}
	// A log directory: plugins/profile here or one level down
	// (TensorFlow writes <logdir>/train/plugins/profile).
	var out []string
	for _, d := range append([]string{dir}, subdirs...) {
		profile := x.fs.join(d, "plugins/profile")
		if x.fs.isDir(profile) {
			_, runs, err := x.listDir(profile)
			if err != nil {
				return nil, err
			}
			more, err := x.runFiles(runs)
			if err != nil {
				return nil, err
			}
			out = append(out, more...)
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	return x.runFiles(subdirs)
}

// runFiles returns the trace files of the run directories runs, newest
// (greatest name) first.
func (x *expander) runFiles(runs []string) ([]string, error) {
	var out []string
	for _, r := range slices.Backward(runs) {
		files, _, err := x.listDir(r)
		if err != nil {
			return nil, err
		}
		out = append(out, slices.DeleteFunc(files, x.isAside)...)
	}
	return out, nil
}

// asides returns those of files that are of a kind aside, nil when none
// is.
func (x *expander) asides(files []string) []string {
	if !slices.ContainsFunc(files, x.isAside) {
		return nil
	}
	return slices.DeleteFunc(files, func(f string) bool { return !x.isAside(f) })
}

// skipReports notes the Nsight Systems reports among a directory's files
// as skipped, with the command that exports each, unless its export is
// beside it (report.nsys-rep and report.sqlite): nsys reads the reports
// only, and their export is what tracegap reads.
func (x *expander) skipReports(dir string, reports, names []string) {
	for _, r := range reports {
		stem := r[:strings.LastIndex(r, ".")]
		if !slices.Contains(names, stem+".sqlite") {
			x.skip(x.fs.join(dir, r), formats.NsysReport(r))
		}
	}
}

func (x *expander) isAside(path string) bool {
	return slices.ContainsFunc(x.aside, func(a Aside) bool { return strings.HasSuffix(path, a.Suffix) })
}

// listDir returns a directory's trace files and files of a kind aside,
// sorted, with the JSON twins of XPlane files and the files that hold no
// trace left out, and its subdirectories, sorted. Hidden entries are
// skipped.
func (x *expander) listDir(dir string) (files, subdirs []string, err error) {
	entries, err := x.fs.readDir(dir)
	if err != nil {
		return nil, nil, err
	}
	suffixes := traceSuffixes()
	primary := map[string]bool{} // stems with a file of a primary format
	var names, reports []string
	for _, e := range entries {
		name := e.name
		if strings.HasPrefix(name, ".") {
			continue
		}
		path := x.fs.join(dir, name)
		mode := e.mode
		if mode.IsDir() {
			subdirs = append(subdirs, path)
			continue
		}
		stem, f, ok := traceStem(name, suffixes)
		aside := x.isAside(name)
		if !ok && !aside {
			if formats.IsNsysReport(name) && mode.IsRegular() {
				reports = append(reports, name)
			}
			continue
		}
		if !mode.IsRegular() {
			x.skip(path, notRegular(mode))
			continue
		}
		if aside {
			files = append(files, path)
			continue
		}
		if why := notTrace(x.fs, path, name[len(stem):], f); why != "" {
			x.skip(path, why)
			continue
		}
		if annotated(x.fs, path, f.Name) {
			x.skip(path, annotatedCopy)
			continue
		}
		if f.Primary {
			primary[stem] = true
		}
		names = append(names, name)
	}
	x.skipReports(dir, reports, names)
	for _, name := range names {
		if stem, f, _ := traceStem(name, suffixes); !f.Primary && primary[stem] {
			continue
		}
		if len(primary) > 0 && isPerfettoExport(name) {
			x.skip(x.fs.join(dir, name), perfettoExport)
			continue
		}
		files = append(files, x.fs.join(dir, name))
	}
	slices.Sort(files)
	slices.Sort(subdirs)
	return files, subdirs, nil
}

// perfettoExport says why a run directory's Perfetto trace is left out.
const perfettoExport = "the Perfetto trace JAX exports from this run's XPlane (jax.profiler.trace(..., create_perfetto_trace=True)): the same run, so the XPlane beside it is analysed"

// isPerfettoExport reports whether a file is the Perfetto trace that
// jax.profiler writes beside a run's XPlane when asked to: a conversion of
// it under another stem, which the primary-format rule cannot pair.
func isPerfettoExport(name string) bool {
	return name == "perfetto_trace.json.gz" || name == "perfetto_trace.json"
}

// isDirArg reports whether the argument p names a directory; an error
// says it names nothing there (not found) or could not be looked at.
func isDirArg(p string) (bool, error) {
	if objects.IsURL(p) {
		return objects.IsDir(context.Background(), p)
	}
	st, err := os.Stat(p)
	if err != nil {
		return false, err
	}
	return st.IsDir(), nil
}

// entryType returns the type of the directory entry e at path, that of
// what it links to for a symbolic link (fs.ModeSymlink for a broken one,
// with fs.ModeIrregular for one that links to itself in a loop).
func entryType(e fs.DirEntry, path string) fs.FileMode {
	if e.Type()&fs.ModeSymlink == 0 {
		return e.Type()
	}
	st, err := os.Stat(path)
	if err != nil {
		if isLoop(err) {
			return fs.ModeSymlink | fs.ModeIrregular
		}
		return fs.ModeSymlink
	}
	return st.Mode().Type()
}

// notRegular says why an entry of type mode named as a trace is skipped:
// only regular files are read from a directory, since opening a FIFO
// would wait for a writer and a device would be read without end.
func notRegular(mode fs.FileMode) string {
	what := "a device"
	switch {
	case mode&fs.ModeSymlink != 0 && mode&fs.ModeIrregular != 0:
		what = "a symbolic link loop"
	case mode&fs.ModeSymlink != 0:
		what = "a broken symbolic link"
	case mode&fs.ModeNamedPipe != 0:
		what = "a FIFO"
	case mode&fs.ModeSocket != 0:
		what = "a socket"
	}
	return "not a regular file (" + what + ")"
}

// suffix is a file-name suffix and the format whose files end so.
type suffix struct {
	s string
	f *trace.Format
}

// traceSuffixes returns the registered formats' suffixes, each also with
// .gz, longest first so that a name's stem (the host or worker it comes
// from) is what precedes the first match.
func traceSuffixes() []suffix {
	fs := trace.Formats()
	var out []suffix
	for i := range fs {
		for _, s := range fs[i].Suffixes {
			out = append(out, suffix{s + ".gz", &fs[i]}, suffix{s, &fs[i]})
		}
	}
	slices.SortStableFunc(out, func(a, b suffix) int { return cmp.Compare(len(b.s), len(a.s)) })
	return out
}

// traceStem splits a trace file name into its stem and the format its
// suffix belongs to; ok is false for a file that is not a trace.
func traceStem(name string, suffixes []suffix) (stem string, f *trace.Format, ok bool) {
	if name == "tracegap.json" {
		return name, nil, false
	}
	for _, nt := range notTraces {
		if strings.Contains(name, nt) {
			return name, nil, false
		}
	}
	for _, s := range suffixes {
		if stem, ok := strings.CutSuffix(name, s.s); ok && stem != "" {
			return stem, s.f, true
		}
	}
	return name, nil, false
}

// asidePatterns lists the kinds aside for a message, each after a comma:
// ", *.summary.json.gz (rank summaries)".
func asidePatterns(aside []Aside) string {
	var b strings.Builder
	for _, a := range aside {
		fmt.Fprintf(&b, ", *%s (%s)", a.Suffix, a.Title)
	}
	return b.String()
}

// holdsHead is how much of a file named only by a generic suffix is read
// to tell whether it holds a trace.
const holdsHead = 64 << 10

// notTrace says why the file at path, named with suffix (".json",
// ".json.gz"), holds no trace of format f; "" when it may. Only a generic
// suffix (one extension, such as ".json") is checked, against f.Holds: a
// name like run.pt.trace.json says it is a trace. A file that cannot be
// read is kept, for reading it to report the error.
func notTrace(fs tree, path, suffix string, f *trace.Format) string {
	if f.Holds == nil || strings.Count(strings.TrimSuffix(suffix, ".gz"), ".") != 1 {
		return ""
	}
	file, err := fs.open(path)
	if err != nil {
		return ""
	}
	defer file.Close()
	var r io.Reader = bufio.NewReader(file)
	if magic, err := r.(*bufio.Reader).Peek(2); err == nil && tracefile.IsGzip(magic) {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return ""
		}
		r = zr
	}
	head, err := io.ReadAll(io.LimitReader(r, holdsHead))
	if err != nil && len(head) == 0 {
		return ""
	}
	if !f.Sniff(head[:min(len(head), 512)]) || !f.Holds(head) {
		return "holds no " + cmp.Or(f.Title, f.Name)
	}
	return ""
}

// FileName returns name as the name of a file of format f that a
// directory expands to (Expand): name itself when it ends in one of f's
// suffixes, with .gz or not, else name with f's first suffix added, and
// .gz when the file is gzipped. A download named so is picked up where a
// directory of traces is read.
func FileName(name string, f trace.Format, gzipped bool) string {
	for _, s := range f.Suffixes {
		if strings.HasSuffix(name, s) || strings.HasSuffix(name, s+".gz") {
			return name
		}
	}
	if len(f.Suffixes) == 0 {
		return name
	}
	name += f.Suffixes[0]
	if gzipped {
		name += ".gz"
	}
	return name
}
