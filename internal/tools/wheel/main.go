// Command wheel packs a tracegap binary and the Python package in python/
// into a platform wheel, as ruff and uv ship theirs: the binary in the
// wheel's scripts (tracegap-VERSION.data/scripts/tracegap), which pip
// installs on PATH as it is, with no Python in between, and the metadata
// pip needs. It needs the Go build alone: a wheel is a zip.
//
//	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -o dist/tracegap ./cmd/tracegap
//	go run ./internal/tools/wheel -binary dist/tracegap -goos linux -goarch arm64 -version 0.1.0 -o dist
//
// With -license-file, the licence text ships in the wheel's
// dist-info/licenses/ and the metadata names it with its SPDX expression
// (PEP 639), found from the text by github.com/google/licensecheck unless
// -license gives it.
//
// scripts/build-wheel.sh does both for one platform, taking the version
// from internal/cli and the licence from the repository's LICENSE.
package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/licensecheck"
)

func main() {
	var w wheel
	flag.StringVar(&w.binary, "binary", "", "the tracegap binary to pack (built with CGO_ENABLED=0)")
	flag.StringVar(&w.goos, "goos", "", "the binary's GOOS: linux or darwin")
	flag.StringVar(&w.goarch, "goarch", "", "the binary's GOARCH: amd64 or arm64")
	flag.StringVar(&w.version, "version", "", `tracegap's version as the binary says it ("0.1.0", "0.1.0-dev")`)
	flag.StringVar(&w.src, "src", "python/tracegap", "the Python package's directory")
	flag.StringVar(&w.licenseFile, "license-file", "", "the licence's text to ship (LICENSE); none when empty")
	flag.StringVar(&w.license, "license", "", `the licence's SPDX expression ("Apache-2.0"); found from -license-file's text when empty`)
	out := flag.String("o", "dist", "directory to write the wheel to")
	flag.Parse()
	path, err := w.write(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "wheel:", err)
		os.Exit(2)
	}
	fmt.Println(path)
}

// wheel is what one wheel is made of.
type wheel struct {
	binary, goos, goarch, version, src string
	licenseFile, license               string
}

// platformTags are the wheel platform tags of each GOOS/GOARCH. The binary
// is static, so any glibc (manylinux) or musl (musllinux) system runs it;
// Go 1.26 needs macOS 12.
var platformTags = map[string][]string{
	"linux/amd64":  {"manylinux_2_17_x86_64", "manylinux2014_x86_64", "musllinux_1_1_x86_64"},
	"linux/arm64":  {"manylinux_2_17_aarch64", "manylinux2014_aarch64", "musllinux_1_1_aarch64"},
	"darwin/amd64": {"macosx_12_0_x86_64"},
	"darwin/arm64": {"macosx_12_0_arm64"},
}

// pep440 turns a Go-style version into a Python one: "0.1.0-dev" is
// "0.1.0.dev0", "0.2.0-rc1" is "0.2.0rc1"; one already in Python's form
// ("0.1.0.dev0", what the binary says) is kept.
func pep440(v string) (string, error) {
	v = strings.TrimPrefix(v, "v")
	if pep440RE.MatchString(v) {
		return v, nil
	}
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		return "", fmt.Errorf("version %q: expected X.Y.Z with an optional -dev, -devN, -aN, -bN or -rcN", v)
	}
	switch {
	case m[2] == "":
		return m[1], nil
	case m[2] == "dev":
		return m[1] + ".dev" + cmpOr(m[3], "0"), nil
	}
	return m[1] + m[2] + cmpOr(m[3], "0"), nil
}

var versionRE = regexp.MustCompile(`^(\d+\.\d+\.\d+)(?:-(dev|a|b|rc)(\d*))?$`)

// pep440RE matches the versions pep440 makes.
var pep440RE = regexp.MustCompile(`^\d+\.\d+\.\d+(?:\.dev\d+|(?:a|b|rc)\d+)$`)

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// file is one member of the wheel.
type file struct {
	name string
	data []byte
	mode fs.FileMode
}

