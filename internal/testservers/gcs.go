package testservers

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
)

// FakeGCSEnv names the environment variable that gives the
// fake-gcs-server binary GCS starts; .ci/run builds it from the Go module
// proxy and sets it.
const FakeGCSEnv = "TRACEGAP_FAKE_GCS"

// GCSProject is the project the emulator's buckets are created in.
const GCSProject = "tracegap-test"

// GCSServer is a running fake-gcs-server, Google Cloud Storage's JSON
// API over plain HTTP, its objects in memory.
type GCSServer struct {
	Host   string          // 127.0.0.1:PORT, as STORAGE_EMULATOR_HOST gives it
	Client *storage.Client // to the emulator, with no credentials
}

var fakeGCS lazy[*GCSServer]

// GCS returns the Cloud Storage emulator, started on first use and
// shared by the test binary's tests; buckets are the tests' own to keep
// apart. It does not change the environment: see UseEnv and Env. It skips
// the test when $TRACEGAP_FAKE_GCS is not set, and fails it under CI.
func GCS(t testing.TB) *GCSServer {
	t.Helper()
	return fakeGCS.get(t, FakeGCSEnv, "fake-gcs-server", startFakeGCS,
		"no Cloud Storage emulator (set %s to a fake-gcs-server binary; .ci/run builds one)")
}

// startFakeGCS starts fake-gcs-server on a free local port, over HTTP
// with its objects in memory, and waits until it lists buckets.
func startFakeGCS(bin string) (*GCSServer, func(), error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, nil, err
	}
	host := "127.0.0.1:" + strconv.Itoa(ports[0])
	proc, err := startProcess("fake-gcs", bin, "-scheme", "http", "-host", "127.0.0.1",
		"-port", strconv.Itoa(ports[0]), "-backend", "memory", "-data", "",
		"-public-host", host, "-external-url", "http://"+host, "-log-level", "warn")
	if err != nil {
		return nil, nil, err
	}
	s := &GCSServer{Host: host}
	s.Client, err = storage.NewClient(context.Background(), option.WithoutAuthentication(),
		option.WithEndpoint("http://"+host+"/storage/v1/"))
	if err != nil {
		proc.stop()
		return nil, nil, err
	}
	ready := func(ctx context.Context) error {
		_, err := s.Client.Buckets(ctx, GCSProject).Next()
		if errors.Is(err, iterator.Done) {
			return nil
		}
		return err
	}
	if err := proc.waitReady(ready); err != nil {
		return nil, nil, err
	}
	return s, func() { s.Client.Close(); proc.stop() }, nil
}

// Env returns the environment a child process needs to reach the
// emulator with gs:// URLs: append it to os.Environ().
func (s *GCSServer) Env() []string {
	return []string{"STORAGE_EMULATOR_HOST=" + s.Host, "STORAGE_EMULATOR_HOST_GRPC="}
}

// UseEnv sets, for the test, the environment through which Cloud
// Storage clients reach the emulator, as a user would set it.
func (s *GCSServer) UseEnv(t testing.TB) { setEnv(t, s.Env()) }

// Bucket creates the bucket name.
func (s *GCSServer) Bucket(t testing.TB, name string) {
	t.Helper()
	if err := s.Client.Bucket(name).Create(context.Background(), GCSProject, nil); err != nil {
		t.Fatalf("creating bucket %s: %v", name, err)
	}
}

// Upload puts the local file path at key in bucket.
func (s *GCSServer) Upload(t testing.TB, bucket, key, path string) {
	t.Helper()
	uploadFile(t, "gs://"+bucket+"/"+key, path, func(ctx context.Context, f *os.File) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel() // before Close, it abandons the upload
		w := s.Client.Bucket(bucket).Object(key).NewWriter(ctx)
		if _, err := io.Copy(w, f); err != nil {
			return err
		}
		return w.Close()
	})
}

// Keys lists the keys under prefix in bucket.
func (s *GCSServer) Keys(t testing.TB, bucket, prefix string) []string {
	t.Helper()
	it := s.Client.Bucket(bucket).Objects(context.Background(), &storage.Query{Prefix: prefix})
	var keys []string
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return keys
		}
		if err != nil {
			t.Fatalf("listing gs://%s/%s: %v", bucket, prefix, err)
		}
		keys = append(keys, a.Name)
	}
}

// setEnv sets each NAME=VALUE of env for the test.
func setEnv(t testing.TB, env []string) {
	t.Helper()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}
