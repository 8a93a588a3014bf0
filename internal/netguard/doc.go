// Package netguard is the single place where fullsend decides whether an
// address or host name is internal, a cloud metadata endpoint, or matched by
// an allowed_domains pattern.
//
// SECURITY: these are pure functions (no DNS, no I/O) used by the fetch
// client, the scanners, the tool hooks, the sandbox proxy and the runtime
// fetch service. Do not classify IPs or match host patterns anywhere else; a
// change here changes what fullsend will connect to.
//
// # The address rule
//
// CheckAddr is the one decision whether an address may be reached, with its
// exemptions, and every caller applies it rather than combining the
// functions below itself: a cloud metadata address (IsMetadata, in any
// embedded form) is refused always, even inside allowed_private_networks;
// an invalid address or one with an IPv6 zone is refused always; an
// internal address (IsInternal) is refused unless it lies in one of the
// allowed networks (InPrefixes, the allowed_private_networks exemption);
// everything else may be reached. Callers that resolve names (the fetch
// client, the sandbox proxy) refuse a metadata host name first and apply
// CheckAddr to every answer; callers that read hosts in text (the SSRF
// scanner, the tool hooks) apply it to the address a host spells out
// (HostAddr, EmbeddedDNSAddr) and judge other names with InternalName.
// The hooks pass no exemptions; the others pass the org's
// allowed_private_networks.
//
// # Internal addresses
//
// IsInternal reports true for: 0.0.0.0/8, 127.0.0.0/8, 10.0.0.0/8,
// 172.16.0.0/12, 192.168.0.0/16, 192.0.0.0/24, 100.64.0.0/10, 169.254.0.0/16,
// 198.18.0.0/15, 224.0.0.0/4, 240.0.0.0/4 (which includes 255.255.255.255),
// ::, ::1, fc00::/7, fe80::/10, fec0::/10, ff00::/8, 100::/64, 64:ff9b:1::/48,
// all of Teredo (2001::/32, a tunnel to the IPv4 addresses it embeds), and
// any IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64
// (64:ff9b::a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d), 6to4
// (2002:AABB:CCDD::) or ISATAP (PREFIX::[2]00:5efe:a.b.c.d) form of an
// internal IPv4 address. The reason names the form and the IPv4 range
// (Teredo's client address, stored inverted, included), so IsMetadata also
// sees a metadata address behind any of these forms. Invalid addresses are
// internal (fail closed).
//
// # Hosts as written
//
// SplitAuthority, HostName, HostAddr, EmbeddedDNSAddr, InternalName and
// IsHostName are the one parser from a host seen in text or a URL to what a
// client would connect to; callers never re-parse hosts. HostAddr accepts
// every literal some client dials without DNS: IPv6 (bracketed, zoned,
// IPv4-mapped), dotted quads and the inet_aton forms (2130706433,
// 0x7f000001, 0x7f.1, 0177.0.0.1, 127.1, "0x" = 0), after one round of
// percent-decoding and with trailing dots removed. EmbeddedDNSAddr reads the
// address that nip.io, sslip.io, xip.io and traefik.me names spell out
// (dotted, dashed, 8 hex digits, dashed IPv6). InternalName knows the names
// that are internal without resolving (localhost and friends, names public
// DNS points at loopback, *.internal, *.local, *.svc, wildcard-DNS names of
// internal addresses). When in doubt these functions find an address rather
// than miss one: they are used to refuse, never to allow.
//
// # Host patterns
//
// An allowed_domains entry is either an exact host ("github.com", an IPv4
// literal, or an IPv6 literal without brackets) or "*.suffix", which matches
// strict subdomains of suffix only, never suffix itself. Matching ignores case
// and one trailing dot. A wildcard over a single label ("*.com") is rejected.
// A host with surrounding space, an empty label, or any byte other than
// ASCII letters, digits, '-', '_' and '.' (IP literals aside) matches
// nothing, so "\x00x.example.com" cannot pass for a subdomain.
package netguard
