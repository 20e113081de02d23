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
	w := wheel{binary: bin, goos: "linux", goarch: "arm64", version: "0.1.0-dev", src: filepath.Join("..", "..", "..", "python", "tracegap")}
	path, err := w.write(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := "tracegap-0.1.0.dev0-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64.whl"; filepath.Base(path) != want {
		t.Errorf("wheel %s, want %s", filepath.Base(path), want)
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	members := map[string]string{}
	var record string
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		if strings.HasSuffix(f.Name, "/RECORD") {
			record = string(data)
			continue
		}
		sum := sha256.Sum256(data)
		members[f.Name] = fmt.Sprintf("%s,sha256=%s,%d", f.Name, base64.RawURLEncoding.EncodeToString(sum[:]), len(data))
		if f.Name == "tracegap-0.1.0.dev0.data/scripts/tracegap" && f.Mode().Perm() != 0o755 {
			t.Errorf("binary mode %v, want 0755", f.Mode())
		}
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
