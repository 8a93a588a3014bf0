package netguard

import (
	"net/netip"
	"strings"
	"testing"
)

// TestCheckAddr pins the address rule with its exemptions: internal ranges
// (every embedded form) are refused unless allowed lists them; metadata
// addresses are refused even when allowed lists their range; invalid and
// zoned addresses are refused whatever allowed says.
func TestCheckAddr(t *testing.T) {
	t.Parallel()
	private := []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"),
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("fe80::/10"),
	}
	all := []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}
	tests := []struct {
		addr    string
		allowed []netip.Prefix
		want    Class
		why     string // substring
	}{
		{"8.8.8.8", nil, Reachable, ""},
		{"2606:4700:4700::1111", nil, Reachable, ""},
		{"127.0.0.1", nil, Internal, "loopback (127.0.0.0/8)"},
		{"127.0.0.1", private, Reachable, ""},
		{"::ffff:127.0.0.1", private, Reachable, ""},
		{"::ffff:127.0.0.1", nil, Internal, "IPv4-mapped loopback"},
		{"::1", private, Internal, "loopback (::1)"},
		{"10.1.2.3", nil, Internal, "private (10.0.0.0/8)"},
		{"10.1.2.3", private, Reachable, ""},
		{"192.168.1.1", private, Internal, "192.168.0.0/16"},
		{"64:ff9b::a00:1", nil, Internal, "NAT64 private"},
		{"2002:7f00:1::", nil, Internal, "6to4 loopback"},
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", nil, Internal, "Teredo"},
		{"169.254.1.1", nil, Internal, "link-local"},
		{"169.254.169.254", nil, Metadata, "metadata"},
		{"169.254.169.254", all, Metadata, "metadata"},
		{"::ffff:169.254.169.254", all, Metadata, "metadata"},
		{"64:ff9b::a9fe:a9fe", all, Metadata, "metadata"},
		{"fd00:ec2::254", all, Metadata, "metadata"},
		{"100.100.100.200", all, Metadata, "metadata"},
		{"fe80::1", private, Reachable, ""},
		{"fe80::1%eth0", private, Internal, "zone eth0"},
		{"fe80::1%eth0", all, Internal, "zone eth0"},
		{"2001:4860::1%eth0", nil, Internal, "zone eth0"},
		{"8.8.8.8", all, Reachable, ""},
	}
	for _, tc := range tests {
		got, why := CheckAddr(netip.MustParseAddr(tc.addr), tc.allowed)
		if got != tc.want || !strings.Contains(why, tc.why) || (got == Reachable) != (why == "") {
			t.Errorf("CheckAddr(%s, %v) = %d %q; want %d %q", tc.addr, tc.allowed, got, why, tc.want, tc.why)
		}
	}
	if got, _ := CheckAddr(netip.Addr{}, all); got != Internal {
		t.Errorf("CheckAddr(invalid) = %d, want Internal (fail closed)", got)
	}
}
