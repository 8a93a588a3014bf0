// Package fetch is the only HTTP client fullsend uses for remote resources.
//
// SECURITY: this file's package decides which network peers fullsend talks
// to. Every remote byte (harnesses, agents, skills, forge API answers) comes
// through Client.Get or Client.GetPinned. Changes to the rules below have
// security consequences and need a second reviewer; no other package may
// open outbound HTTP connections or classify addresses itself.
//
// # Rules, in the order they are applied
//
//  1. The URL is canonicalised by ref.Canonicalize: https only, no userinfo,
//     no "%25", no backslash, no fragment (ErrScheme).
//  2. The host must match Options.AllowedDomains via netguard.MatchHost:
//     exact names, or explicit "*.suffix" for subdomains only (ErrDomain).
//  3. The host is resolved once, through Options.Resolver. If ANY answer is
//     refused by netguard.CheckAddr with Options.AllowedPrivateNetworks as
//     the exemptions (internal in any embedded form and outside them, a
//     scoped address, or a cloud metadata address, never exempt), the fetch
//     fails (ErrInternalAddress). An IP literal host is vetted the same way;
//     a cloud metadata host name is refused before resolving.
//  4. Connections are dialled only to the vetted addresses, each tried in
//     turn; the transport never resolves the name again, and the TLS
//     ServerName stays the host name. Transports are pooled per (host,
//     port, vetted address set), so a reused connection was also dialled to
//     a vetted address. HTTP/2 is used when the server offers it. No proxy
//     from the environment (HTTPS_PROXY, ALL_PROXY, ...) is ever used: it
//     would be dialled instead of the vetted addresses. Certificates are
//     always verified (TLS 1.2 or later); Options.RootCAs, which tests use,
//     only replaces the roots.
//  5. Redirects are never followed: a 3xx is ErrRedirect naming the
//     Location. Any other status but 200 is a *StatusError (ErrStatus) with
//     at most MaxErrorBody bytes of body.
//  6. The whole exchange (lookup, dial, TLS, headers, body) is bounded by
//     Options.Timeout (DefaultTimeout): ErrTimeout.
//  7. The body is read through a limit of MaxSize+1 bytes and fails with
//     ErrTooLarge if it gets them; a large Content-Length fails early, a
//     small one is not trusted. A gzip body the transport asked for is
//     limited after decompression; no other encoding is ever decoded.
//     Response headers, informational (1xx) responses included, are
//     bounded by MaxHeaderBytes; trailers never reach Response.Header.
//  8. GetPinned returns bytes only after their sha256 equals the pin; an
//     empty pin is ErrMissingDigest and no request is made.
//
// The zero Options is the strictest policy: nothing is allowed.
//
// Client.DialContext applies rules 3 and 4 alone, for the one other client
// that speaks a protocol Get cannot (package ocicache, the OCI registry
// cache tier, whose registry host the org configuration names): every
// connection of its transport is dialled through it, so no address is
// reached that these rules refuse.
//
// WebClient (web.go) serves the native runtime's web_fetch tool with the
// same rules 3, 4, 6 and 7, and these differences: plain http is allowed
// besides https (still canonicalised by ref; an https page never redirects
// to http), the host and port must be in the run's egress allowlist
// (WebOptions.Allow, the sandbox policy's entries) instead of
// allowed_domains, a cloud metadata host is refused first, and redirects
// are followed by hand, at most MaxWebHops, every hop vetted afresh
// (scheme, allowlist, addresses) under one timeout for the whole fetch
// (ErrTooManyRedirects past the bound).
//
// # Failures
//
// Every error is an *Error{URL, Err} whose message is one line, "fetch URL:
// reason", and has passed through Redact, so no credential (userinfo, token
// query parameters, Authorization values, forge tokens echoed by a server)
// reaches logs. Callers branch with errors.Is on the sentinels and use
// errors.As with *StatusError to read the status code and headers (forge
// retry logic does).
package fetch