// write writes the wheel into dir and returns its path.
func (w *wheel) write(dir string) (string, error) {
	tags, ok := platformTags[w.goos+"/"+w.goarch]
	if !ok {
		return "", fmt.Errorf("no wheel platform for %s/%s: expected linux or darwin, amd64 or arm64", w.goos, w.goarch)
	}
	version, err := pep440(w.version)
	if err != nil {
		return "", err
	}
	files, err := w.files(version, tags)
	if err != nil {
		return "", err
	}
	name := fmt.Sprintf("tracegap-%s-py3-none-%s.whl", version, strings.Join(tags, "."))
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, zipFiles(files), 0o644)
}

// files lists the wheel's members, RECORD last.
func (w *wheel) files(version string, tags []string) ([]file, error) {
	bin, err := os.ReadFile(w.binary)
	if err != nil {
		return nil, fmt.Errorf("reading the binary: %w", err)
	}
	files, err := w.pythonFiles()
	if err != nil {
		return nil, err
	}
	files = append(files,
		file{"tracegap/_version.py", []byte(fmt.Sprintf("__version__ = %q\n", version)), 0o644},
		file{"tracegap-" + version + ".data/scripts/tracegap", bin, 0o755})
	info := "tracegap-" + version + ".dist-info/"
	wheelMeta := "Wheel-Version: 1.0\nGenerator: tracegap internal/tools/wheel\nRoot-Is-Purelib: false\n"
	for _, t := range tags {
		wheelMeta += "Tag: py3-none-" + t + "\n"
	}
	lic, err := w.licence()
	if err != nil {
		return nil, err
	}
	if lic.text != nil {
		files = append(files, file{info + "licenses/" + lic.name, lic.text, 0o644})
	}
	files = append(files,
		file{info + "METADATA", []byte(metadata(version, lic)), 0o644},
		file{info + "WHEEL", []byte(wheelMeta), 0o644})
	return append(files, file{info + "RECORD", record(files, info+"RECORD"), 0o644}), nil
}

// pythonFiles reads the package's .py files and py.typed.
func (w *wheel) pythonFiles() ([]file, error) {
	entries, err := os.ReadDir(w.src)
	if err != nil {
		return nil, fmt.Errorf("reading the Python package: %w", err)
	}
	var files []file
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".py") && n != "py.typed" || n == "_version.py" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(w.src, n))
		if err != nil {
			return nil, err
		}
		files = append(files, file{"tracegap/" + n, data, 0o644})
	}
	if !slices.ContainsFunc(files, func(f file) bool { return f.name == "tracegap/__init__.py" }) {
		return nil, fmt.Errorf("%s holds no __init__.py: expected the tracegap Python package", w.src)
	}
	return files, nil
}

// licence is the licence a wheel ships: its SPDX expression, its text,
// and the text's file name. All empty for none.
type licence struct {
	expr, name string
	text       []byte
}

// licence reads the wheel's licence.
func (w *wheel) licence() (licence, error) {
	if w.licenseFile == "" {
		if w.license != "" {
			return licence{}, fmt.Errorf("-license %q without -license-file: expected the licence's text too", w.license)
		}
		return licence{}, nil
	}
	text, err := os.ReadFile(w.licenseFile)
	if err != nil {
		return licence{}, fmt.Errorf("reading the licence: %w", err)
	}
	expr := w.license
	if expr == "" {
		if expr, err = spdx(text); err != nil {
			return licence{}, fmt.Errorf("%s: %w", w.licenseFile, err)
		}
	} else if !spdxRE.MatchString(expr) {
		return licence{}, fmt.Errorf("-license %q: expected an SPDX expression such as Apache-2.0 or MIT OR Apache-2.0", expr)
	}
	return licence{expr: expr, name: filepath.Base(w.licenseFile), text: text}, nil
}

