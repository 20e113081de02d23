package objects_test

import (
	"os"
	"testing"

	"github.com/tracegap/tracegap/internal/objects"
	"github.com/tracegap/tracegap/internal/testservers"
)

// The S3 tests run against SeaweedFS's S3 gateway, real software rather
// than an in-process fake, that internal/testservers starts.

func TestMain(m *testing.M) {
	code := m.Run()
	testservers.Stop()
	os.Exit(code)
}

// needS3 returns the gateway and points the providers' credential chain
// at it through the AWS environment variables, as a user would. It skips
// the test where the server is missing, except under CI.
func needS3(t *testing.T) *testservers.S3Server {
	t.Helper()
	s := testservers.S3(t)
	useS3(t, s.Endpoint, testservers.S3AccessKey, testservers.S3SecretKey)
	return s
}

// useS3 sets the AWS environment that s3:// URLs are read with, and has
// the next open read it.
func useS3(t *testing.T, endpoint, key, secret string) {
	t.Helper()
	testservers.UseS3Env(t, endpoint, key, secret)
	objects.ForgetBuckets()
	t.Cleanup(objects.ForgetBuckets)
}
