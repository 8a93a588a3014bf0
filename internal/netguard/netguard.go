package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

type rng struct {
	p    netip.Prefix
	name string
}

var v4Ranges = []rng{
	{netip.MustParsePrefix("0.0.0.0/8"), "this network (0.0.0.0/8)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback (127.0.0.0/8)"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private (10.0.0.0/8)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private (172.16.0.0/12)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private (192.168.0.0/16)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments (192.0.0.0/24)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT (100.64.0.0/10)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (169.254.0.0/16)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking (198.18.0.0/15)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast (224.0.0.0/4)"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast (255.255.255.255)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (240.0.0.0/4)"},
}

var v6Ranges = []rng{
	{netip.MustParsePrefix("::/128"), "unspecified (::)"},
	{netip.MustParsePrefix("::1/128"), "loopback (::1)"},
	{netip.MustParsePrefix("fc00::/7"), "unique local (fc00::/7)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local (fe80::/10)"},
	{netip.MustParsePrefix("fec0::/10"), "site-local (fec0::/10)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast (ff00::/8)"},
	{netip.MustParsePrefix("100::/64"), "discard-only (100::/64)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64 (64:ff9b:1::/48)"},
}

// Prefixes carrying an embedded IPv4 address in their low 32 bits (for
// 6to4, bits 16..47; for Teredo, the client address inverted in the low 32
// bits).
var (
	compat4 = netip.MustParsePrefix("::/96")
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4  = netip.MustParsePrefix("2002::/16")
	siit    = netip.MustParsePrefix("::ffff:0:0:0/96")
	teredo  = netip.MustParsePrefix("2001::/32")
)

// IsInternal reports whether a must never be dialled by fullsend on behalf
// of a resource (unless an operator allowed it via allowed_private_networks),
// and names the range.
func IsInternal(a netip.Addr) (bool, string) {
	if !a.IsValid() {
		return true, "invalid address"
	}
	a = a.WithZone("")
	if a.Is4In6() {
		if in, why := internal4(a.Unmap()); in {
			return true, "IPv4-mapped " + why
		}
		return false, ""
	}
	if a.Is4() {
		return internal4(a)
	}
	for _, r := range v6Ranges {
		if r.p.Contains(a) {
			return true, r.name
		}
	}
	if v4, kind, ok := Embedded4(a); ok {
		if in, why := internal4(v4); in {
			return true, kind + " " + why
		}
	}
	// A Teredo address is a tunnel to the IPv4 server and client it
	// names: never a place a resource lives, and a way around the IPv4
	// rules. The whole prefix is internal, whatever it embeds.
	if teredo.Contains(a) {
		return true, "Teredo (2001::/32)"
	}
	return false, ""
}

func internal4(a netip.Addr) (bool, string) {
	for _, r := range v4Ranges {
		if r.p.Contains(a) {
			return true, r.name
		}
	}
	return false, ""
}

// Embedded4 extracts the IPv4 address carried by an IPv4-mapped,
// IPv4-compatible, NAT64 (64:ff9b::/96), IPv4-translated, 6to4 (2002::/16),
// Teredo (2001::/32, the client address, stored inverted) or ISATAP
// (interface identifier 0:5efe or 200:5efe under any prefix) IPv6 address,
// naming the form.
func Embedded4(a netip.Addr) (netip.Addr, string, bool) {
	if !a.Is6() {
		return netip.Addr{}, "", false
	}
	a = a.WithZone("")
	b := a.As16()
	switch {
	case a.Is4In6():
		return a.Unmap(), "IPv4-mapped", true
	case compat4.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), "IPv4-compatible", true
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), "NAT64", true
	case siit.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), "IPv4-translated", true
	case sixTo4.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), "6to4", true
	case teredo.Contains(a):
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}), "Teredo", true
	case (b[8] == 0 || b[8] == 2) && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe:
		return netip.AddrFrom4([4]byte(b[12:16])), "ISATAP", true
	}
	return netip.Addr{}, "", false
}

var metadataIPs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack, DigitalOcean, ...
	netip.MustParseAddr("169.254.170.2"),   // AWS ECS task metadata
	netip.MustParseAddr("169.254.169.253"), // AWS Route 53 resolver
	netip.MustParseAddr("fd00:ec2::254"),   // AWS IMDS over IPv6
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	netip.MustParseAddr("192.0.0.192"),     // Oracle Cloud
}

