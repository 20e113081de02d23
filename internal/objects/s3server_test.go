package objects_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tracegap/tracegap/internal/objects"
)

// The S3 tests run against SeaweedFS's S3 gateway, real software rather
// than an in-process fake: .ci/run builds its `weed` binary from the Go
// module proxy and names it in $TRACEGAP_WEED. Without it they skip,
// except under CI, where they fail.
const weedEnv = "TRACEGAP_WEED"

// The identity the server accepts, and the region the client signs for.
const (
	accessKey = "tracegap-test"
	secretKey = "tracegap-test-secret"
	region    = "us-east-1"
)

// s3Server is a running gateway.
type s3Server struct {
	endpoint string // http://127.0.0.1:PORT
	client   *s3.Client
}

var server struct {
	once sync.Once
	s    *s3Server
	err  error
	stop func()
}

func TestMain(m *testing.M) {
	code := m.Run()
	if server.stop != nil {
		server.stop()
	}
	os.Exit(code)
}

// needS3 returns the gateway, started once for the package's tests, and
// points the providers' credential chain at it through the AWS
// environment variables, as a user would. It skips the test when the
// server binary is absent, unless CI is set.
func needS3(t *testing.T) *s3Server {
	t.Helper()
	bin := os.Getenv(weedEnv)
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set: under CI the S3 tests must run (.ci/run builds SeaweedFS's weed and sets it)", weedEnv)
		}
		t.Skipf("skipping: no S3-compatible server (set %s to a SeaweedFS weed binary; .ci/run builds one)", weedEnv)
	}
	server.once.Do(func() { server.s, server.stop, server.err = startWeed(bin) })
	if server.err != nil {
		t.Fatalf("starting SeaweedFS's S3 gateway: %v", server.err)
	}
	useS3(t, server.s.endpoint, accessKey, secretKey)
	return server.s
}

// useS3 sets the AWS environment that s3:// URLs are read with.
func useS3(t *testing.T, endpoint, key, secret string) {
	t.Helper()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL":            endpoint,
		"AWS_REGION":                  region,
		"AWS_ACCESS_KEY_ID":           key,
		"AWS_SECRET_ACCESS_KEY":       secret,
		"AWS_SESSION_TOKEN":           "",
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             filepath.Join(t.TempDir(), "none"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(t.TempDir(), "none"),
		"AWS_EC2_METADATA_DISABLED":   "true",
	} {
		t.Setenv(k, v)
	}
	objects.ForgetBuckets()
	t.Cleanup(objects.ForgetBuckets)
}

// startWeed starts `weed server` with its master, volume, filer and S3
// gateway on free local ports, data in a temporary directory, and the
// one identity above, and waits until the gateway answers.
func startWeed(bin string) (*s3Server, func(), error) {
	dir, err := os.MkdirTemp("", "tracegap-weed-*")
	if err != nil {
		return nil, nil, err
	}
	config := fmt.Sprintf(`{"identities":[{"name":"tracegap","credentials":[{"accessKey":%q,"secretKey":%q}],"actions":["Admin","Read","List","Tagging","Write"]}]}`, accessKey, secretKey)
	if err := os.WriteFile(filepath.Join(dir, "s3.json"), []byte(config), 0o600); err != nil {
		return nil, nil, err
	}
	ports, err := freePorts(8)
	if err != nil {
		return nil, nil, err
	}
	p := func(i int) string { return strconv.Itoa(ports[i]) }
	cmd := exec.Command(bin, "server", "-dir="+dir, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-master.port="+p(0), "-master.port.grpc="+p(1), "-master.volumeSizeLimitMB=16",
		"-volume.port="+p(2), "-volume.port.grpc="+p(3), "-volume.max=400",
		"-filer", "-filer.port="+p(4), "-filer.port.grpc="+p(5),
		"-s3", "-s3.port="+p(6), "-s3.port.grpc="+p(7), "-s3.port.iceberg=0", "-s3.port.lance=0",
		"-s3.config="+filepath.Join(dir, "s3.json"))
	logf, err := os.Create(filepath.Join(dir, "weed.log"))
	if err != nil {
		return nil, nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	stop := func() {
		cmd.Process.Kill()
		cmd.Wait()
		logf.Close()
		os.RemoveAll(dir)
	}
	s := &s3Server{endpoint: "http://127.0.0.1:" + p(6)}
	s.client = s3.NewFromConfig(aws.Config{
		Region:       region,
		BaseEndpoint: aws.String(s.endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider(accessKey, secretKey, ""),
	}, func(o *s3.Options) { o.UsePathStyle = true })
	if err := s.waitReady(); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "weed.log"))
		stop()
		return nil, nil, fmt.Errorf("%w; its log ends:\n%s", err, tail(log, 2000))
	}
	return s, stop, nil
}

// waitReady waits, a minute at most, until a bucket can be created and
// listed: the gateway answers once its filer and a volume are up.
func (s *s3Server) waitReady() error {
	ctx := context.Background()
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var err error
	for time.Now().Before(deadline) {
		if _, err = http.Get(s.endpoint); err == nil {
			if _, err = s.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("ready")}); err == nil {
				_, err = s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ready"), Key: aws.String("x"), Body: nil})
				if err == nil {
					return nil
				}
			}
		}
		<-tick.C
	}
	return fmt.Errorf("not ready after a minute: %v", err)
}

// freePorts returns n distinct ports free on 127.0.0.1 now.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// bucket creates a bucket of its own for the test.
func (s *s3Server) bucket(t *testing.T, name string) {
	t.Helper()
	_, err := s.client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)})
	if err != nil {
		t.Fatalf("creating bucket %s: %v", name, err)
	}
}

// upload puts the local file path at key in bucket.
func (s *s3Server) upload(t *testing.T, bucket, key, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := s.client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: f}); err != nil {
		t.Fatalf("uploading %s to s3://%s/%s: %v", path, bucket, key, err)
	}
}

// keys lists the keys under prefix in bucket.
func (s *s3Server) keys(t *testing.T, bucket, prefix string) []string {
	t.Helper()
	out, err := s.client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	if err != nil {
		t.Fatalf("listing s3://%s/%s: %v", bucket, prefix, err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys
}
