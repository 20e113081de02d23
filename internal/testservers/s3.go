package testservers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// WeedEnv names the environment variable that gives the SeaweedFS `weed`
// binary S3 starts; .ci/run builds it from the Go module proxy and sets it.
const WeedEnv = "TRACEGAP_WEED"

// The identity the gateway accepts, and the region clients sign for.
const (
	S3AccessKey = "tracegap-test"
	S3SecretKey = "tracegap-test-secret"
	S3Region    = "us-east-1"
)

// S3Server is a running SeaweedFS S3 gateway.
type S3Server struct {
	Endpoint string     // http://127.0.0.1:PORT
	Client   *s3.Client // signed with S3AccessKey and S3SecretKey, path-style
	dir      string     // its data, log and configuration
}

var weed lazy[*S3Server]

// S3 returns the S3 gateway, started on first use and shared by the test
// binary's tests; buckets are the tests' own to keep apart. It does not
// change the environment: see UseS3Env and Env. It skips the test when
// $TRACEGAP_WEED is not set, and fails it under CI.
func S3(t testing.TB) *S3Server {
	t.Helper()
	return weed.get(t, WeedEnv, "SeaweedFS's S3 gateway", startWeed,
		"no S3-compatible server (set %s to a SeaweedFS weed binary; .ci/run builds one)")
}

// Env returns the AWS environment a child process needs to reach the
// gateway with its identity, and nothing else (no profile, no shared
// files, no instance metadata): append it to os.Environ().
func (s *S3Server) Env() []string {
	none := filepath.Join(s.dir, "no-such-aws-file")
	var env []string
	for _, kv := range awsEnv(s.Endpoint, S3AccessKey, S3SecretKey, none) {
		env = append(env, kv[0]+"="+kv[1])
	}
	return env
}

// UseS3Env sets, for the test, the AWS environment through which the SDK's
// default credential chain reaches endpoint as key with secret, as a user
// would set it.
func UseS3Env(t testing.TB, endpoint, key, secret string) {
	t.Helper()
	for _, kv := range awsEnv(endpoint, key, secret, filepath.Join(t.TempDir(), "none")) {
		t.Setenv(kv[0], kv[1])
	}
}

// awsEnv lists the AWS variables for endpoint, key and secret, with the
// shared configuration files at none, a path that does not exist.
func awsEnv(endpoint, key, secret, none string) [][2]string {
	return [][2]string{
		{"AWS_ENDPOINT_URL", endpoint},
		{"AWS_REGION", S3Region},
		{"AWS_ACCESS_KEY_ID", key},
		{"AWS_SECRET_ACCESS_KEY", secret},
		{"AWS_SESSION_TOKEN", ""},
		{"AWS_PROFILE", ""},
		{"AWS_CONFIG_FILE", none},
		{"AWS_SHARED_CREDENTIALS_FILE", none},
		{"AWS_EC2_METADATA_DISABLED", "true"},
	}
}

// Bucket creates the bucket name.
func (s *S3Server) Bucket(t testing.TB, name string) {
	t.Helper()
	_, err := s.Client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)})
	if err != nil {
		t.Fatalf("creating bucket %s: %v", name, err)
	}
}

// Upload puts the local file path at key in bucket.
func (s *S3Server) Upload(t testing.TB, bucket, key, path string) {
	t.Helper()
	uploadFile(t, "s3://"+bucket+"/"+key, path, func(ctx context.Context, f *os.File) error {
		_, err := s.Client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: f})
		return err
	})
}

// Keys lists the keys under prefix in bucket (its first thousand).
func (s *S3Server) Keys(t testing.TB, bucket, prefix string) []string {
	t.Helper()
	out, err := s.Client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	if err != nil {
		t.Fatalf("listing s3://%s/%s: %v", bucket, prefix, err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys
}

// startWeed starts `weed server` with its master, volume, filer and S3
// gateway on free local ports, data in a temporary directory, and the
// one identity above, and waits until the gateway answers.
func startWeed(bin string) (*S3Server, func(), error) {
	dir, err := os.MkdirTemp("", "tracegap-weed-*")
	if err != nil {
		return nil, nil, err
	}
	config := fmt.Sprintf(`{"identities":[{"name":"tracegap","credentials":[{"accessKey":%q,"secretKey":%q}],"actions":["Admin","Read","List","Tagging","Write"]}]}`, S3AccessKey, S3SecretKey)
	if err := os.WriteFile(filepath.Join(dir, "s3.json"), []byte(config), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	ports, err := freePorts(8)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	p := func(i int) string { return strconv.Itoa(ports[i]) }
	proc, err := startIn(dir, "weed", bin, "server", "-dir="+dir, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-master.port="+p(0), "-master.port.grpc="+p(1), "-master.volumeSizeLimitMB=16",
		"-volume.port="+p(2), "-volume.port.grpc="+p(3), "-volume.max=400",
		"-filer", "-filer.port="+p(4), "-filer.port.grpc="+p(5),
		"-s3", "-s3.port="+p(6), "-s3.port.grpc="+p(7), "-s3.port.iceberg=0", "-s3.port.lance=0",
		"-s3.config="+filepath.Join(dir, "s3.json"))
	if err != nil {
		return nil, nil, err
	}
	s := &S3Server{Endpoint: "http://127.0.0.1:" + p(6), dir: dir}
	s.Client = s3.NewFromConfig(aws.Config{
		Region:       S3Region,
		BaseEndpoint: aws.String(s.Endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider(S3AccessKey, S3SecretKey, ""),
	}, func(o *s3.Options) { o.UsePathStyle = true })
	// The gateway answers once its filer and a volume are up.
	if err := proc.waitReady(s.ready); err != nil {
		return nil, nil, err
	}
	return s, proc.stop, nil
}

// ready reports whether the gateway creates a bucket and writes to it.
func (s *S3Server) ready(ctx context.Context) error {
	resp, err := http.Get(s.Endpoint)
	if err != nil {
		return err
	}
	resp.Body.Close()
	_, err = s.Client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("ready")})
	var owned *types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) { // made by an earlier try
		return err
	}
	_, err = s.Client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ready"), Key: aws.String("x"), Body: nil})
	return err
}

// UseEnv sets, for the test, the AWS environment through which s3:// URLs
// reach the gateway with its identity, as a user would set it.
func (s *S3Server) UseEnv(t testing.TB) { UseS3Env(t, s.Endpoint, S3AccessKey, S3SecretKey) }
