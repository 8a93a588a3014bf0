package ref

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Kind is the form of a reference.
type Kind int

// The three forms a reference may take. The zero Kind is not a valid form.
const (
	Relative Kind = iota + 1 // local path relative to its container
	Absolute                 // local absolute path, used as-is
	URL                      // https URL, fetched and pinned
)

func (k Kind) String() string {
	switch k {
	case Relative:
		return "relative"
	case Absolute:
		return "absolute"
	case URL:
		return "url"
	}
	return "invalid"
}

// MarshalText renders the kind as its name (for JSON output).
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Sentinel errors. Every error from this package wraps exactly one of them.
var (
	ErrEmpty         = errors.New("empty reference")
	ErrScheme        = errors.New("only https URLs are allowed")
	ErrUserinfo      = errors.New("URLs may not carry userinfo (user@ or user:password@)")
	ErrDoubleEncoded = errors.New(`"%25" (encoded percent sign) is not allowed`)
	ErrBackslash     = errors.New("backslashes are not allowed")
	ErrBadDigest     = errors.New("integrity hash must be #sha256= followed by exactly 64 hex digits")
	ErrMissingDigest = errors.New("remote reference needs an integrity hash (#sha256=<64 hex>)")
	ErrNotAllowed    = errors.New("does not match any allowed_remote_resources entry")
	ErrEscapes       = errors.New("path escapes its base directory")
	ErrFragment      = errors.New("the only fragment allowed is #sha256=<64 hex>")
	ErrSyntax        = errors.New("malformed URL")
	ErrHost          = errors.New("invalid host")
	ErrPort          = errors.New("invalid port")
	ErrDotSegment    = errors.New(`a path segment hides "." or ".." behind an encoded slash or a ";" parameter`)
	ErrPrefix        = errors.New("allowlist entry must be an https URL ending in '/' with no query")
	ErrLocalInRemote = errors.New("a remote resource may not name an absolute local path")
)

// Error reports a rejected reference. Ref has any userinfo redacted.
type Error struct {
	Ref string
	Err error
}

func (e *Error) Error() string { return fmt.Sprintf("reference %q: %v", e.Ref, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

func newError(raw string, err error) *Error {
	return &Error{Ref: Redact(raw), Err: err}
}

// Redact hides the userinfo part of a URL-like string ("https://u:p@h/" ->
// "https://REDACTED@h/") so credentials never reach logs or errors.
func Redact(raw string) string {
	i := strings.Index(raw, "://")
	if i < 0 {
		return raw
	}
	rest := raw[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndexByte(rest[:end], '@')
	if at < 0 {
		return raw
	}
	return raw[:i+3] + "REDACTED@" + rest[at+1:]
}

// Digest is a sha256 digest in 64 lower-case hex digits.
type Digest string

const digestPrefix = "sha256="

// ParseDigest validates a 64-hex-digit sha256 digest in any case and returns
// it lower-cased.
func ParseDigest(s string) (Digest, error) {
	if len(s) != 64 {
		return "", newError(s, ErrBadDigest)
	}
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return "", newError(s, ErrBadDigest)
		}
	}
	return Digest(strings.ToLower(s)), nil
}

// SHA256 returns the digest of b.
func SHA256(b []byte) Digest {
	sum := sha256.Sum256(b)
	return Digest(hex.EncodeToString(sum[:]))
}

func (d Digest) String() string { return string(d) }

// MarshalText implements encoding.TextMarshaler.
func (d Digest) MarshalText() ([]byte, error) { return []byte(d), nil }

// UnmarshalText accepts only a valid digest (lower-casing it), so bad hashes
// are rejected while lock and metadata files are decoded.
func (d *Digest) UnmarshalText(b []byte) error {
	p, err := ParseDigest(string(b))
	if err != nil {
		return err
	}
	*d = p
	return nil
}

// Ref is a parsed reference.
type Ref struct {
	Raw    string // as written
	Kind   Kind
	Path   string // local forms: the path, without any #sha256= fragment
	URL    string // URL form: canonical, without fragment
	Digest Digest // from #sha256=, may be ""
}

// String renders the reference in canonical form with its pin.
func (r Ref) String() string {
	s := r.Path
	if r.Kind == URL {
		s = r.URL
	}
	if r.Digest != "" {
		s += "#" + digestPrefix + string(r.Digest)
	}
	return s
}

// IsRemote reports whether r is a URL.
func (r Ref) IsRemote() bool { return r.Kind == URL }

// Classify tells which form s takes. It rejects the empty string (ErrEmpty),
// any scheme but https and scheme-relative "//host" references (ErrScheme),
// backslashes (ErrBackslash) and control characters (ErrSyntax). It does not
// validate the rest of a URL; Parse does.
func Classify(s string) (Kind, error) {
	if s == "" {
		return 0, newError(s, ErrEmpty)
	}
	if strings.IndexByte(s, '\\') >= 0 {
		return 0, newError(s, ErrBackslash)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return 0, newError(s, ErrSyntax)
		}
	}
	if strings.HasPrefix(s, "//") {
		return 0, newError(s, ErrScheme)
	}
	if scheme, ok := schemeOf(s); ok {
		if !strings.EqualFold(scheme, "https") {
			return 0, newError(s, ErrScheme)
		}
		return URL, nil
	}
	if strings.HasPrefix(s, "/") {
		return Absolute, nil
	}
	return Relative, nil
}

