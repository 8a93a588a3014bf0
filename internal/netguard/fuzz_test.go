package netguard

import (
	"net/netip"
	"testing"
)

// FuzzHostAddr moved here from internal/hooks with the parser it covers.
func FuzzHostAddr(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "2130706433", "0x7f000001", "0177.1", "127.1", "1.2.3", "0x", "00",
		"4294967296", "[::ffff:127.0.0.1]", "%31%32%37.0.0.1", "fe80::1%25eth0", "127.0.0.1."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if a, ok := parseInetAton(s); ok {
			if !a.Is4() {
				t.Fatalf("%q parsed to non-IPv4 %v", s, a)
			}
			// the canonical dotted quad parses to the same address
			if b, ok2 := parseInetAton(a.String()); !ok2 || b != a {
				t.Fatalf("%q -> %v, canonical form parses to %v %v", s, a, b, ok2)
			}
			if c, err := netip.ParseAddr(a.String()); err != nil || c != a {
				t.Fatalf("%q -> %v does not round-trip through netip", s, a)
			}
		}
		a, ok := HostAddr(s)
		if !ok {
			return
		}
		if !a.IsValid() || a.Zone() != "" {
			t.Fatalf("%q -> invalid or zoned %v", s, a)
		}
		if b, ok2 := HostAddr(a.String()); !ok2 || b != a {
			t.Fatalf("%q -> %v, canonical form gives %v %v", s, a, b, ok2)
		}
	})
}
