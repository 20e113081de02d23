package objects

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"gocloud.dev/gcerrors"
)

// Error is an error from an object store, said in a few words on one line
// (not found, access denied, no credentials) for the caller to put after
// the URL; Err is the provider's error, kept for errors.Is and As.
type Error struct {
	What string
	Err  error
	code gcerrors.ErrorCode
}

func (e *Error) Error() string { return e.What }
func (e *Error) Unwrap() error { return e.Err }

// Is makes an object that is not there fs.ErrNotExist, as a missing file
// is.
func (e *Error) Is(target error) bool {
	return target == fs.ErrNotExist && e.code == gcerrors.NotFound
}

// The providers' error codes (S3's, then Azure's) for credentials that
// the store does not accept, for a request they do not allow, and for a
// bucket that is not there.
var (
	refusedCredentials = []string{"InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken", "AuthorizationHeaderMalformed", "InvalidClientTokenId",
		"AuthenticationFailed", "InvalidAuthenticationInfo", "NoAuthenticationInformation"}
	notAllowed = []string{"AccessDenied",
		"AuthorizationFailure", "AuthorizationPermissionMismatch", "AuthorizationSourceIPMismatch", "InsufficientAccountPermissions"}
	noBucket = []string{"NoSuchBucket", "ContainerNotFound"}
)

// describe turns an error from gocloud or a provider into an *Error that
// says what was wrong.
func describe(err error) error {
	var e *Error
	if err == nil || errors.As(err, &e) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	code := gcerrors.Code(err)
	api := apiCode(err)
	var what string
	switch {
	case slices.Contains(noBucket, api) || errors.Is(err, storage.ErrBucketNotExist):
		what = "not found (no such bucket)"
	case code == gcerrors.NotFound:
		what = "not found"
	case api != "" && slices.Contains(refusedCredentials, api):
		what = "access denied: the store refused the credentials"
	case code == gcerrors.PermissionDenied || slices.Contains(notAllowed, api):
		what = "access denied"
	case mentionsCredentials(err):
		what = "no credentials: set them up as the provider's tools expect (environment, config file or instance role), then try again"
	default:
		what = firstLine(withoutKey(err.Error()))
	}
	if api != "" && !strings.Contains(what, api) && code != gcerrors.NotFound {
		what += " (" + api + ")"
	}
	return &Error{What: what, Err: err, code: code}
}

// apiCode returns the provider's error code (S3's "AccessDenied", Azure's
// "AuthenticationFailed"), if the error carries one.
func apiCode(err error) string {
	var ae interface{ ErrorCode() string }
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

// mentionsCredentials reports whether err says credentials could not be
// found, as each provider's credential chain words it.
func mentionsCredentials(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "credential") && !strings.Contains(s, "refused")
}

// firstLine returns the first line of s, clipped, so that an error stays
// one line.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	const most = 300
	if len(s) > most {
		s = s[:most] + "..."
	}
	return s
}

// withoutKey drops the prefix gocloud puts before a provider's error
// (`blob (key "x") (code=Unknown): `): the caller names the URL.
func withoutKey(msg string) string {
	if !strings.HasPrefix(msg, "blob (") {
		return msg
	}
	if _, after, ok := strings.Cut(msg, "): "); ok {
		return after
	}
	return msg
}
