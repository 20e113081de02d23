// Package testservers starts real servers for tests, each a separate
// process: a PostgreSQL server (Postgres), SeaweedFS's S3-compatible
// gateway (S3), fake-gcs-server, a Cloud Storage emulator (GCS), and
// Microsoft's Azurite, an Azure Blob emulator (Azure). It is imported
// only from tests.
//
// Each server is started once per test binary, on first use, and stopped
// by Stop, which the package's TestMain calls after m.Run:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		testservers.Stop()
//		os.Exit(code)
//	}
//
// On Linux, should the test binary die without calling Stop, the kernel
// kills its servers (their temporary directories stay behind).
//
// Under -short every test that asks for a server is skipped. Where a
// server's binaries are missing the test that asks for it is
// skipped, except when the CI environment variable is set (.ci/run sets
// it and installs them all): then it fails, so a CI run cannot pass by
// skipping.
package testservers

import (
	"fmt"
	"os"
	"testing"
)

// Stop stops the servers this test binary started. Call it from TestMain
// after m.Run.
func Stop() {
	stopPostgres()
	weed.close()
	fakeGCS.close()
	azurite.close()
}

// missing skips the test, or fails it under CI, because a server's
// binaries are absent.
func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	what := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatalf("under CI this test must run, but %s", what)
	}
	t.Skipf("skipping: %s", what)
}

// short skips, under -short, a test that needs the server name: starting
// one costs seconds (.ci/run runs them all, without -short).
func short(t testing.TB, name string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("skipping under -short: starts %s", name)
	}
}

// tail returns the last n bytes of the file at path, for an error.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(reading the log %s: %v)", path, err)
	}
	return lastBytes(b, n)
}

// lastBytes returns the last n bytes of b.
func lastBytes(b []byte, n int) string {
	return string(b[max(0, len(b)-n):])
}
