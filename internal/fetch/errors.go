package fetch

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/termsafe"
)

// Sentinels name the decision a caller can branch on. They always arrive
// wrapped in an *Error naming the (redacted) URL.
var (
	// ErrScheme: the URL is not a well-formed https URL (other scheme,
	// userinfo, "%25", backslash, fragment, bad host or port).
	ErrScheme = errors.New("URL refused")
	// ErrDomain: the host matches no allowed_domains entry.
	ErrDomain = errors.New("domain not allowed")
	// ErrInternalAddress: the host is, or resolves to, an internal or
	// metadata address outside allowed_private_networks.
	ErrInternalAddress = errors.New("internal address refused")
	// ErrRedirect: the server answered 3xx; redirects are never followed.
	ErrRedirect = errors.New("redirect refused")
	// ErrStatus: the server answered something other than 200 and 3xx. The
	// chain also holds a *StatusError with the code and a body excerpt.
	ErrStatus = errors.New("unexpected HTTP status")
	// ErrTooLarge: the body exceeded the size limit.
	ErrTooLarge = errors.New("response too large")
	// ErrHashMismatch: the body does not hash to the pinned digest.
	ErrHashMismatch = errors.New("sha256 mismatch")
	// ErrTimeout: the whole exchange did not finish within the timeout.
	ErrTimeout = errors.New("timed out")
	// ErrMissingDigest: GetPinned was called without a digest.
	ErrMissingDigest = errors.New("no sha256 pin given")
)

// Error is every error returned by Client. URL is already redacted.
type Error struct {
	URL string
	Err error
}

// Error renders one line, "fetch URL: reason", passed through Redact so that
// no credential inside a wrapped message (an echoed header, a token in a
// Location) can leak.
func (e *Error) Error() string {
	return Redact(oneLine("fetch " + e.URL + ": " + e.Err.Error()))
}

func (e *Error) Unwrap() error { return e.Err }

// MaxErrorBody caps how much of a non-200 body is kept in a StatusError.
const MaxErrorBody = 64 << 10

// maxExcerpt is how much of the body the one-line message shows.
const maxExcerpt = 200

// StatusError is a non-200, non-3xx answer. Body holds at most MaxErrorBody
// bytes of the response body, redacted. errors.Is(err, ErrStatus) holds.
type StatusError struct {
	StatusCode int
	Header     http.Header
	Body       []byte
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("HTTP status %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if ex := excerpt(e.Body); ex != "" {
		msg += ": " + ex
	}
	return msg
}

// Is makes errors.Is(err, ErrStatus) hold for every StatusError.
func (e *StatusError) Is(target error) bool { return target == ErrStatus }

// excerpt renders the start of an error body on one line.
func excerpt(b []byte) string {
	if len(b) > maxExcerpt {
		b = b[:maxExcerpt]
	}
	s := strings.TrimSpace(oneLine(strings.ToValidUTF8(string(b), "?")))
	if s != "" && len(b) == maxExcerpt {
		s += "…"
	}
	return s
}

// oneLine makes server text one clean line: the terminal rule of
// termsafe.Sanitize (control characters, newlines included, become spaces;
// bidi and zero-width characters are dropped).
func oneLine(s string) string { return termsafe.Sanitize(s) }
