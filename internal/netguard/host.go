package netguard

import (
	"net/netip"
	"strconv"
	"strings"
)

// SplitAuthority splits a URL authority (or a host[:port] token seen in
// text) into host and port. Userinfo up to the last raw '@' is dropped; the
// rest is percent-decoded once before splitting, so an encoded bracket or
// colon is read the way a decoding URL parser would. A bracketed host yields
// what is inside the brackets; an unbracketed host that is an IPv6 literal
// (optionally zoned) has no port; otherwise the port follows the last ':'.
// The host is returned as HostName returns it. ok is false for an
// unterminated '[' or an empty host.
func SplitAuthority(auth string) (host, port string, ok bool) {
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		auth = auth[i+1:]
	}
	auth = pctDecode(auth)
	switch {
	case strings.HasPrefix(auth, "["):
		j := strings.IndexByte(auth, ']')
		if j < 0 {
			return "", "", false
		}
		host, port = auth[1:j], strings.TrimPrefix(auth[j+1:], ":")
	case strings.Count(auth, ":") > 1 && isIPv6(auth):
		host = auth
	default:
		host = auth
		if j := strings.LastIndexByte(auth, ':'); j >= 0 {
			host, port = auth[:j], auth[j+1:]
		}
	}
	host = canonHost(host)
	return host, port, host != ""
}

func isIPv6(s string) bool {
	if i := strings.IndexByte(s, '%'); i >= 0 {
		s = s[:i]
	}
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6()
}

// HostName returns host as a client would look it up: percent-escapes
// decoded once, one pair of surrounding brackets and an IPv6 zone removed,
// lower case, trailing dots stripped. It does not remove a port.
func HostName(host string) string { return canonHost(pctDecode(host)) }

// canonHost is HostName without the percent-decoding.
func canonHost(h string) string {
	if len(h) >= 2 && h[0] == '[' && h[len(h)-1] == ']' {
		h = h[1 : len(h)-1]
	}
	if i := strings.IndexByte(h, '%'); i >= 0 && strings.Contains(h[:i], ":") {
		h = h[:i] // IPv6 zone
	}
	return strings.TrimRight(strings.ToLower(h), ".")
}

// HostAddr reports the address a client that does not resolve names would
// connect to for the literal host: after HostName, an IPv6 literal
// (including IPv4-mapped and zoned forms, zone dropped), a dotted quad, or a
// BSD inet_aton form as curl, browsers and libc accept it: one to four parts,
// each decimal, 0x hex or leading-0 octal, the last part filling the
// remaining bytes (2130706433, 0x7f000001, 0x7f.1, 0177.0.0.1, 127.1, and
// "0x" meaning 0). Host names are not resolved: see EmbeddedDNSAddr and
// InternalName for names. Because host is percent-decoded once, passing a
// host that SplitAuthority already decoded decodes any remaining escapes a
// second time, which only ever finds more addresses.
func HostAddr(host string) (netip.Addr, bool) {
	h := HostName(host)
	if a, err := netip.ParseAddr(h); err == nil {
		return a.WithZone(""), true
	}
	return parseInetAton(h)
}

