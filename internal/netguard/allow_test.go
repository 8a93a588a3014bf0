package netguard_test

import (
	"testing"

	"github.com/fullsend-ai/fullsend/internal/netguard"
)

// TestAllowEntryAdmits is the table of the one allow-entry rule (host
// pattern and port) that the egress proxy and web_fetch share.
func TestAllowEntryAdmits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		entry netguard.AllowEntry
		host  string
		port  int
		want  bool
	}{
		// No port in the entry: 80 and 443 only.
		{netguard.AllowEntry{Host: "api.example.com"}, "api.example.com", 443, true},
		{netguard.AllowEntry{Host: "api.example.com"}, "api.example.com", 80, true},
		{netguard.AllowEntry{Host: "api.example.com"}, "api.example.com", 8443, false},
		{netguard.AllowEntry{Host: "api.example.com"}, "api.example.com", 22, false},
		{netguard.AllowEntry{Host: "api.example.com"}, "api.example.com", 0, false},
		{netguard.AllowEntry{Host: "api.example.com"}, "api.example.com", -443, false},
		{netguard.AllowEntry{Host: "api.example.com"}, "api.example.com", 65536 + 443, false},
		// A port in the entry: that port only (not 80 nor 443 besides).
		{netguard.AllowEntry{Host: "api.example.com", Port: 8443}, "api.example.com", 8443, true},
		{netguard.AllowEntry{Host: "api.example.com", Port: 8443}, "api.example.com", 443, false},
		{netguard.AllowEntry{Host: "api.example.com", Port: 8443}, "api.example.com", 80, false},
		{netguard.AllowEntry{Host: "api.example.com", Port: 8443}, "api.example.com", 8444, false},
		{netguard.AllowEntry{Host: "api.example.com", Port: 443}, "api.example.com", 80, false},
		{netguard.AllowEntry{Host: "api.example.com", Port: 80}, "api.example.com", 443, false},
		// An entry not from sandbox.ParseAllow with a port out of range
		// admits nothing.
		{netguard.AllowEntry{Host: "api.example.com", Port: 70000}, "api.example.com", 70000, false},
		{netguard.AllowEntry{Host: "api.example.com", Port: -1}, "api.example.com", -1, false},
		// Host: exact, case-insensitive, trailing dot; no suffix or prefix match.
		{netguard.AllowEntry{Host: "api.example.com"}, "API.Example.COM", 443, true},
		{netguard.AllowEntry{Host: "api.example.com"}, "api.example.com.", 443, true},
		{netguard.AllowEntry{Host: "api.example.com"}, "example.com", 443, false},
		{netguard.AllowEntry{Host: "api.example.com"}, "x.api.example.com", 443, false},
		{netguard.AllowEntry{Host: "api.example.com"}, "api.example.com.evil.test", 443, false},
		{netguard.AllowEntry{Host: "api.example.com"}, "evilapi.example.com", 443, false},
		{netguard.AllowEntry{Host: "api.example.com"}, "api.example.com ", 443, false},
		{netguard.AllowEntry{Host: "api.example.com"}, "", 443, false},
		// Wildcards: names strictly below, any depth; not the apex.
		{netguard.AllowEntry{Host: "*.example.com"}, "a.example.com", 443, true},
		{netguard.AllowEntry{Host: "*.example.com"}, "a.b.example.com", 80, true},
		{netguard.AllowEntry{Host: "*.example.com"}, "example.com", 443, false},
		{netguard.AllowEntry{Host: "*.example.com"}, "aexample.com", 443, false},
		{netguard.AllowEntry{Host: "*.example.com", Port: 8080}, "a.example.com", 8080, true},
		{netguard.AllowEntry{Host: "*.example.com", Port: 8080}, "a.example.com", 443, false},
		// IP literals.
		{netguard.AllowEntry{Host: "10.0.0.1"}, "10.0.0.1", 80, true},
		{netguard.AllowEntry{Host: "10.0.0.1"}, "10.0.0.2", 80, false},
		{netguard.AllowEntry{Host: "::1", Port: 8080}, "::1", 8080, true},
		{netguard.AllowEntry{Host: "::1", Port: 8080}, "::1", 80, false},
	} {
		e := c.entry
		if got := e.Admits(c.host, c.port); got != c.want {
			t.Errorf("%+v admits %q port %d = %v, want %v", c.entry, c.host, c.port, got, c.want)
		}
		if got := netguard.Admits([]netguard.AllowEntry{{Host: "other.test", Port: c.port}, e}, c.host, c.port); got != c.want {
			t.Errorf("list with %+v: %q port %d = %v, want %v", c.entry, c.host, c.port, got, c.want)
		}
	}
	if netguard.Admits(nil, "api.example.com", 443) {
		t.Error("an empty list admits")
	}
}
