package testservers

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
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

var fakeGCS struct {
	once sync.Once
	s    *GCSServer
	err  error
	stop func()
}

// GCS returns the Cloud Storage emulator, started on first use and
// shared by the test binary's tests; buckets are the tests' own to keep
// apart. It does not change the environment: see UseEnv and Env. It skips
// the test when $TRACEGAP_FAKE_GCS is not set, and fails it under CI.
func GCS(t testing.TB) *GCSServer {
	t.Helper()
	bin := os.Getenv(FakeGCSEnv)
	if bin == "" {
		missing(t, "no Cloud Storage emulator (set %s to a fake-gcs-server binary; .ci/run builds one)", FakeGCSEnv)
	}
	fakeGCS.once.Do(func() { fakeGCS.s, fakeGCS.stop, fakeGCS.err = startFakeGCS(bin) })
	if fakeGCS.err != nil {
		t.Fatalf("starting fake-gcs-server: %v", fakeGCS.err)
	}
	return fakeGCS.s
}

func stopGCS() {
	if fakeGCS.stop != nil {
		fakeGCS.stop()
		fakeGCS.stop = nil
	}
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
	err := upload(path, func(ctx context.Context) io.WriteCloser {
		return s.Client.Bucket(bucket).Object(key).NewWriter(ctx)
	})
	if err != nil {
		t.Fatalf("uploading %s to gs://%s/%s: %v", path, bucket, key, err)
	}
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

// upload copies the file at path to the writer open makes, and closes it.
func upload(path string, open func(context.Context) io.WriteCloser) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := open(ctx)
	if _, err := io.Copy(w, f); err != nil {
		cancel()
		w.Close()
		return err
	}
	return w.Close()
}

// setEnv sets each NAME=VALUE of env for the test.
func setEnv(t testing.TB, env []string) {
	t.Helper()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}
