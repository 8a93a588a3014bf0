package ref

import (
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxURLLength bounds every URL this package accepts.
const MaxURLLength = 4096

// Canonicalize returns the canonical form of an https URL without fragment:
// the only form in which fullsend compares or matches URLs. See the package
// documentation for the rules. Canonicalize(Canonicalize(u)) == Canonicalize(u).
func Canonicalize(raw string) (string, error) {
	c, err := canonicalize(raw)
	if err != nil {
		return "", newError(raw, err)
	}
	return c, nil
}

func canonicalize(raw string) (string, error) {
	switch {
	case raw == "":
		return "", ErrEmpty
	case len(raw) > MaxURLLength:
		return "", ErrSyntax
	case strings.IndexByte(raw, '\\') >= 0:
		return "", ErrBackslash
	case strings.Contains(raw, "%25"):
		return "", ErrDoubleEncoded
	case strings.IndexByte(raw, '#') >= 0:
		return "", ErrFragment
	}
	scheme, ok := schemeOf(raw)
	if !ok || !strings.EqualFold(scheme, "https") {
		return "", ErrScheme
	}
	rest := raw[len(scheme)+1:]
	if !strings.HasPrefix(rest, "//") {
		return "", ErrSyntax
	}
	rest = rest[2:]
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	authority, rest := rest[:end], rest[end:]
	hostport, err := canonicalAuthority(authority)
	if err != nil {
		return "", err
	}
	path, query, hasQuery := strings.Cut(rest, "?")
	path, err = normalizeEscapes(path, false)
	if err != nil {
		return "", err
	}
	if path == "" {
		path = "/"
	}
	path, escaped := removeDotSegments(path)
	if escaped {
		return "", ErrEscapes
	}
	if err := checkHiddenDots(path); err != nil {
		return "", err
	}
	out := "https://" + hostport + path
	if hasQuery {
		query, err = normalizeEscapes(query, true)
		if err != nil {
			return "", err
		}
		if query != "" {
			out += "?" + query
		}
	}
	return out, nil
}

// canonicalAuthority validates "host[:port]" and returns its canonical form.
func canonicalAuthority(a string) (string, error) {
	if strings.IndexByte(a, '@') >= 0 {
		return "", ErrUserinfo
	}
	var host, port string
	if strings.HasPrefix(a, "[") {
		i := strings.IndexByte(a, ']')
		if i < 0 {
			return "", ErrHost
		}
		addr, err := netip.ParseAddr(a[1:i])
		if err != nil || !addr.Is6() || addr.Zone() != "" {
			return "", ErrHost
		}
		host = "[" + addr.String() + "]"
		switch after := a[i+1:]; {
		case after == "":
		case after[0] == ':':
			port = after[1:]
		default:
			return "", ErrHost
		}
	} else {
		h, p, hasPort := strings.Cut(a, ":")
		if hasPort {
			port = p
		}
		var err error
		if host, err = CanonicalHost(h); err != nil {
			return "", err
		}
	}
	p, err := canonicalPort(port)
	if err != nil {
		return "", err
	}
	if p != "" {
		return host + ":" + p, nil
	}
	return host, nil
}

// CanonicalHost validates a DNS name or IPv4 literal (not bracketed IPv6) and
// returns it lower-cased without a trailing dot. Legacy numeric forms such as
// "127.1" or "0x7f.0.0.1" are rejected (ErrHost).
func CanonicalHost(h string) (string, error) {
	h = strings.ToLower(h)
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return "", ErrHost
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "", ErrHost
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || isDigit(c) || c == '-' || c == '_') {
				return "", ErrHost
			}
		}
	}
	last := labels[len(labels)-1]
	if allDigits(last) || strings.HasPrefix(last, "0x") || strings.HasPrefix(labels[0], "0x") {
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Is4() {
			return "", ErrHost
		}
		return a.String(), nil
	}
	return h, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

func canonicalPort(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	if !allDigits(p) || len(p) > 5 {
		return "", ErrPort
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return "", ErrPort
	}
	if n == 443 {
		return "", nil
	}
	return strconv.Itoa(n), nil
}

// normalizeEscapes decodes percent-escapes of unreserved characters,
// upper-cases the others and rejects characters that may not appear
// unescaped in a path (or query).
func normalizeEscapes(s string, query bool) (string, error) {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return "", ErrSyntax
			}
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isUnreserved(v) {
				b.WriteByte(v)
			} else {
				b.WriteByte('%')
				b.WriteByte(upperHex[v>>4])
				b.WriteByte(upperHex[v&15])
			}
			i += 2
			continue
		}
		if !isPathChar(c) && !(query && c == '?') {
			return "", ErrSyntax
		}
		b.WriteByte(c)
	}
	out := b.String()
	if err := checkDecoded(out); err != nil {
		return "", err
	}
	return out, nil
}

