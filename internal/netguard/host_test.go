package netguard

import (
	"net/netip"
	"strings"
	"testing"
)

// Inputs from internal/hooks (testdata payloads) and internal/scan
// (rules_test.go, TestParseHostIP), plus the obfuscated forms clients accept.
func TestHostAddr(t *testing.T) {
	t.Parallel()
	yes := map[string]string{
		// dotted, IPv6, v4-mapped, brackets, zones
		"127.0.0.1":                "127.0.0.1",
		"10.0.3.7":                 "10.0.3.7",
		"169.254.169.254":          "169.254.169.254",
		"[::1]":                    "::1",
		"::ffff:127.0.0.1":         "::ffff:127.0.0.1",
		"[::ffff:127.0.0.1]":       "::ffff:127.0.0.1",
		"[::ffff:169.254.169.254]": "::ffff:169.254.169.254",
		"[fd00:ec2::254]":          "fd00:ec2::254",
		"fe80::1%eth0":             "fe80::1",
		"[fe80::1%25eth0]":         "fe80::1",
		"FE80::1%25ETH0":           "fe80::1",
		"127.0.0.1.":               "127.0.0.1",
		"127.0.0.1..":              "127.0.0.1",
		// inet_aton: decimal, hex, octal, short forms, mixed
		"2130706433":   "127.0.0.1",
		"2852039166":   "169.254.169.254",
		"0x7f000001":   "127.0.0.1",
		"0X7F000001":   "127.0.0.1",
		"0xa9fea9fe":   "169.254.169.254",
		"0x7f.1":       "127.0.0.1",
		"0177.0.0.1":   "127.0.0.1",
		"0177.1":       "127.0.0.1",
		"127.1":        "127.0.0.1",
		"127.0.1":      "127.0.0.1",
		"10.0x10.1":    "10.16.0.1",
		"0x7f.0.0.01":  "127.0.0.1",
		"017700000001": "127.0.0.1",
		"0":            "0.0.0.0",
		"0x":           "0.0.0.0",
		"0x.0x.0x.0x":  "0.0.0.0",
		"4294967295":   "255.255.255.255",
		// percent-encoded hosts
		"%31%32%37.0.0.1":                "127.0.0.1",
		"%5b::1%5d":                      "::1",
		"%32%31%33%30%37%30%36%34%33%33": "127.0.0.1",
	}
	no := []string{"", "example.com", "localhost", "1.2.3.4.5", "256.1.1.1", "1.256.1.1", "1.2.65536",
		"08.1.1.1", "09", "4294967296", "0x100000000", "1..2.3", ".1.2.3", "+1.2.3.4", "1.2.3.-4",
		"0x7g.1", "1_000", "[::1", "::1]", "127.0.0.1:80", "redis", "0.5m", "v1.2.3", "%zz"}
	checkAddrs(t, "HostAddr", HostAddr, yes, no)
}

// checkAddrs checks that f finds, in each key of yes, the address its value
// spells, and finds no address in any of no.
func checkAddrs(t *testing.T, name string, f func(string) (netip.Addr, bool), yes map[string]string, no []string) {
	t.Helper()
	for in, want := range yes {
		a, ok := f(in)
		if !ok || a.String() != want {
			t.Errorf("%s(%q) = %v, %v; want %s", name, in, a, ok, want)
		}
	}
	for _, in := range no {
		if a, ok := f(in); ok {
			t.Errorf("%s(%q) = %v, want no address", name, in, a)
		}
	}
}

