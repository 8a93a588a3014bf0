package fetch

import (
	"regexp"
	"strings"
)

// Redact removes credentials from s, which may be a URL or a whole error or
// log message containing URLs. It is the one redaction function of
// fullsend: every error of this package and every URL written to an audit
// record passes through it.
//
// In every http(s) URL found in s it replaces the userinfo, the value of every
// query parameter not in a short allowlist of forge API parameters, and any
// fragment other than #sha256=... by "REDACTED". Anywhere in s it also
// replaces well-known token shapes (GitHub and GitLab tokens) and the value
// after "Bearer", "token", "Authorization:" and "PRIVATE-TOKEN:".
//
// Redact is idempotent and never lengthens a string that holds no secret.
func Redact(s string) string {
	s = urlRE.ReplaceAllStringFunc(s, redactURL)
	for _, p := range tokenPatterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}

const redacted = "REDACTED"

// urlRE finds URL-like runs: a scheme, "://", then up to the first
// whitespace, quote or angle bracket.
var urlRE = regexp.MustCompile(`(?i)https?://[^\s"'<>]+`)

// safeQueryKeys are query parameters the forge clients send and that carry
// no secret; all others have their value redacted.
var safeQueryKeys = map[string]bool{
	"ref": true, "path": true, "recursive": true, "per_page": true,
	"page": true, "sha": true, "ref_type": true,
}

func redactURL(u string) string {
	// Split off fragment, query, authority without parsing (malformed URLs
	// must be redacted too).
	frag := ""
	if i := strings.IndexByte(u, '#'); i >= 0 {
		u, frag = u[:i], u[i+1:]
	}
	query, hasQuery := "", false
	if i := strings.IndexByte(u, '?'); i >= 0 {
		u, query, hasQuery = u[:i], u[i+1:], true
	}
	i := strings.Index(u, "://") + 3
	rest := u[i:]
	end := strings.IndexByte(rest, '/')
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 && rest[:at] != redacted {
		u = u[:i] + redacted + "@" + rest[at+1:]
	}
	if hasQuery {
		parts := strings.Split(query, "&")
		for j, p := range parts {
			k, _, hasValue := strings.Cut(p, "=")
			if !safeQueryKeys[strings.ToLower(k)] && (hasValue || p != "") {
				if hasValue {
					parts[j] = k + "=" + redacted
				} else {
					parts[j] = redacted
				}
			}
		}
		u += "?" + strings.Join(parts, "&")
	}
	if frag != "" || strings.HasSuffix(u, "#") {
		if !strings.HasPrefix(strings.ToLower(frag), "sha256=") {
			frag = redacted
		}
	}
	if frag != "" {
		u += "#" + frag
	}
	return u
}

var tokenPatterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	// GitHub: classic, OAuth, user-to-server, server-to-server, refresh, fine-grained.
	{regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{16,}`), redacted},
	{regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{16,}`), redacted},
	// GitLab personal, deploy, CI job, OAuth tokens.
	{regexp.MustCompile(`\bgl(?:pat|dt|cbt|oas|rt|ptt|ft)-[A-Za-z0-9_\-]{16,}`), redacted},
	// Header-shaped secrets.
	{regexp.MustCompile(`(?i)\b(authorization|private-token|job-token|x-api-key|api-key|cookie)(\s*[:=]\s*)(?:(?i:bearer|basic|token|digest)\s+)?[^\s,;"']+`), "${1}${2}" + redacted},
	{regexp.MustCompile(`(?i)\b(bearer|token|basic)(\s+)[A-Za-z0-9._~+/=\-]{8,}`), "${1}${2}" + redacted},
}
