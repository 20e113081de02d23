package testservers

import (
	"fmt"
	"sync"
	"testing"
)

var serviceStorage struct {
	sync.Mutex
	bucket bool
	n      int
}

// storageBucket is the bucket Storage's directories are made in.
const storageBucket = "tracegap-service"

// Storage returns what a scale-out upload service keeps its records and
// files in: a new PostgreSQL database (its postgres:// URL) and a new
// directory in an S3 bucket (its s3:// URL), on the real servers, with the
// AWS environment set for the test to reach the bucket.
func Storage(t testing.TB) (database, blobs string) {
	t.Helper()
	s3 := S3(t)
	database = Postgres(t)
	UseS3Env(t, s3.Endpoint, S3AccessKey, S3SecretKey)
	serviceStorage.Lock()
	defer serviceStorage.Unlock()
	if !serviceStorage.bucket {
		s3.Bucket(t, storageBucket)
		serviceStorage.bucket = true
	}
	serviceStorage.n++
	return database, fmt.Sprintf("s3://%s/%d/", storageBucket, serviceStorage.n)
}
