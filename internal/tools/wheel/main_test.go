package main

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPEP440(t *testing.T) {
	for in, want := range map[string]string{"0.1.0": "0.1.0", "v1.2.3": "1.2.3", "0.1.0-dev": "0.1.0.dev0", "0.1.0-dev3": "0.1.0.dev3", "0.2.0-rc1": "0.2.0rc1", "1.0.0-b": "1.0.0b0", "0.1.0.dev0": "0.1.0.dev0", "0.2.0rc1": "0.2.0rc1"} {
		if got, err := pep440(in); err != nil || got != want {
			t.Errorf("pep440(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "1.0", "1.0.0-beta", "1.0.0+local"} {
		if _, err := pep440(bad); err == nil {
			t.Errorf("pep440(%q): no error", bad)
		}
	}
}

// TestWheel builds a wheel around a stand-in binary and checks what pip
// relies on: the name's tags, the binary's mode, and a RECORD whose hashes
// and sizes match every member.
func TestWheel(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tracegap")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho tracegap\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	path, members, _, record := packTest(t, wheel{binary: bin, goos: "linux", goarch: "arm64", version: "0.1.0-dev"})
	if want := "tracegap-0.1.0.dev0-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64.whl"; filepath.Base(path) != want {
		t.Errorf("wheel %s, want %s", filepath.Base(path), want)
	}
	for _, want := range []string{"tracegap/__init__.py", "tracegap/__main__.py", "tracegap/torch.py", "tracegap/jax.py", "tracegap/py.typed",
		"tracegap/_version.py", "tracegap-0.1.0.dev0.data/scripts/tracegap", "tracegap-0.1.0.dev0.dist-info/METADATA",
		"tracegap-0.1.0.dev0.dist-info/WHEEL"} {
		line, ok := members[want]
		if !ok {
			t.Errorf("wheel lacks %s", want)
		} else if !strings.Contains(record, line+"\n") {
			t.Errorf("RECORD lacks %q", line)
		}
	}
	if !strings.HasSuffix(record, "tracegap-0.1.0.dev0.dist-info/RECORD,,\n") {
		t.Errorf("RECORD does not end with its own line:\n%s", record)
	}
}

// packTest packs w (its src the repository's Python package) into a
// temporary directory and returns the wheel's path, each member's RECORD
// line, each member's data, and the RECORD. It checks the binary's mode.
func packTest(t *testing.T, w wheel) (path string, lines, data map[string]string, record string) {
	t.Helper()
	w.src = filepath.Join("..", "..", "..", "python", "tracegap")
	path, err := w.write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	lines, data = map[string]string{}, map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f.Name, "/RECORD") {
			record = string(b)
			continue
		}
		data[f.Name] = string(b)
		sum := sha256.Sum256(b)
		lines[f.Name] = fmt.Sprintf("%s,sha256=%s,%d", f.Name, base64.RawURLEncoding.EncodeToString(sum[:]), len(b))
		if strings.HasSuffix(f.Name, ".data/scripts/tracegap") && f.Mode().Perm() != 0o755 {
			t.Errorf("binary mode %v, want 0755", f.Mode())
		}
	}
	return path, lines, data, record
}

// TestLicence packs wheels with and without a licence: the text ships in
// dist-info/licenses/ and the metadata (2.4) names it and its SPDX
// expression, found from the text or given; without one the metadata
// stays 2.1 with no licence lines.
func TestLicence(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "tracegap")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	mit := filepath.Join("testdata", "mit.txt")
	for _, c := range []struct {
		name, file, expr string
		want             string // License-Expression; "" for none
	}{
		{"none", "", "", ""},
		{"found from the text", mit, "", "MIT"},
		{"given", mit, "MIT OR Apache-2.0", "MIT OR Apache-2.0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, lines, data, record := packTest(t, wheel{binary: bin, goos: "linux", goarch: "amd64", version: "1.0.0", licenseFile: c.file, license: c.expr})
			meta := data["tracegap-1.0.0.dist-info/METADATA"]
			member := "tracegap-1.0.0.dist-info/licenses/mit.txt"
			if c.want == "" {
				if !strings.HasPrefix(meta, "Metadata-Version: 2.1\n") || strings.Contains(meta, "License") {
					t.Errorf("METADATA without a licence:\n%s", meta)
				}
				if _, ok := data[member]; ok {
					t.Errorf("wheel holds %s", member)
				}
				return
			}
			for _, line := range []string{"Metadata-Version: 2.4\n", "\nLicense-Expression: " + c.want + "\n", "\nLicense-File: mit.txt\n"} {
				if !strings.Contains(meta, line) {
					t.Errorf("METADATA lacks %q:\n%s", line, meta)
				}
			}
			text, _ := os.ReadFile(mit)
			if data[member] != string(text) {
				t.Errorf("%s is not the licence's text", member)
			}
			if !strings.Contains(record, lines[member]+"\n") {
				t.Errorf("RECORD lacks %s", member)
			}
		})
	}
}

// TestLicenceRefused: a text no known licence covers, an expression that
// is not SPDX, and an expression with no text are refused, each saying
// what was expected.
func TestLicenceRefused(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "tracegap")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file, expr, want string
	}{
		{filepath.Join("testdata", "own-terms.txt"), "", "expected a standard licence's text"},
		{filepath.Join("testdata", "mit.txt"), "MIT; rm -rf /", "expected an SPDX expression"},
		{"", "MIT", "expected the licence's text too"},
		{filepath.Join("testdata", "absent.txt"), "", "reading the licence"},
	} {
		w := wheel{binary: bin, goos: "linux", goarch: "amd64", version: "1.0.0", src: filepath.Join("..", "..", "..", "python", "tracegap"), licenseFile: c.file, license: c.expr}
		if _, err := w.write(t.TempDir()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("licence %q, -license %q: error %v, want one saying %q", c.file, c.expr, err, c.want)
		}
	}
}
