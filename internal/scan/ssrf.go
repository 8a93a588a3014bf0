package scan

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/netguard"
)

// Rule ids of the ssrf-in-content scanner.
const (
	RuleSSRFMetadata = "ssrf/metadata-endpoint"
	RuleSSRFInternal = "ssrf/internal-address"
)

type ssrfScanner struct{ allowed []netip.Prefix }

// NewSSRFScanner returns the scanner for URLs in content that point at cloud
// metadata endpoints (critical) or other internal addresses (warning; none
// for addresses inside allowed). It never resolves or fetches anything: host
// names are judged by name, IP literals in every notation a URL parser might
// accept (dotted, decimal, hex, octal, short forms, IPv6, v4-mapped).
// Address classes come from internal/netguard.
func NewSSRFScanner(allowed []netip.Prefix) Scanner { return ssrfScanner{allowed} }

func (ssrfScanner) Name() string { return "ssrf" }

func (s ssrfScanner) Scan(ctx context.Context, content []byte, m Meta) ([]Finding, error) {
	var out []Finding
	var ln *lines
	var caps ruleCap
	for off := 0; ; {
		i := bytes.Index(content[off:], []byte("://"))
		if i < 0 {
			break
		}
		sep := off + i
		off = sep + 3
		// scheme: letters, digits, + - . before "://", starting with a letter
		ss := sep
		for ss > 0 && isSchemeByte(content[ss-1]) {
			ss--
		}
		for ss < sep && !isAlpha(content[ss]) {
			ss++
		}
		if ss == sep {
			continue
		}
		ae := sep + 3
		for ae < len(content) && !authorityEnd(content[ae]) {
			ae++
		}
		authority := string(content[sep+3 : ae])
		host, ok := hostOf(authority)
		if !ok {
			continue
		}
		rule, sev, why := s.judge(host)
		if rule == "" || !caps.take(rule) {
			continue
		}
		if ln == nil {
			ln = newLines(content)
		}
		line, col := ln.pos(ss)
		out = append(out, Finding{Scanner: "ssrf", Rule: rule, Severity: sev, Path: m.Path, Line: line, Column: col,
			Message: fmt.Sprintf("URL points at %s (%s); reported, not fetched", why, visibleString(host)),
			Excerpt: ln.excerpt(ss, ae)})
		caps.keep(out[len(out)-1])
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return append(out, caps.summaries()...), nil
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isSchemeByte(c byte) bool {
	return isAlpha(c) || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}

// authorityEnd reports whether c ends a URL authority in running text.
func authorityEnd(c byte) bool {
	switch c {
	case '/', '?', '#', '\\', '"', '\'', '<', '>', '(', ')', '{', '}', '|', '^', '`', ' ', '\t', '\n', '\r', ',', ';', '*':
		return true
	}
	return c < 0x20 || c == 0x7f
}

// hostOf extracts the host from an authority: userinfo and port dropped,
// percent-escapes decoded, brackets removed, lower case, trailing dots
// stripped.
func hostOf(auth string) (string, bool) {
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		auth = auth[i+1:]
	}
	if strings.ContainsRune(auth, '%') {
		auth = pctDecode(auth)
	}
	var host string
	if strings.HasPrefix(auth, "[") {
		j := strings.IndexByte(auth, ']')
		if j < 0 {
			return "", false
		}
		host = auth[1:j]
		if z := strings.IndexByte(host, '%'); z >= 0 {
			host = host[:z]
		}
	} else {
		host = auth
		if j := strings.LastIndexByte(host, ':'); j >= 0 {
			host = host[:j]
		}
	}
	host = strings.TrimRight(strings.ToLower(host), ".")
	return host, host != ""
}

func pctDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// judge classifies a host: the rule, severity and a reason, or "" for
// nothing to report.
func (s ssrfScanner) judge(host string) (string, Severity, string) {
	if netguard.IsMetadata(host) {
		return RuleSSRFMetadata, Critical, "a cloud metadata endpoint"
	}
	a, isIP := parseHostIP(host)
	if !isIP {
		// wildcard-DNS services that answer with the IP written in the name
		for _, sfx := range []string{".nip.io", ".sslip.io", ".xip.io", ".localtest.me"} {
			if strings.HasSuffix(host, sfx) {
				if sfx == ".localtest.me" {
					return RuleSSRFInternal, Warning, "a name that resolves to loopback"
				}
				if ip, ok := embeddedDNSIP(strings.TrimSuffix(host, sfx)); ok {
					a, isIP = ip, true
				}
			}
		}
	}
	if isIP {
		if netguard.IsMetadata(a.String()) {
			return RuleSSRFMetadata, Critical, "a cloud metadata endpoint"
		}
		internal, why := netguard.IsInternal(a)
		if !internal {
			return "", Info, ""
		}
		if netguard.InPrefixes(a, s.allowed) {
			return "", Info, ""
		}
		return RuleSSRFInternal, Warning, "an internal address: " + why
	}
	switch {
	case host == "localhost", strings.HasSuffix(host, ".localhost"):
		return RuleSSRFInternal, Warning, "a loopback name"
	case host == "internal", strings.HasSuffix(host, ".internal"):
		return RuleSSRFInternal, Warning, "an internal-only name"
	}
	return "", Info, ""
}

// parseHostIP parses an IP literal in any notation that some URL parser or
// resolver accepts: IPv6 (incl. v4-mapped), dotted IPv4, and the BSD
// inet_aton forms — one to four parts, each decimal, 0x hex or 0 octal, the
// last part filling the remaining bytes (2130706433, 0x7f.1, 0177.0.0.1,
// 127.1).
func parseHostIP(h string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(h); err == nil {
		return a.WithZone(""), true
	}
	if h == "" || !(h[0] >= '0' && h[0] <= '9') {
		return netip.Addr{}, false
	}
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		if p == "" {
			return netip.Addr{}, false
		}
		base := 10
		switch {
		case strings.HasPrefix(p, "0x"), strings.HasPrefix(p, "0X"):
			base, p = 16, p[2:]
			if p == "" {
				return netip.Addr{}, false
			}
		case len(p) > 1 && p[0] == '0':
			base, p = 8, p[1:]
		}
		v, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 0xff {
			return netip.Addr{}, false
		}
		n |= v << (24 - 8*uint(i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*uint(5-len(vals))) {
		return netip.Addr{}, false
	}
	n |= last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// embeddedDNSIP reads the address a nip.io-style name encodes: the last
// four dot- or dash-separated labels before the service suffix.
func embeddedDNSIP(s string) (netip.Addr, bool) {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == '-' })
	if len(f) < 4 {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(strings.Join(f[len(f)-4:], "."))
	return a, err == nil
}
