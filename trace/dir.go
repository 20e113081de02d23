package trace

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// traceSuffixes are the file names a directory expands to, longest first so
// that a name's stem (the host or worker it comes from) is what precedes
// the first match.
var traceSuffixes = []string{
	".xplane.pb.gz", ".xplane.pb",
	".pt.trace.json.gz", ".pt.trace.json",
	".trace.json.gz", ".trace.json",
	".json.gz", ".json",
}

// notTraces are the JSON files XProf writes beside a run's trace that hold
// something else.
var notTraces = []string{".memory_profile.", ".pod_viewer.", ".op_profile.", ".memory_viewer."}

// Expand turns command-line paths into trace files. A file stays as given
// (and "-", standard input). A directory expands to the trace files it
// holds (*.xplane.pb, *.xplane.pb.gz, *.trace.json.gz, *.pt.trace.json,
// *.json and their .gz forms), sorted by name. A directory without any but
// with run directories holding them, such as a TensorBoard log directory
// (<logdir>/plugins/profile/<run>/, also <logdir>/<name>/plugins/profile/)
// or its plugins/profile directory, expands to each run's files, runs
// newest first: run names are timestamps like 2024_01_02_03_04_05. Where a
// run holds both host.xplane.pb and host.trace.json.gz, only the XPlane is
// kept: the JSON is a conversion of it.
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
			return nil, fmt.Errorf("%s: no trace files in this directory, expected *.xplane.pb, *.trace.json.gz, *.pt.trace.json(.gz) or *.json(.gz) files, or a TensorBoard log directory with plugins/profile/<run>/", p)
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
	xplanes := map[string]bool{}
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
		stem, suffix := traceStem(name)
		if suffix == "" {
			continue
		}
		if strings.HasPrefix(suffix, ".xplane") {
			xplanes[stem] = true
		}
		names = append(names, name)
	}
	for _, name := range names {
		stem, suffix := traceStem(name)
		if strings.Contains(suffix, ".json") && xplanes[stem] {
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

// traceStem splits a trace file name into its stem and its trace suffix;
// the suffix is empty for a file that is not a trace.
func traceStem(name string) (string, string) {
	for _, nt := range notTraces {
		if strings.Contains(name, nt) {
			return name, ""
		}
	}
	for _, s := range traceSuffixes {
		if stem, ok := strings.CutSuffix(name, s); ok && stem != "" {
			return stem, s
		}
	}
	return name, ""
}