var metadataNames = map[string]bool{
	"metadata.google.internal":   true,
	"metadata.goog":              true,
	"metadata":                   true,
	"instance-data":              true,
	"instance-data.ec2.internal": true,
	"metadata.azure.internal":    true,
	"metadata.tencentyun.com":    true,
}

// IsMetadata reports whether host (a name or IP literal, optionally with a
// port or IPv6 brackets) is a cloud metadata endpoint. IPv4-mapped and other
// embedded forms of a metadata address count.
func IsMetadata(host string) bool {
	h := normalizeHost(host)
	if metadataNames[h] {
		return true
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return false
	}
	a = a.WithZone("")
	if v4, _, ok := Embedded4(a); ok {
		a = v4
	}
	for _, m := range metadataIPs {
		if a == m {
			return true
		}
	}
	return false
}

// normalizeHost lower-cases, strips a port, IPv6 brackets and one trailing
// dot.
func normalizeHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if strings.HasPrefix(h, "[") {
		if i := strings.IndexByte(h, ']'); i > 0 {
			h = h[1:i]
		}
	} else if strings.Count(h, ":") == 1 {
		h = h[:strings.IndexByte(h, ':')]
	}
	h = strings.TrimSuffix(h, ".")
	if a, err := netip.ParseAddr(h); err == nil {
		return a.WithZone("").String()
	}
	return h
}

// ErrPattern is wrapped by every CheckHostPattern error.
var ErrPattern = errors.New("invalid host pattern")

// CheckHostPattern validates an allowed_domains entry: an exact host, or
// "*.suffix" with a suffix of at least two labels.
func CheckHostPattern(p string) error {
	if p == "" {
		return fmt.Errorf("%w: empty", ErrPattern)
	}
	if _, err := netip.ParseAddr(p); err == nil {
		if strings.Contains(p, "%") {
			return fmt.Errorf("%w %q: zones are not allowed", ErrPattern, p)
		}
		return nil
	}
	h := strings.TrimSuffix(strings.ToLower(p), ".")
	wild := strings.HasPrefix(h, "*.")
	if wild {
		h = h[2:]
	}
	if h == "" || len(h) > 253 {
		return fmt.Errorf("%w %q", ErrPattern, p)
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return fmt.Errorf("%w %q: empty or over-long label", ErrPattern, p)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				if c == '*' {
					return fmt.Errorf("%w %q: a wildcard is only allowed as a leading \"*.\"", ErrPattern, p)
				}
				return fmt.Errorf("%w %q: use a bare host name (no scheme, port, path or userinfo)", ErrPattern, p)
			}
		}
	}
	if wild && len(labels) < 2 {
		return fmt.Errorf("%w %q: a wildcard must cover a domain of at least two labels", ErrPattern, p)
	}
	return nil
}

// MatchHost returns the index of the first pattern matching host (a host
// name or IP literal; a port or brackets are stripped). Invalid patterns never
// match, nor does a host with surrounding space or any byte outside ASCII
// letters, digits, '-', '_' and '.' (unless it is an IP literal). "*.example.com" matches "a.example.com" and "a.b.example.com" but not
// "example.com".
func MatchHost(host string, patterns []string) (int, bool) {
	h := normalizeHost(host)
	if h == "" || strings.TrimSpace(host) != host || !matchableHost(h) {
		return -1, false
	}
	for i, p := range patterns {
		if CheckHostPattern(p) != nil {
			continue
		}
		np := normalizeHost(p)
		if suffix, ok := strings.CutPrefix(np, "*."); ok {
			if strings.HasSuffix(h, "."+suffix) && len(h) > len(suffix)+1 {
				return i, true
			}
			continue
		}
		if h == np {
			return i, true
		}
	}
	return -1, false
}

// matchableHost reports whether h (normalised) is an IP literal or a DNS
// name made only of ASCII letters, digits, '-', '_' and non-empty labels:
// a host with spaces, NUL or other bytes a resolver might cut or
// reinterpret ("\x00x.example.com" ends in ".example.com") never matches.
func matchableHost(h string) bool {
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	if len(h) > 253 {
		return false
	}
	for _, l := range strings.Split(h, ".") {
		if l == "" || len(l) > 63 {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// InPrefixes reports whether a (unmapped from IPv4-mapped form, zone
// dropped) lies in one of nets (the allowed_private_networks exemption).
func InPrefixes(a netip.Addr, nets []netip.Prefix) bool {
	if !a.IsValid() {
		return false
	}
	a = a.WithZone("").Unmap()
	for _, n := range nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}
