// Package egress is the host-side HTTP/CONNECT proxy through which sandboxes
// reach the network when their policy is an allowlist.
//
// It owns one rule: a sandbox may open a connection to HOST:PORT only when
// HOST:PORT matches an allowlist entry (host patterns matched by
// netguard.MatchHost; "*.x" covers subdomains only; an entry without a port
// admits 80 and 443) and every address HOST resolves to passes
// netguard.CheckAddr with the allowed private networks as its exemptions, or
// HOST:PORT is one of the runner's Services. Cloud metadata hosts and
// addresses are always refused, even inside an allowed private network. HOST
// must be an IP literal without a zone or a DNS name in the form package ref
// accepts (ASCII, at most 253 bytes, no legacy numeric IPv4 forms); anything
// else is refused before any lookup. The proxy dials only the addresses it
// vetted, so DNS rebinding between check and dial is impossible.
//
// The destination is the CONNECT request target, or the host of an
// absolute-form http:// URL, which is also the Host the upstream sees; a
// Host header never redirects a request. Origin-form and other schemes are
// refused (400). A request head is read through a MaxHeaderBytes limit.
// Plain-HTTP requests are served one per client connection (no keep-alive)
// and re-serialised from their parsed form, so every request is checked
// and none can be smuggled behind another. Inside a CONNECT tunnel the
// proxy sees nothing: TLS SNI and Host there are the client's business,
// which is why the allowlist names hosts the sandbox may reach at all.
//
// A refusal is answered with 403 and logged as one line
// "deny HOST:PORT: REASON" on the configured log writer; control characters
// from the sandbox are replaced by "?". The reason names the setting that
// would admit the destination: the harness policy's endpoints, the org's
// sandbox.host_services for a loopback endpoint of the runner host, or
// security.remote_resources.allowed_private_networks for another internal
// range.
// A log writer that also implements Recorder receives every decision,
// admitted ones too, as host, port, allow/deny and reason (the run's trace
// records them as span events).
//
// With secrets (Config.Secrets, or per request Config.AuthorizeSecrets),
// the proxy applies the run's secrets broker (package secrets, which owns
// the rule; intercept.go): a CONNECT to a secret's host is terminated (TLS
// with a leaf of the run CA, or plain http for a loopback host service) and
// each request inside is checked, its placeholders swapped in headers, and
// sent upstream with full certificate verification, HTTP/1.1 both ways,
// responses streamed; plain http (absolute-form, or inside any tunnel whose
// first bytes are an HTTP request line) is checked too; anything else in a
// tunnel passes unread. A refused request is answered with 403, logged, and
// passed to a log writer that implements SecretRecorder.
//
// With Config.Authorize (the Kubernetes egress gateway, package gateway)
// the allowlist comes from each request's proxy credentials instead of the
// configuration; a request they do not authorize is answered with 407.
//
// Close cuts every connection, both the sandbox's and the proxy's own to
// the upstream, so a teardown never waits for a slow server.
package egress