func TestHostName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"GitHub.COM.":                "github.com",
		"%31%32%37.0.0.1":            "127.0.0.1",
		"[::1]":                      "::1",
		"[fe80::1%25eth0]":           "fe80::1",
		"metadata.google.internal..": "metadata.google.internal",
		"%zz.example":                "%zz.example",
	} {
		if got := HostName(in); got != want {
			t.Errorf("HostName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSplitAuthority(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, host, port string }{
		{"127.0.0.1", "127.0.0.1", ""},
		{"0x7f000001:8080", "0x7f000001", "8080"},
		{"user:pw@169.254.169.254", "169.254.169.254", ""},
		{"github.com@127.0.0.1", "127.0.0.1", ""},
		{"a@b@10.0.0.1:22", "10.0.0.1", "22"},
		{"[::ffff:127.0.0.1]:9000", "::ffff:127.0.0.1", "9000"},
		{"[fd00:ec2::254]", "fd00:ec2::254", ""},
		{"[fe80::1%25eth0]:80", "fe80::1", "80"},
		{"::1", "::1", ""},
		{"fe80::1%eth0", "fe80::1", ""},
		{"localhost:2375", "localhost", "2375"},
		{"redis:6379", "redis", "6379"},
		{"127.1:8080", "127.1", "8080"},
		{"%31%32%37.0.0.1", "127.0.0.1", ""},
		{"127.0.0.1%3a80", "127.0.0.1", "80"},
		{"%5b::1%5d:80", "::1", "80"},
		{"Example.COM.:443", "example.com", "443"},
		{"127.0.0.1:8080:80", "127.0.0.1:8080", "80"},
	}
	for _, tt := range tests {
		h, p, ok := SplitAuthority(tt.in)
		if !ok || h != tt.host || p != tt.port {
			t.Errorf("SplitAuthority(%q) = %q, %q, %v; want %q, %q", tt.in, h, p, ok, tt.host, tt.port)
		}
	}
	for _, in := range []string{"", "[::1", "user@", ":80", "[]:80"} {
		if h, p, ok := SplitAuthority(in); ok {
			t.Errorf("SplitAuthority(%q) = %q, %q, true; want not ok", in, h, p)
		}
	}
}

func TestEmbeddedDNSAddr(t *testing.T) {
	t.Parallel()
	yes := map[string]string{
		"127.0.0.1.nip.io":         "127.0.0.1",
		"app.10.0.0.5.nip.io":      "10.0.0.5",
		"10-0-0-1.sslip.io":        "10.0.0.1",
		"app-127-0-0-1.nip.io":     "127.0.0.1",
		"app.10--0-0-1.nip.io":     "10.0.0.1",
		"169.254.169.254.xip.io":   "169.254.169.254",
		"x.192-168-1-1.traefik.me": "192.168.1.1",
		"APP.10.0.0.1.NIP.IO.":     "10.0.0.1",
		"app-7f000001.nip.io":      "127.0.0.1",
		"7f000001.nip.io":          "127.0.0.1",
		"--1.sslip.io":             "::1",
		"fe80--1.sslip.io":         "fe80::1",
		"8.8.8.8.nip.io":           "8.8.8.8",
	}
	checkAddrs(t, "EmbeddedDNSAddr", EmbeddedDNSAddr, yes, []string{"", "nip.io", "app.nip.io", "1.2.3.nip.io",
		"10.0.0.1.example.com", "127.0.0.1", "300.0.0.1.nip.io", "zz-7f00000g.nip.io", "github.com"})
}

func TestInternalName(t *testing.T) {
	t.Parallel()
	yes := map[string]string{
		"localhost":                "loopback name",
		"LOCALHOST.":               "loopback name",
		"app.localhost":            "loopback name",
		"localhost.localdomain":    "loopback name",
		"ip6-localhost":            "loopback name",
		"ip6-loopback":             "loopback name",
		"localtest.me":             "resolves to loopback",
		"a.localtest.me":           "resolves to loopback",
		"lvh.me":                   "resolves to loopback",
		"x.lvh.me":                 "resolves to loopback",
		"internal":                 "internal name",
		"vault.corp.internal":      "internal name",
		"printer.local":            "internal name",
		"redis.default.svc":        "internal name",
		"api.ns.svc.cluster.local": "internal name",
		"instance-data":            "internal name",
		"app.10.0.0.5.nip.io":      "internal address (private",
		"127.0.0.1.nip.io":         "internal address (loopback",
		"10-0-0-1.sslip.io":        "internal address",
		"169.254.169.254.nip.io":   "metadata",
		"--1.sslip.io":             "internal address (loopback",
	}
	for in, want := range yes {
		bad, why := InternalName(in)
		if !bad || !strings.Contains(why, want) {
			t.Errorf("InternalName(%q) = %v, %q; want reason containing %q", in, bad, why, want)
		}
	}
	for _, in := range []string{"", "github.com", "api.github.com", "8.8.8.8.nip.io", "localhost.example.com",
		"internal.example.com", "redis", "svc.example.com", "mylocal", "nip.io"} {
		if bad, why := InternalName(in); bad {
			t.Errorf("InternalName(%q) = true (%s)", in, why)
		}
	}
}

func TestIsHostName(t *testing.T) {
	t.Parallel()
	for _, h := range []string{"redis", "api.github.com", "my_host", "A-1", "x."} {
		if !IsHostName(h) {
			t.Errorf("IsHostName(%q) = false", h)
		}
	}
	for _, h := range []string{"", "$host", "-x", ".x", "a/b", "a b", "x\x00y", strings.Repeat("a", 254)} {
		if IsHostName(h) {
			t.Errorf("IsHostName(%q) = true", h)
		}
	}
}
