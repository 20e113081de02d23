package objects_test

import (
	"os"
	"testing"

	"github.com/tracegap/tracegap/internal/objects"
	"github.com/tracegap/tracegap/internal/testservers"
)

// The object-store tests run, each, against real servers that
// internal/testservers starts, never an in-process fake: SeaweedFS's S3
// gateway (s3://), fake-gcs-server, a separate Cloud Storage emulator
// process (gs://), and Microsoft's Azurite (azblob://).

func TestMain(m *testing.M) {
	code := m.Run()
	testservers.Stop()
	os.Exit(code)
}

// server is what the tests ask of an object store's server.
type server interface {
	Bucket(t testing.TB, name string)
	Upload(t testing.TB, bucket, key, path string)
	Keys(t testing.TB, bucket, prefix string) []string
	UseEnv(t testing.TB)
}

// store is an object store under test: its URL scheme and its server.
type store struct {
	scheme string
	server
	// refuse sets, for the test, credentials the server refuses; where
	// nil, the reason it cannot is in noRefusal.
	refuse    func(t *testing.T, s server)
	noRefusal string
	// endpointInURL returns the URL query that names the server in place
	// of the environment, and the variables to clear; nil where the
	// provider has no such query.
	endpointInURL func(s server) (query string, clear []string)
}

// url returns the URL of key in bucket.
func (s store) url(bucket, key string) string { return s.scheme + "://" + bucket + "/" + key }

// stores are the providers each test runs on.
var stores = []struct {
	scheme string
	start  func(testing.TB) server
	store
}{
	{"s3", func(t testing.TB) server { return testservers.S3(t) }, store{
		refuse: func(t *testing.T, s server) {
			testservers.UseS3Env(t, s.(*testservers.S3Server).Endpoint, testservers.S3AccessKey, "not-the-secret")
		},
		endpointInURL: func(s server) (string, []string) {
			return "?endpoint=" + s.(*testservers.S3Server).Endpoint + "&region=" + testservers.S3Region + "&use_path_style=true", []string{"AWS_ENDPOINT_URL"}
		},
	}},
	{"gs", func(t testing.TB) server { return testservers.GCS(t) }, store{
		noRefusal: "fake-gcs-server accepts any credentials",
	}},
	{"azblob", func(t testing.TB) server { return testservers.Azure(t) }, store{
		refuse: func(t *testing.T, _ server) {
			t.Setenv("AZURE_STORAGE_KEY", "bm90LXRoZS1kZXZlbG9wbWVudC1hY2NvdW50cy1rZXk=")
		},
		endpointInURL: func(s server) (string, []string) {
			return "?domain=" + s.(*testservers.AzureServer).Host + "&protocol=http&localemu=true",
				[]string{"AZURE_STORAGE_DOMAIN", "AZURE_STORAGE_PROTOCOL", "AZURE_STORAGE_IS_LOCAL_EMULATOR"}
		},
	}},
}

// eachStore runs test on each provider, as a subtest named by its scheme,
// with its server started and the environment set to reach it.
func eachStore(t *testing.T, test func(t *testing.T, s store)) {
	t.Helper()
	for _, p := range stores {
		t.Run(p.scheme, func(t *testing.T) {
			s := p.store
			s.scheme, s.server = p.scheme, p.start(t)
			s.UseEnv(t)
			forgetBuckets(t)
			test(t, s)
		})
	}
}

// forgetBuckets has the next open read the environment the test has set,
// and the test's changes forgotten once it ends.
func forgetBuckets(t *testing.T) {
	t.Helper()
	objects.ForgetBuckets()
	t.Cleanup(objects.ForgetBuckets)
}
