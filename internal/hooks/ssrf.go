package hooks

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/netguard"
)

// The SSRF hook looks for addresses in tool inputs and classifies them with
// internal/netguard (the one place that knows the internal ranges). It never
// resolves names: a hostname that is not an IP literal is refused only when
// it is obviously internal (localhost, *.internal, single-label names in
// URLs, wildcard-DNS names embedding an IP). In Bash commands, URLs and
// /dev/tcp paths count anywhere, bare addresses ("nc 10.0.0.1 22") only when
// the command runs a network client. The sandbox's network allowlist is the
// enforcing control; this hook stops the attempt early and tells the model
// why.

var (
	// scheme://authority
	urlRe = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.\-]{0,15}://([^\s'"<>()\x60|;&{}\\]+)`)
	// bash's /dev/tcp/HOST/PORT and /dev/udp/HOST/PORT
	devTCPRe = regexp.MustCompile(`/dev/(?:tcp|udp)/([^/\s'"]+)/`)
	// token separators for bare addresses in commands
	tokenSep = regexp.MustCompile(`[\s'"\x60=,;|&()<>{}]+`)
	// programs whose arguments name hosts
	netClientRe = regexp.MustCompile(`\b(?:curl|wget|nc|ncat|netcat|telnet|ssh|scp|sftp|rsync|ftp|socat|nmap|ping|dig|nslookup|host|http|https|xh|git|openssl|mysql|psql|redis-cli|mongo|mongosh|ldapsearch|grpcurl|aria2c)\b`)
)

func checkSSRF(_ context.Context, in *Input, env *Env) (Verdict, error) {
	allowed := splitList(env.getenv(EnvAllowedServices))
	var cands []candidate
	switch in.ToolName {
	case "WebFetch":
		u := in.inputString("url")
		cands = append(cands, urlCandidates(u)...)
		if len(cands) == 0 && u != "" {
			// a URL without a scheme: classify its authority.
			cands = append(cands, candidate{authority(u), true})
		}
	case "Bash":
		// URLs count anywhere; bare addresses only next to a network client
		// (so `grep 127.0.0.1 config/` is not an SSRF attempt).
		cmd := in.inputString("command")
		cands = append(cands, textCandidates(cmd, netClientRe.MatchString(deobfuscate(cmd)))...)
	default:
		for _, s := range jsonStrings(in.ToolInput) {
			cands = append(cands, textCandidates(s, true)...)
		}
	}
	for _, c := range cands {
		if v, bad := classifyHost(c, allowed); bad {
			v.Reason = fmt.Sprintf("%s blocked: %s. Internal networks and cloud metadata endpoints are not reachable from this sandbox; use only the public endpoints your task needs.", in.ToolName, v.Reason)
			return v, nil
		}
	}
	return Verdict{}, nil
}

// candidate is a host[:port] found in text; url is true when it came from a
// URL (then loose numeric forms and single-label names count as addresses).
type candidate struct {
	hostport string
	url      bool
}

func urlCandidates(s string) []candidate {
	var out []candidate
	for _, m := range urlRe.FindAllStringSubmatch(s, -1) {
		out = append(out, candidate{authority(m[1]), true})
	}
	return out
}

func textCandidates(s string, bare bool) []candidate {
	out := urlCandidates(s)
	for _, m := range devTCPRe.FindAllStringSubmatch(s, -1) {
		out = append(out, candidate{m[1], true})
	}
	if !bare {
		return out
	}
	rest := urlRe.ReplaceAllString(s, " ")
	for _, tok := range tokenSep.Split(rest, -1) {
		tok = strings.TrimLeft(tok, "-")
		if tok == "" {
			continue
		}
		out = append(out, candidate{authority(tok), false})
	}
	return out
}

