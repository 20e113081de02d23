// Package objects reads and writes inputs and outputs named by
// object-storage URLs (gs://, s3://, azblob://, file://) through
// gocloud.dev/blob, with each provider's usual credential chain: an object
// opens as a file does (read as a stream, read at offsets, its size known
// up front), a prefix lists as a directory does, and an output is
// committed only once written whole.
package objects

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"gocloud.dev/blob"
	"gocloud.dev/blob/azureblob"  // azblob://
	_ "gocloud.dev/blob/fileblob" // file://
	"gocloud.dev/blob/gcsblob"    // gs://
	_ "gocloud.dev/blob/s3blob"   // s3://
	"gocloud.dev/gcp"

	"github.com/tracegap/tracegap/internal/human"
)

// schemes are the URL schemes that name objects.
var schemes = []string{"gs", "s3", "azblob", "file"}

// IsURL reports whether s names an object or a prefix in an object store
// (or, for file://, a local directory read through the same code) rather
// than a local path.
func IsURL(s string) bool {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || rest == "" {
		return false
	}
	for _, sc := range schemes {
		if strings.EqualFold(scheme, sc) {
			return true
		}
	}
	return false
}

// UnreadURL returns the error for s when it is a URL of a scheme tracegap
// does not read (http://, https://, ftp://...), nil otherwise: the caller
// asks once a path by that name was not found, so that a local path that
// only looks like a URL is still read.
func UnreadURL(s string) error {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || rest == "" || IsURL(s) || !isScheme(scheme) {
		return nil
	}
	names := make([]string, len(schemes))
	for i, sc := range schemes {
		names[i] = sc + "://"
	}
	return fmt.Errorf("%s URLs are not read: download the file first, or give a URL of %s", strings.ToLower(scheme)+"://", human.OrList(names))
}

// isScheme reports whether s is a URL scheme: a letter, then letters,
// digits, "+", "-" or ".".
func isScheme(s string) bool {
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return s != ""
}

// loc is a parsed URL: the bucket it is in and the key (or prefix) it
// names.
type loc struct {
	scheme, host, query string
	key                 string
}

// parse splits the URL raw into its bucket and key.
func parse(raw string) (loc, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return loc{}, fmt.Errorf("not a URL: %w", err)
	}
	l := loc{scheme: strings.ToLower(u.Scheme), host: u.Host, query: u.RawQuery, key: strings.TrimPrefix(u.Path, "/")}
	if l.scheme != "file" && l.host == "" {
		return loc{}, fmt.Errorf("no bucket named, expected %s://BUCKET/KEY", l.scheme)
	}
	return l, nil
}

// bucketURL is the URL gocloud opens the bucket at. A file:// bucket is
// the root directory, so that a key is the path; its writes skip
// gocloud's metadata sidecar files and stage beside their target, so that
// the rename that commits them stays on one file system.
//
// An s3:// bucket validates response checksums only where the operation
// requires it, unless the URL or AWS_RESPONSE_CHECKSUM_VALIDATION says
// otherwise: the AWS SDK otherwise logs a warning to standard error for
// each object an S3-compatible store serves without a checksum.
func (l loc) bucketURL() string {
	q, _ := url.ParseQuery(l.query)
	if l.scheme == "s3" && !q.Has("response_checksum_validation") && os.Getenv("AWS_RESPONSE_CHECKSUM_VALIDATION") == "" {
		q.Set("response_checksum_validation", "when_required")
		return (&url.URL{Scheme: l.scheme, Host: l.host, RawQuery: q.Encode()}).String()
	}
	if l.scheme != "file" {
		return (&url.URL{Scheme: l.scheme, Host: l.host, RawQuery: l.query}).String()
	}
	if !q.Has("metadata") {
		q.Set("metadata", "skip")
	}
	if !q.Has("no_tmp_dir") {
		q.Set("no_tmp_dir", "true")
	}
	return (&url.URL{Scheme: "file", Path: "/", RawQuery: q.Encode()}).String()
}

// at returns the URL of key in l's bucket, with l's query kept.
func (l loc) at(key string) string {
	u := url.URL{Scheme: l.scheme, Host: l.host, Path: "/" + key, RawQuery: l.query}
	if l.scheme == "file" {
		u.Host = ""
		return "file://" + u.EscapedPath() + queryPart(l.query)
	}
	return u.String()
}

func queryPart(q string) string {
	if q == "" {
		return ""
	}
	return "?" + q
}

// buckets holds the buckets opened so far, by bucket URL: a directory's
// objects are read from one.
var buckets struct {
	sync.Mutex
	m map[string]*blob.Bucket
}