// checkDecoded rejects a path or query whose percent-escapes decode to a
// control character (NUL, CR, LF, ...) or to bytes that are not valid
// UTF-8. The latter covers overlong forms such as "%C0%AE" ("." to a lax
// decoder) and "%C0%AF" ("/"), which would let a server see dot segments
// that this package never saw. s holds only well-formed escapes.
func checkDecoded(s string) error {
	if strings.IndexByte(s, '%') < 0 {
		return nil
	}
	dec := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			c = unhex(s[i+1])<<4 | unhex(s[i+2])
			i += 2
			if c < 0x20 || c == 0x7f {
				return ErrSyntax
			}
		}
		dec = append(dec, c)
	}
	if !utf8.Valid(dec) {
		return ErrSyntax
	}
	return nil
}

const upperHex = "0123456789ABCDEF"

func unhex(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func isUnreserved(c byte) bool {
	return isAlpha(c) || isDigit(c) || c == '-' || c == '.' || c == '_' || c == '~'
}

// isPathChar: pchar of RFC 3986 (minus pct-encoded) plus "/".
func isPathChar(c byte) bool {
	if isUnreserved(c) {
		return true
	}
	return strings.IndexByte("!$&'()*+,;=:@/", c) >= 0
}

// removeDotSegments implements RFC 3986 §5.2.4 on an absolute path and
// reports whether a ".." tried to climb above the root.
func removeDotSegments(p string) (string, bool) {
	if !strings.Contains(p, ".") {
		return p, false
	}
	segs := strings.Split(p[1:], "/")
	out := make([]string, 0, len(segs))
	escaped := false
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) == 0 {
				escaped = true
			} else {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	return "/" + strings.Join(out, "/"), escaped
}

// checkHiddenDots rejects segments that become "." or ".." when a server
// decodes %2F or %5C (encoded slash and backslash) into separators, or
// drops ";" path parameters ("..;/" is ".." to Tomcat and servers built on
// it, "..%3B" likewise once decoded).
func checkHiddenDots(p string) error {
	if !strings.Contains(p, "%2F") && !strings.Contains(p, "%5C") && !strings.Contains(p, ";") && !strings.Contains(p, "%3B") {
		return nil
	}
	for _, seg := range strings.Split(p, "/") {
		seg = strings.ReplaceAll(seg, "%5C", "%2F")
		for _, piece := range strings.Split(seg, "%2F") {
			piece = strings.ReplaceAll(piece, "%3B", ";")
			piece, _, _ = strings.Cut(piece, ";")
			if piece == "." || piece == ".." {
				return ErrDotSegment
			}
		}
	}
	return nil
}

// ResolveRef resolves a reference found inside the remote resource at
// baseURL (RFC 3986 §5.2), then canonicalises the result. An https URL is
// parsed as-is; an absolute local path is ErrLocalInRemote; a relative
// reference keeps its #sha256= pin. A ".." climbing above the host root is
// ErrEscapes.
func ResolveRef(baseURL string, rel string) (Ref, error) {
	base, err := Parse(baseURL)
	if err != nil {
		return Ref{}, err
	}
	if base.Kind != URL {
		return Ref{}, newError(baseURL, ErrScheme)
	}
	k, err := Classify(rel)
	if err != nil {
		return Ref{}, err
	}
	switch k {
	case URL:
		return Parse(rel)
	case Absolute:
		return Ref{}, newError(rel, ErrLocalInRemote)
	}
	body, d, err := SplitDigest(rel)
	if err != nil {
		return Ref{}, err
	}
	if strings.IndexByte(body, '#') >= 0 {
		return Ref{}, newError(rel, ErrFragment)
	}
	if strings.Contains(body, "%25") {
		return Ref{}, newError(rel, ErrDoubleEncoded)
	}
	relPath, relQuery, relHasQuery := strings.Cut(body, "?")
	// base.URL is canonical: "https://" authority path [?query]
	afterScheme := base.URL[len("https://"):]
	slash := strings.IndexByte(afterScheme, '/')
	origin := base.URL[:len("https://")+slash]
	basePath, baseQuery, baseHasQuery := strings.Cut(afterScheme[slash:], "?")
	var target string
	if relPath == "" {
		target = origin + basePath
		if relHasQuery {
			target += "?" + relQuery
		} else if baseHasQuery {
			target += "?" + baseQuery
		}
	} else {
		dir := basePath[:strings.LastIndexByte(basePath, '/')+1]
		target = origin + dir + relPath
		if relHasQuery {
			target += "?" + relQuery
		}
	}
	c, err := canonicalize(target)
	if err != nil {
		return Ref{}, newError(rel, err)
	}
	return Ref{Raw: rel, Kind: URL, URL: c, Digest: d}, nil
}

// DirURL returns the canonical URL u with a trailing slash, the base against
// which references inside a directory resource (a skill) resolve.
func DirURL(u string) (string, error) {
	c, err := Canonicalize(u)
	if err != nil {
		return "", err
	}
	p, q, hasQ := strings.Cut(c, "?")
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	if hasQ {
		p += "?" + q
	}
	return p, nil
}