// spdx returns the SPDX expression of a licence's text: the licences
// licensecheck finds in it, joined with AND (a file that is several
// licences binds the user to each), when they cover nearly all of it.
func spdx(text []byte) (string, error) {
	cov := licensecheck.Scan(text)
	var ids []string
	for _, m := range cov.Match {
		if !m.IsURL && !slices.Contains(ids, m.ID) {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 || cov.Percent < minLicenceCover {
		return "", fmt.Errorf("known licences match %.0f%% of the text: expected a standard licence's text (at least %d%%), or its SPDX expression given with -license", cov.Percent, minLicenceCover)
	}
	return strings.Join(ids, " AND "), nil
}

// minLicenceCover is the share of a licence file, in percent, that known
// licences must match for its expression to be taken from it: a standard
// text with a copyright line matches over 95%.
const minLicenceCover = 90

// spdxRE matches an SPDX licence expression: identifiers (with an
// optional +), AND, OR, WITH and parentheses.
var spdxRE = regexp.MustCompile(`^[(]*[A-Za-z0-9.-]+\+?[)]*(?: (?:AND|OR|WITH) [(]*[A-Za-z0-9.-]+\+?[)]*)*$`)

// metadata is the wheel's METADATA. A licence needs version 2.4 (PEP
// 639); without one it stays 2.1, which older pips know.
func metadata(version string, lic licence) string {
	head := "Metadata-Version: 2.1\n"
	if lic.expr != "" {
		head = "Metadata-Version: 2.4\n"
	}
	head += "Name: tracegap\nVersion: " + version + "\n"
	if lic.expr != "" {
		head += "License-Expression: " + lic.expr + "\nLicense-File: " + lic.name + "\n"
	}
	return head + `Summary: Why did the accelerator sit idle? Device idle gaps in PyTorch, JAX and Nsight Systems profiles, attributed to host work, with a verdict.
Home-page: https://github.com/tracegap/tracegap
Project-URL: Source, https://github.com/tracegap/tracegap
Project-URL: Documentation, https://github.com/tracegap/tracegap/tree/main/docs
Project-URL: Issues, https://github.com/tracegap/tracegap/issues
Keywords: profiling,pytorch,jax,tpu,gpu,xprof,nsight,performance
Requires-Python: >=3.8
Classifier: Development Status :: 3 - Alpha
Classifier: Environment :: Console
Classifier: Intended Audience :: Developers
Classifier: Intended Audience :: Science/Research
Classifier: Operating System :: MacOS
Classifier: Operating System :: POSIX :: Linux
Classifier: Programming Language :: Go
Classifier: Programming Language :: Python :: 3
Classifier: Topic :: Scientific/Engineering :: Artificial Intelligence
Classifier: Topic :: System :: Benchmark
Classifier: Typing :: Typed
Description-Content-Type: text/markdown

tracegap reads a profiler trace of an ML run (PyTorch profiler / Kineto JSON,
JAX / TensorFlow XPlane, Nsight Systems SQLite exports), finds the idle gaps on
each GPU or TPU, works out what the host was doing in each, and says how the
run behaved: parallel, sequential, data-bound, host-bound or stalled.

This wheel carries the static tracegap binary (` + "`tracegap`" + ` on PATH,
` + "`python -m tracegap`" + `) and a standard-library API:
` + "`tracegap.analyze(path)`" + `, ` + "`tracegap.torch.on_trace_ready(dir)`" + ` for
torch.profiler and ` + "`tracegap.jax.trace(log_dir)`" + ` around jax.profiler.trace.
`
}

// record writes the RECORD of files: each path with its sha256 and size;
// RECORD itself has neither.
func record(files []file, self string) []byte {
	var b bytes.Buffer
	for _, f := range files {
		sum := sha256.Sum256(f.data)
		fmt.Fprintf(&b, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.data))
	}
	fmt.Fprintf(&b, "%s,,\n", self)
	return b.Bytes()
}

// zipFiles zips files with their modes and a fixed time, so that the same
// inputs make the same wheel.
func zipFiles(files []file) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
		h.SetMode(f.mode)
		fw, err := zw.CreateHeader(h)
		if err == nil {
			_, err = fw.Write(f.data)
		}
		if err != nil {
			panic(err) // writing to memory does not fail
		}
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}