// bucket opens (once) the bucket l is in.
func bucket(ctx context.Context, l loc) (*blob.Bucket, error) {
	u := l.bucketURL()
	buckets.Lock()
	defer buckets.Unlock()
	if b, ok := buckets.m[u]; ok {
		return b, nil
	}
	if err := gcsCredentials(ctx, l); err != nil {
		return nil, err
	}
	b, err := open(ctx, l, u)
	if err != nil {
		if strings.Contains(err.Error(), "AccountName is required") {
			return nil, &Error{What: "no credentials: set AZURE_STORAGE_ACCOUNT and its key, SAS token or an Azure login, then try again", Err: err}
		}
		// gocloud names the bucket's URL, with the defaults added here;
		// the caller names the URL as given.
		msg := err.Error()
		if _, after, ok := strings.Cut(msg, u+": "); ok {
			msg = after
		}
		return nil, &Error{What: "cannot open the bucket: " + firstLine(msg), Err: err}
	}
	if buckets.m == nil {
		buckets.m = map[string]*blob.Bucket{}
	}
	buckets.m[u] = b
	return b, nil
}

// Join returns the URL of name under the directory URL dir.
func Join(dir, name string) string {
	l, err := parse(dir)
	if err != nil {
		return strings.TrimSuffix(dir, "/") + "/" + name
	}
	return l.at(dirKey(l.key) + name)
}

// dirKey returns key as a prefix that lists what lies under it: ending
// with a slash, or empty for a bucket's root.
func dirKey(key string) string {
	if key == "" || strings.HasSuffix(key, "/") {
		return key
	}
	return key + "/"
}

// errDir says a URL names a prefix where an object was expected.
var errDir = errors.New("is a directory (a prefix with objects under it), expected an object")

// Dir returns the URL of the directory holding what raw names, without a
// trailing slash, as filepath.Dir names a file's directory, with raw's
// query kept.
func Dir(raw string) string {
	l, err := parse(raw)
	if err != nil {
		return raw
	}
	key := strings.TrimSuffix(l.key, "/")
	i := strings.LastIndex(key, "/")
	if i < 0 {
		return l.at("")
	}
	return l.at(key[:i])
}

// gcsCredentials looks for Google's Application Default Credentials before
// a gs:// bucket is opened, unless the URL asks for anonymous access or an
// emulator is set: gocloud, finding none, prints a warning on standard
// output (where the report goes) and goes on with empty credentials.
func gcsCredentials(ctx context.Context, l loc) error {
	if l.scheme != "gs" || os.Getenv("STORAGE_EMULATOR_HOST") != "" || os.Getenv("STORAGE_EMULATOR_HOST_GRPC") != "" {
		return nil
	}
	if q, _ := url.ParseQuery(l.query); gcsAnonymous(l) || q.Has("private_key_path") {
		return nil
	}
	if _, err := gcp.DefaultCredentials(ctx); err != nil {
		return &Error{What: "no credentials: set GOOGLE_APPLICATION_CREDENTIALS or run `gcloud auth application-default login` (or add ?anonymous=true for a public bucket), then try again", Err: err}
	}
	return nil
}

// gcsAnonymous reports whether l is a gs:// URL that asks for anonymous
// access (?anonymous=true), to a public bucket.
func gcsAnonymous(l loc) bool {
	q, _ := url.ParseQuery(l.query)
	return l.scheme == "gs" && q.Get("anonymous") == "true"
}

// open opens the bucket at u (l's), through gocloud's URL openers, except
// a public gs:// bucket, opened here with no credentials: gocloud's
// opener looks for credentials first and prints a warning on standard
// output when there are none.
func open(ctx context.Context, l loc, u string) (*blob.Bucket, error) {
	switch {
	case gcsAnonymous(l):
		return gcsblob.OpenBucket(ctx, gcp.NewAnonymousHTTPClient(gcp.DefaultTransport()), l.host, nil)
	case l.scheme == "azblob":
		return openAzure(ctx, u)
	}
	return blob.OpenBucket(ctx, u)
}

// openAzure opens the azblob:// bucket at u with the account, credentials
// and service options the environment gives now: gocloud's own opener
// reads them once per process, after which a change (as ForgetBuckets
// promises to see) would be missed. As gocloud's does, it refuses a URL
// that would send AZURE_STORAGE_SAS_TOKEN to a service other than the
// environment's.
func openAzure(ctx context.Context, u string) (*blob.Bucket, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	opts := azureblob.NewDefaultServiceURLOptions()
	o := &azureblob.URLOpener{ServiceURLOptions: *opts, MakeClient: azureblob.NewDefaultClient}
	if opts.SASToken != "" {
		home, err := azureblob.NewServiceURL(opts)
		if err != nil {
			return nil, err
		}
		o.MakeClient = func(svc azureblob.ServiceURL, c azureblob.ContainerName) (*container.Client, error) {
			if !sameOrigin(string(home), string(svc)) {
				return nil, errors.New("the URL names another service than the environment's, to which AZURE_STORAGE_SAS_TOKEN is not sent")
			}
			return azureblob.NewDefaultClient(svc, c)
		}
	}
	return o.OpenBucketURL(ctx, pu)
}

// sameOrigin reports whether the URLs a and b have the same scheme and
// host.
func sameOrigin(a, b string) bool {
	ua, erra := url.Parse(a)
	ub, errb := url.Parse(b)
	return erra == nil && errb == nil && strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host)
}
