package hooks

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/lazyre"
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
	urlRe = lazyre.New(`(?i)\b[a-z][a-z0-9+.\-]{0,15}://([^\s'"<>()\x60|;&{}\\]+)`)
	// bash's /dev/tcp/HOST/PORT and /dev/udp/HOST/PORT
	devTCPRe = lazyre.New(`/dev/(?:tcp|udp)/([^/\s'"]+)/`)
	// token separators for bare addresses in commands
	tokenSep = lazyre.New(`[\s'"\x60=,;|&()<>{}]+`)
	// programs whose arguments name hosts
	netClientRe = lazyre.New(`\b(?:curl|wget|nc|ncat|netcat|telnet|ssh|scp|sftp|rsync|ftp|socat|nmap|ping|dig|nslookup|host|http|https|xh|git|openssl|mysql|psql|redis-cli|mongo|mongosh|ldapsearch|grpcurl|aria2c)\b`)
)

func checkSSRF(_ context.Context, in *Input, env *Env) (Verdict, error) {
	allowed := splitList(env.getenv(EnvAllowedServices))
	var cands []candidate
	var private []netip.Prefix
	switch in.ToolName {
	case "WebFetch":
		u := in.inputString("url")
		if env != nil {
			private = env.WebFetchPrivateNetworks
		}
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
		if v, bad := classifyHost(c, allowed, private); bad {
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

// classifyHost reports whether c names an internal or metadata destination;
// addresses inside private are not internal. Host parsing and every address
// and name rule are internal/netguard's.
func classifyHost(c candidate, allowed []string, private []netip.Prefix) (Verdict, bool) {
	host, port, ok := netguard.SplitAuthority(c.hostport)
	if !ok {
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
	addr, ok := netguard.HostAddr(host)
	// Outside URLs a dotted IPv4 needs all four parts, so "sleep 0.5" or
	// "sleep 2130706433" is not an address.
	if ok && !c.url && addr.Is4() && strings.Count(host, ".") != 3 {
		ok = false
	}
	if ok {
		// Exemptions: the exact host:port entries of EnvAllowedServices
		// (above) and, for WebFetch in the native runtime, the ranges its
		// host-side client admits; the sandbox's proxy enforces the rest.
		switch class, why := netguard.CheckAddr(addr, private); class {
		case netguard.Metadata:
			return Verdict{Block: true, Rule: "ssrf.metadata", Reason: fmt.Sprintf("%q is a cloud metadata address", host)}, true
		case netguard.Internal:
			return Verdict{Block: true, Rule: "ssrf.internal", Reason: fmt.Sprintf("%q is an internal address (%s)", host, why)}, true
		}
		return Verdict{}, false
	}
	// Bare words in a command are names only with a port (curl localhost:80).
	if !c.url && port == "" {
		return Verdict{}, false
	}
	if bad, why := netguard.InternalName(host); bad {
		return Verdict{Block: true, Rule: "ssrf.internal-name", Reason: fmt.Sprintf("%q is %s", host, why)}, true
	}
	if c.url && !strings.Contains(host, ".") && netguard.IsHostName(host) {
		return Verdict{Block: true, Rule: "ssrf.internal-name", Reason: fmt.Sprintf("%q is a single-label name (resolved through internal search domains)", host)}, true
	}
	return Verdict{}, false
}
