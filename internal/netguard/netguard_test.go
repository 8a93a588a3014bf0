package netguard

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

var internalTests = []struct {
	addr   string
	want   bool
	reason string // substring
}{
	{"0.0.0.0", true, "this network"},
	{"0.1.2.3", true, "this network"},
	{"127.0.0.1", true, "loopback"},
	{"127.255.255.254", true, "loopback"},
	{"10.0.0.1", true, "10.0.0.0/8"},
	{"172.16.0.1", true, "172.16.0.0/12"},
	{"172.31.255.255", true, "172.16.0.0/12"},
	{"172.32.0.1", false, ""},
	{"192.168.1.1", true, "192.168.0.0/16"},
	{"100.64.0.1", true, "carrier-grade"},
	{"100.127.255.255", true, "carrier-grade"},
	{"100.128.0.1", false, ""},
	{"169.254.169.254", true, "link-local"},
	{"198.18.0.1", true, "benchmarking"},
	{"198.19.255.255", true, "benchmarking"},
	{"198.20.0.1", false, ""},
	{"224.0.0.1", true, "multicast"},
	{"239.255.255.255", true, "multicast"},
	{"240.0.0.1", true, "reserved"},
	{"255.255.255.255", true, "broadcast"},
	{"8.8.8.8", false, ""},
	{"140.82.112.3", false, ""},
	{"::", true, "unspecified"},
	{"::1", true, "loopback"},
	{"fc00::1", true, "unique local"},
	{"fd00:ec2::254", true, "unique local"},
	{"fe80::1", true, "link-local"},
	{"fe80::1%eth0", true, "link-local"},
	{"fec0::1", true, "site-local"},
	{"ff02::1", true, "multicast"},
	{"100::1", true, "discard"},
	{"64:ff9b:1::1", true, "local-use NAT64"},
	{"::ffff:127.0.0.1", true, "IPv4-mapped loopback"},
	{"::ffff:10.1.2.3", true, "IPv4-mapped private"},
	{"::ffff:169.254.169.254", true, "IPv4-mapped link-local"},
	{"::ffff:8.8.8.8", false, ""},
	{"::127.0.0.1", true, "IPv4-compatible loopback"},
	{"::10.0.0.1", true, "IPv4-compatible private"},
	{"::8.8.8.8", false, ""},
	{"64:ff9b::127.0.0.1", true, "NAT64 loopback"},
	{"64:ff9b::a9fe:a9fe", true, "NAT64 link-local"},
	{"64:ff9b::8.8.8.8", false, ""},
	{"::ffff:0:127.0.0.1", true, "IPv4-translated loopback"},
	{"2002:7f00:1::", true, "6to4 loopback"},
	{"2002:808:808::", false, ""},
	{"2606:4700:4700::1111", false, ""},
	{"2001:db8::1", false, ""},
	// 192.0.0.0/24 holds the Oracle Cloud metadata address.
	{"192.0.0.1", true, "IETF protocol assignments"},
	{"::ffff:192.0.0.192", true, "IPv4-mapped IETF"},
	{"192.0.1.1", false, ""},
	// Teredo: the client IPv4 address is stored inverted (127.0.0.1 ->
	// 80ff:fffe); the whole prefix is internal whatever it embeds.
	{"2001:0:4136:e378:8000:63bf:80ff:fffe", true, "Teredo loopback"},
	{"2001:0:4136:e378:8000:63bf:f5ff:fffe", true, "Teredo private (10.0.0.0/8)"},
	{"2001:0:4136:e378:8000:63bf:5601:5601", true, "Teredo link-local"},
	{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", true, "Teredo (2001::/32)"},
	{"2001:1::1", false, ""}, // outside 2001::/32
	// ISATAP: interface identifier [02]00:5efe + IPv4, under any prefix.
	{"2001:db8:1:2:0:5efe:10.0.0.1", true, "ISATAP private (10.0.0.0/8)"},
	{"2001:db8:1:2:200:5efe:127.0.0.1", true, "ISATAP loopback"},
	{"2001:db8:1:2:0:5efe:8.8.8.8", false, ""},
	{"2001:db8:1:2:300:5efe:10.0.0.1", false, ""}, // not an ISATAP identifier
}

func TestIsInternal(t *testing.T) {
	t.Parallel()
	for _, tc := range internalTests {
		t.Run(tc.addr, func(t *testing.T) {
			a := netip.MustParseAddr(tc.addr)
			got, why := IsInternal(a)
			if got != tc.want || !strings.Contains(why, tc.reason) {
				t.Fatalf("IsInternal(%s) = %v %q; want %v %q", tc.addr, got, why, tc.want, tc.reason)
			}
		})
	}
	if in, _ := IsInternal(netip.Addr{}); !in {
		t.Fatal("invalid address must be internal (fail closed)")
	}
}

func TestIsMetadata(t *testing.T) {
	t.Parallel()
	yes := []string{"169.254.169.254", "169.254.169.254:80", "[fd00:ec2::254]", "fd00:ec2::254",
		"metadata.google.internal", "METADATA.google.internal.", "100.100.100.200", "::ffff:169.254.169.254",
		"[::ffff:a9fe:a9fe]:80", "169.254.170.2", "192.0.0.192", "metadata.goog", "64:ff9b::169.254.169.254",
		"2001:0:4136:e378:8000:63bf:5601:5601", "[2001:db8::5efe:a9fe:a9fe]", "2002:a9fe:a9fe::1"}
	for _, h := range yes {
		if !IsMetadata(h) {
			t.Errorf("IsMetadata(%q) = false", h)
		}
	}
	no := []string{"github.com", "8.8.8.8", "169.254.169.1", "metadata.example.com", "google.internal", ""}
	for _, h := range no {
		if IsMetadata(h) {
			t.Errorf("IsMetadata(%q) = true", h)
		}
	}
}

func TestCheckHostPattern(t *testing.T) {
	t.Parallel()
	good := []string{"github.com", "GitHub.com", "*.github.io", "raw.githubusercontent.com", "10.1.2.3", "2001:db8::1", "ghe.corp.local.", "my_host.example"}
	for _, p := range good {
		if err := CheckHostPattern(p); err != nil {
			t.Errorf("CheckHostPattern(%q) = %v", p, err)
		}
	}
	bad := []string{"", "*", "*.", "*.com", "git*hub.com", "**.github.io", "a.*.github.io", "https://github.com",
		"github.com:443", "github.com/", "u@github.com", "[::1]", "a..b", "fe80::1%eth0", "*.*.com"}
	for _, p := range bad {
		if err := CheckHostPattern(p); !errors.Is(err, ErrPattern) {
			t.Errorf("CheckHostPattern(%q) = %v, want ErrPattern", p, err)
		}
	}
}

func TestMatchHost(t *testing.T) {
	t.Parallel()
	pats := []string{"github.com", "*.github.io", "2001:db8::1", "bad pattern"}
	cases := []struct {
		host string
		want int
	}{
		{"github.com", 0},
		{"GITHUB.COM", 0},
		{"github.com.", 0},
		{"github.com:443", 0},
		{"api.github.com", -1},  // exact entries match exactly
		{"evilgithub.com", -1},  // no suffix confusion
		{"github.com.evil", -1}, //
		{"pages.github.io", 1},
		{"a.b.github.io", 1},
		{"github.io", -1}, // "*." is subdomains only
		{"xgithub.io", -1},
		{"[2001:db8::1]", 2},
		{"2001:0db8::0001", 2},
		{"[2001:db8::1]:8443", 2},
		{"bad pattern", -1},
		// Hosts a resolver might cut or reinterpret never match.
		{"\x00pages.github.io", -1},
		{"pages.github.io\x00", -1},
		{" github.com", -1},
		{"github.com\t", -1},
		{"a b.github.io", -1},
		{"p\u00e4ges.github.io", -1},
		{"pages\u3002github.io", -1},
		{"a..github.io", -1},
		{"", -1},
	}
	for _, c := range cases {
		i, ok := MatchHost(c.host, pats)
		if i != c.want || ok != (c.want >= 0) {
			t.Errorf("MatchHost(%q) = %d %v, want %d", c.host, i, ok, c.want)
		}
	}
}

func TestInPrefixes(t *testing.T) {
	t.Parallel()
	nets := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.20.0.0/16")}
	cases := map[string]bool{
		"127.0.0.1":        true,
		"::ffff:127.0.0.1": true,
		"10.20.3.4":        true,
		"10.21.0.1":        false,
		"::1":              false,
		"8.8.8.8":          false,
	}
	for a, want := range cases {
		if got := InPrefixes(netip.MustParseAddr(a), nets); got != want {
			t.Errorf("InPrefixes(%s) = %v, want %v", a, got, want)
		}
	}
	if InPrefixes(netip.Addr{}, nets) {
		t.Error("invalid address in prefixes")
	}
}

// TestWildcardIsSubdomainsOnly: "*.github.io" matches names below
// github.io and nothing else: not github.io itself, not a name that merely
// ends in the same letters, not a name that only contains it.
func TestWildcardIsSubdomainsOnly(t *testing.T) {
	t.Parallel()
	pats := []string{"*.github.io"}
	for host, want := range map[string]bool{
		"a.github.io":       true,
		"A.GitHub.IO.":      true,
		"x.y.github.io:443": true,
		"github.io":         false,
		"github.io.":        false,
		".github.io":        false,
		"evilgithub.io":     false,
		"a.evilgithub.io":   false,
		"github.io.evil":    false,
		"a.github.io.evil":  false,
		"agithub.io":        false,
		"github.iox":        false,
	} {
		i, ok := MatchHost(host, pats)
		if ok != want || (ok && i != 0) || (!ok && i != -1) {
			t.Errorf("MatchHost(%q, *.github.io) = %d %v, want %v", host, i, ok, want)
		}
	}
}
