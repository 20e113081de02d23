package trace

import (
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// notTraces are the JSON files XProf writes beside a run's trace that hold
// something else.
var notTraces = []string{".memory_profile.", ".pod_viewer.", ".op_profile.", ".memory_viewer."}

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
// others are conversions of it (see Format.Primary).
func Expand(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if p == "-" {
			out = append(out, p)
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		files, err := expandDir(p)
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no trace files in this directory, expected %s files (gzipped or not), or a TensorBoard log directory with plugins/profile/<run>/", p, filePatterns())
		}
		out = append(out, files...)
	}
	return out, nil
}

// expandDir finds a directory's trace files: its own, else those of its
// runs.
func expandDir(dir string) ([]string, error) {
	files, subdirs, err := listDir(dir)
	if err != nil {
		return nil, err
	}
	if len(files) > 0 {
		return files, nil
	}
	// A log directory: plugins/profile here or one level down
	// (TensorFlow writes <logdir>/train/plugins/profile).
	var out []string
	for _, d := range append([]string{dir}, subdirs...) {
		profile := filepath.Join(d, "plugins", "profile")
		if st, err := os.Stat(profile); err == nil && st.IsDir() {
			runs, err := expandRuns(profile)
			if err != nil {
				return nil, err
			}
			out = append(out, runs...)
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	return expandRuns(dir)
}

// expandRuns returns the trace files of dir's subdirectories, newest
// (greatest name) first.
func expandRuns(dir string) ([]string, error) {
	_, runs, err := listDir(dir)
	if err != nil {
		return nil, err
	}
	slices.Reverse(runs)
	var out []string
	for _, r := range runs {
		files, _, err := listDir(r)
		if err != nil {
			return nil, err
		}
		out = append(out, files...)
	}
	return out, nil
}

// listDir returns a directory's trace files, sorted and with the JSON twins
// of XPlane files left out, and its subdirectories, sorted. Hidden entries
// are skipped.
func listDir(dir string) (files, subdirs []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	suffixes := traceSuffixes()
	primary := map[string]bool{} // stems with a file of a primary format
	var names []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, name)
		if isDir(e, path) {
			subdirs = append(subdirs, path)
			continue
		}
		stem, f, ok := traceStem(name, suffixes)
		if !ok {
			continue
		}
		if f.Primary {
			primary[stem] = true
		}
		names = append(names, name)
	}
	for _, name := range names {
		if stem, f, _ := traceStem(name, suffixes); !f.Primary && primary[stem] {
			continue
		}
		files = append(files, filepath.Join(dir, name))
	}
	slices.Sort(files)
	slices.Sort(subdirs)
	return files, subdirs, nil
}

func isDir(e fs.DirEntry, path string) bool {
	if e.Type()&fs.ModeSymlink != 0 {
		st, err := os.Stat(path)
		return err == nil && st.IsDir()
	}
	return e.IsDir()
}

// suffix is a file-name suffix and the format whose files end so.
type suffix struct {
	s string
	f *Format
}

// traceSuffixes returns the registered formats' suffixes, each also with
// .gz, longest first so that a name's stem (the host or worker it comes
// from) is what precedes the first match.
func traceSuffixes() []suffix {
	fs := Formats()
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
func traceStem(name string, suffixes []suffix) (stem string, f *Format, ok bool) {
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

// filePatterns lists the registered formats' file names for a message:
// "*.pt.trace.json, *.trace.json, *.json (Chrome trace-event JSON) or
// *.xplane.pb (XPlane protobuf)".
func filePatterns() string {
	var each []string
	for _, f := range Formats() {
		if len(f.Suffixes) == 0 {
			continue
		}
		globs := make([]string, len(f.Suffixes))
		for i, s := range f.Suffixes {
			globs[i] = "*" + s
		}
		each = append(each, fmt.Sprintf("%s (%s)", strings.Join(globs, ", "), cmp.Or(f.Title, f.Name)))
	}
	return orList(each)
}
