package scan

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"

	"github.com/fullsend-ai/fullsend/internal/netguard"
)

// Rule ids of the ssrf-in-content scanner.
const (
	RuleSSRFMetadata = "ssrf/metadata-endpoint"
	RuleSSRFInternal = "ssrf/internal-address"
)

type ssrfScanner struct{ allowed []netip.Prefix }

// NewSSRFScanner returns the scanner for URLs in content that point at cloud
// metadata endpoints (critical) or other internal addresses (warning; none
// for addresses inside allowed). It never resolves or fetches anything: host
// names are judged by name, IP literals in every notation a URL parser might
// accept (dotted, decimal, hex, octal, short forms, IPv6, v4-mapped).
// Address classes come from internal/netguard.
func NewSSRFScanner(allowed []netip.Prefix) Scanner { return ssrfScanner{allowed} }

func (ssrfScanner) Name() string { return "ssrf" }

func (s ssrfScanner) Scan(ctx context.Context, content []byte, m Meta) ([]Finding, error) {
	var out []Finding
	var ln *lines
	var caps ruleCap
	for off := 0; ; {
		i := bytes.Index(content[off:], []byte("://"))
		if i < 0 {
			break
		}
		sep := off + i
		off = sep + 3
		// scheme: letters, digits, + - . before "://", starting with a letter
		ss := sep
		for ss > 0 && isSchemeByte(content[ss-1]) {
			ss--
		}
		for ss < sep && !isAlpha(content[ss]) {
			ss++
		}
		if ss == sep {
			continue
		}
		ae := sep + 3
		for ae < len(content) && !authorityEnd(content[ae]) {
			ae++
		}
		authority := string(content[sep+3 : ae])
		host, _, ok := netguard.SplitAuthority(authority)
		if !ok {
			continue
		}
		rule, sev, why := s.judge(host)
		if rule == "" || !caps.take(rule) {
			continue
		}
		if ln == nil {
			ln = newLines(content)
		}
		line, col := ln.pos(ss)
		out = append(out, Finding{Scanner: "ssrf", Rule: rule, Severity: sev, Path: m.Path, Line: line, Column: col,
			Message: fmt.Sprintf("URL points at %s (%s); reported, not fetched", why, visibleString(host)),
			Excerpt: ln.excerpt(ss, ae)})
		caps.keep(out[len(out)-1])
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return append(out, caps.summaries()...), nil
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isSchemeByte(c byte) bool {
	return isAlpha(c) || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}

// authorityEnd reports whether c ends a URL authority in running text.
func authorityEnd(c byte) bool {
	switch c {
	case '/', '?', '#', '\\', '"', '\'', '<', '>', '(', ')', '{', '}', '|', '^', '`', ' ', '\t', '\n', '\r', ',', ';', '*':
		return true
	}
	return c < 0x20 || c == 0x7f
}

// judge classifies a host: the rule, severity and a reason, or "" for
// nothing to report.
func (s ssrfScanner) judge(host string) (string, Severity, string) {
	if netguard.IsMetadata(host) {
		return RuleSSRFMetadata, Critical, "a cloud metadata endpoint"
	}
	a, isIP := netguard.HostAddr(host)
	if !isIP {
		// wildcard-DNS services that answer with the IP written in the name
		a, isIP = netguard.EmbeddedDNSAddr(host)
	}
	if isIP {
		switch class, why := netguard.CheckAddr(a, s.allowed); class {
		case netguard.Metadata:
			return RuleSSRFMetadata, Critical, why
		case netguard.Internal:
			return RuleSSRFInternal, Warning, "an internal address: " + why
		}
		return "", Info, ""
	}
	if bad, why := netguard.InternalName(host); bad {
		return RuleSSRFInternal, Warning, why
	}
	return "", Info, ""
}
