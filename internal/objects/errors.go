package objects

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"

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

// refusedCredentials are the S3 error codes for credentials that the
// store does not accept.
var refusedCredentials = []string{"InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken", "AuthorizationHeaderMalformed", "InvalidClientTokenId"}

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
	case api == "NoSuchBucket":
		what = "not found (no such bucket)"
	case code == gcerrors.NotFound:
		what = "not found"
	case api != "" && slices.Contains(refusedCredentials, api):
		what = "access denied: the store refused the credentials"
	case code == gcerrors.PermissionDenied:
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

// apiCode returns the provider's error code (S3's "AccessDenied"), if the
// error carries one.
func apiCode(err error) string {
	var ae interface{ ErrorCode() string }
	if errors.As(err, &ae) {
		return ae.ErrorCode()
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