// schemeOf returns the RFC 3986 scheme of s when its first path segment has
// one ("ALPHA *( ALPHA / DIGIT / + / - / . ) :").
func schemeOf(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isAlpha(c):
		case i > 0 && (isDigit(c) || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return s[:i], true
		default:
			return "", false
		}
	}
	return "", false
}

// SplitDigest separates a trailing "#sha256=<hex>" pin from s. A fragment
// that starts with "sha256=" but is malformed is ErrBadDigest. Other fragments
// are left in rest untouched.
func SplitDigest(s string) (rest string, d Digest, err error) {
	i := strings.LastIndexByte(s, '#')
	if i < 0 {
		return s, "", nil
	}
	frag := s[i+1:]
	if !strings.HasPrefix(strings.ToLower(frag), digestPrefix) {
		return s, "", nil
	}
	d, err = ParseDigest(frag[len(digestPrefix):])
	if err != nil {
		return "", "", newError(s, ErrBadDigest)
	}
	return s[:i], d, nil
}

// Parse classifies s, splits its #sha256= pin and, for URLs, canonicalises
// it. A URL with any fragment other than a valid pin is rejected.
func Parse(s string) (Ref, error) {
	k, err := Classify(s)
	if err != nil {
		return Ref{}, err
	}
	if k == URL {
		body, frag, hasFrag := strings.Cut(s, "#")
		r := Ref{Raw: s, Kind: URL}
		if hasFrag {
			if !strings.HasPrefix(strings.ToLower(frag), digestPrefix) {
				return Ref{}, newError(s, ErrFragment)
			}
			d, err := ParseDigest(frag[len(digestPrefix):])
			if err != nil {
				return Ref{}, newError(s, ErrBadDigest)
			}
			r.Digest = d
		}
		c, err := Canonicalize(body)
		if err != nil {
			var re *Error
			if errors.As(err, &re) {
				return Ref{}, newError(s, re.Err)
			}
			return Ref{}, newError(s, err)
		}
		r.URL = c
		return r, nil
	}
	rest, d, err := SplitDigest(s)
	if err != nil {
		return Ref{}, err
	}
	if rest == "" {
		return Ref{}, newError(s, ErrEmpty)
	}
	return Ref{Raw: s, Kind: k, Path: rest, Digest: d}, nil
}

// RequireDigest returns ErrMissingDigest for a URL reference without a pin.
func (r Ref) RequireDigest() error {
	if r.Kind == URL && r.Digest == "" {
		return newError(r.Raw, ErrMissingDigest)
	}
	return nil
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