// parseInetAton parses the 1-4 part numeric IPv4 forms.
func parseInetAton(s string) (netip.Addr, bool) {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return netip.Addr{}, false
	}
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var vals [4]uint64
	for i, p := range parts {
		if p == "" {
			return netip.Addr{}, false
		}
		base := 10
		switch {
		case strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X"):
			base, p = 16, p[2:]
			if p == "" {
				p = "0" // inet_aton and WHATWG read a bare "0x" as 0
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
	last := len(parts) - 1
	var n uint64
	for i := 0; i < last; i++ {
		if vals[i] > 0xff {
			return netip.Addr{}, false
		}
		n |= vals[i] << (24 - 8*uint(i))
	}
	if vals[last] >= 1<<(8*uint(4-last)) {
		return netip.Addr{}, false
	}
	n |= vals[last]
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// pctDecode decodes %XX escapes once; malformed escapes stay as written.
func pctDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
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

// wildcardDNS are public services whose names answer with the address the
// name spells out.
var wildcardDNS = []string{".nip.io", ".sslip.io", ".xip.io", ".traefik.me"}

// EmbeddedDNSAddr reports the address a wildcard-DNS name (nip.io, sslip.io,
// xip.io, traefik.me) answers with, read from the name without resolving:
// the last four dot- or dash-separated fields before the service suffix as
// a dotted quad ("app.10.0.0.1.nip.io", "10-0-0-1.sslip.io",
// "app-127-0-0-1.nip.io", empty fields skipped), else the last label as
// eight hex digits ("app-7f000001.nip.io") or as an IPv6 address with '-'
// for ':' ("--1.sslip.io"). host is normalised as by HostName.
func EmbeddedDNSAddr(host string) (netip.Addr, bool) {
	h := HostName(host)
	var rest string
	for _, sfx := range wildcardDNS {
		if strings.HasSuffix(h, sfx) {
			rest = strings.TrimSuffix(h, sfx)
			break
		}
	}
	if rest == "" {
		return netip.Addr{}, false
	}
	f := strings.FieldsFunc(rest, func(r rune) bool { return r == '.' || r == '-' })
	if len(f) >= 4 {
		if a, err := netip.ParseAddr(strings.Join(f[len(f)-4:], ".")); err == nil && a.Is4() {
			return a, true
		}
	}
	label := rest[strings.LastIndexByte(rest, '.')+1:]
	if i := strings.LastIndexByte(label, '-'); i >= 0 && len(label)-i-1 == 8 {
		if v, err := strconv.ParseUint(label[i+1:], 16, 32); err == nil {
			return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
		}
	}
	if len(label) == 8 {
		if v, err := strconv.ParseUint(label, 16, 32); err == nil {
			return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
		}
	}
	if strings.Count(label, "-") >= 2 {
		if a, err := netip.ParseAddr(strings.ReplaceAll(label, "-", ":")); err == nil && a.Is6() {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// InternalName reports whether host (as HostName returns it) is internal by
// name alone, without resolving, and why: loopback names (localhost,
// *.localhost, localhost.localdomain, ip6-localhost, ip6-loopback), public
// names that resolve to loopback (localtest.me, lvh.me and their
// subdomains), internal-only names (internal, *.internal, *.local, *.svc,
// instance-data), and wildcard-DNS names whose embedded address
// (EmbeddedDNSAddr) is internal or a metadata address. Whether a
// single-label name is internal depends on the search domains of the
// resolver, so that is left to the caller (see IsHostName).
func InternalName(host string) (bool, string) {
	h := strings.TrimRight(strings.ToLower(host), ".")
	switch {
	case h == "":
		return false, ""
	case h == "localhost" || strings.HasSuffix(h, ".localhost") || h == "localhost.localdomain" ||
		h == "ip6-localhost" || h == "ip6-loopback":
		return true, "a loopback name"
	case h == "localtest.me" || strings.HasSuffix(h, ".localtest.me") || h == "lvh.me" || strings.HasSuffix(h, ".lvh.me"):
		return true, "a public name that resolves to loopback"
	case h == "internal" || strings.HasSuffix(h, ".internal") || strings.HasSuffix(h, ".local") ||
		strings.HasSuffix(h, ".svc") || h == "instance-data":
		return true, "an internal name"
	}
	if a, ok := EmbeddedDNSAddr(h); ok {
		if IsMetadata(a.String()) {
			return true, "a wildcard-DNS name for a metadata address"
		}
		if bad, why := IsInternal(a); bad {
			return true, "a wildcard-DNS name for an internal address (" + why + ")"
		}
	}
	return false, ""
}

// IsHostName reports whether h could be a DNS host name as written: 1-253
// bytes of ASCII letters, digits, '-', '_' and '.', not starting with '.'
// or '-'. Text that fails it ("$HOST", "a/b") is not a name a client would
// look up.
func IsHostName(h string) bool {
	if len(h) == 0 || len(h) > 253 || h[0] == '.' || h[0] == '-' {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}