// authority cuts s (an authority followed by path/query) to host[:port],
// dropping userinfo.
func authority(s string) string {
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndex(s, "@"); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// splitHostPort splits host[:port] / [v6][:port]; port may be "".
func splitHostPort(hp string) (host, port string) {
	if strings.HasPrefix(hp, "[") {
		if i := strings.Index(hp, "]"); i > 0 {
			host, rest := hp[1:i], hp[i+1:]
			return host, strings.TrimPrefix(rest, ":")
		}
		return hp, ""
	}
	if strings.Count(hp, ":") == 1 {
		i := strings.Index(hp, ":")
		return hp[:i], hp[i+1:]
	}
	return hp, ""
}

// classifyHost reports whether c names an internal or metadata destination.
func classifyHost(c candidate, allowed []string) (Verdict, bool) {
	host, port := splitHostPort(c.hostport)
	host = strings.TrimSuffix(strings.ToLower(pctDecode(host)), ".")
	if host == "" {
		return Verdict{}, false
	}
	for _, a := range allowed {
		if strings.EqualFold(a, c.hostport) {
			return Verdict{}, false
		}
	}
	if netguard.IsMetadata(host) {
		return Verdict{Block: true, Rule: "ssrf.metadata", Reason: fmt.Sprintf("%q is a cloud metadata endpoint", host)}, true
	}
	addr, ok := parseAddr(host, c.url)
	if ok {
		addr = addr.WithZone("")
		if netguard.IsMetadata(addr.String()) || netguard.IsMetadata(addr.Unmap().String()) {
			return Verdict{Block: true, Rule: "ssrf.metadata", Reason: fmt.Sprintf("%q is a cloud metadata address", host)}, true
		}
		if bad, why := netguard.IsInternal(addr); bad {
			return Verdict{Block: true, Rule: "ssrf.internal", Reason: fmt.Sprintf("%q is an internal address (%s)", host, why)}, true
		}
		return Verdict{}, false
	}
	if name, why := internalName(host, c.url, port != ""); name {
		return Verdict{Block: true, Rule: "ssrf.internal-name", Reason: fmt.Sprintf("%q %s", host, why)}, true
	}
	return Verdict{}, false
}

// internalName recognises obviously internal host names without resolving.
func internalName(host string, fromURL, hasPort bool) (bool, string) {
	if !validHostName(host) {
		return false, ""
	}
	// Bare words in a command are names only with a port (curl localhost:80).
	if !fromURL && !hasPort {
		return false, ""
	}
	switch {
	case host == "localhost" || strings.HasSuffix(host, ".localhost") || host == "localhost.localdomain" ||
		host == "ip6-localhost" || host == "ip6-loopback":
		return true, "is a loopback name"
	case host == "localtest.me" || strings.HasSuffix(host, ".localtest.me") || host == "lvh.me" || strings.HasSuffix(host, ".lvh.me"):
		return true, "is a public name that resolves to loopback"
	case strings.HasSuffix(host, ".internal") || strings.HasSuffix(host, ".local") ||
		strings.HasSuffix(host, ".cluster.local") || strings.HasSuffix(host, ".svc") || host == "instance-data":
		return true, "is an internal name"
	}
	for _, suf := range []string{".nip.io", ".sslip.io", ".xip.io"} {
		if strings.HasSuffix(host, suf) {
			if a, ok := embeddedIP(strings.TrimSuffix(host, suf)); ok {
				if bad, why := netguard.IsInternal(a); bad || netguard.IsMetadata(a.String()) {
					if why == "" {
						why = "metadata"
					}
					return true, "is a wildcard-DNS name for an internal address (" + why + ")"
				}
			}
		}
	}
	if fromURL && !strings.Contains(host, ".") {
		return true, "is a single-label name (resolved through internal search domains)"
	}
	return false, ""
}

// embeddedIP finds the trailing dotted or dashed IPv4 in a wildcard-DNS label
// sequence ("app.10.0.0.1", "10-0-0-1", "app-127-0-0-1").
func embeddedIP(s string) (netip.Addr, bool) {
	s = strings.ReplaceAll(s, "-", ".")
	parts := strings.Split(s, ".")
	if len(parts) < 4 {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(strings.Join(parts[len(parts)-4:], "."))
	return a, err == nil
}

func validHostName(h string) bool {
	if len(h) == 0 || len(h) > 253 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return h[0] != '.' && h[0] != '-'
}

// parseAddr parses an IP literal. IPv6 literals and canonical dotted quads
// always count; in URLs the inet_aton forms curl and browsers accept
// (2130706433, 0x7f000001, 0177.1, 127.1) count too. Outside URLs a dotted
// form needs all four parts, so "sleep 0.5" is not an address.
func parseAddr(host string, fromURL bool) (netip.Addr, bool) {
	if i := strings.IndexByte(host, '%'); i >= 0 && strings.Contains(host, ":") {
		host = host[:i] // zone
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a, true
	}
	if !fromURL && strings.Count(host, ".") != 3 {
		return netip.Addr{}, false
	}
	return parseInetAton(host)
}

// parseInetAton parses the 1-4 part numeric IPv4 forms (decimal, 0x hex,
// leading-zero octal); the last part fills the remaining bytes.
func parseInetAton(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		if p == "" {
			return netip.Addr{}, false
		}
		base := 10
		digits := p
		switch {
		case strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X"):
			base, digits = 16, p[2:]
			if digits == "" {
				digits = "0"
			}
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		v, err := strconv.ParseUint(digits, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	last := len(vals) - 1
	for i := 0; i < last; i++ {
		if vals[i] > 0xff {
			return netip.Addr{}, false
		}
		n |= vals[i] << (8 * (3 - i))
	}
	if vals[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	n |= vals[last]
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// pctDecode decodes %XX escapes (hosts like %31%32%37.0.0.1).
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
