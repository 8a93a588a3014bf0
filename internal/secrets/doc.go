// Package secrets is the secrets broker of a run: the org declares
// secrets (config.yaml secrets:, never a harness, remote content or a
// repository layer), a harness asks for them by name, and the sandbox only
// ever sees a per-run random placeholder for each. The egress proxy
// (package egress) asks the Broker, for every request it can read, to swap
// placeholders for real values; this package owns that rule, and nothing
// else may re-implement it.
//
// SECURITY: this file set decides where a real secret value may go.
// Changes need a reviewer who owns the egress proxy.
//
// # The swap rule
//
// A request to HOST:PORT is rewritten by Rewrite only in its header
// fields (names stay as they are; any field: Authorization, x-api-key,
// private ones): every placeholder of a secret whose hosts match HOST:PORT
// is replaced by the real value, also inside an "Authorization: Basic"
// credential (the base64 of user:password that git and curl send for
// https://user:TOKEN@host URLs), which is decoded, rewritten and encoded
// again. A host entry is "host" or "host:port" with netguard.MatchHost
// patterns ("*.x" covers subdomains only); an entry without a port matches
// 443 only. The real value leaves only over TLS verified against the
// broker's upstream roots, or in plain http to a loopback host service of
// the runner (Plain reports which). Placeholders are matched
// case-sensitively, as the exact bytes the sandbox was given.
//
// Everything else is a Refusal: a placeholder in a header field to a
// destination that is not one of its secret's hosts, in a header field
// name, in the request target (path, query), or in a request body
// (NewBodyScanner, which holds back only the bytes that could begin a
// placeholder, so a stream is not delayed). The proxy answers a refused
// request with 403 and records a critical finding; the real value is never
// part of a Refusal, a log line or an error of this package.
//
// Responses are scrubbed the other way (ScrubHeader, NewScrubber): a real
// value an upstream echoes back reaches the sandbox as the placeholder.
//
// # The run CA
//
// Authority is the per-run certificate authority the proxy presents to
// the sandbox for the secret hosts it terminates: an ECDSA P-256 key
// generated in memory (never written anywhere, gone with the process), a
// CA certificate name-constrained to the secret hosts, and short-lived
// ECDSA P-256 leaf certificates, one per host, issued on demand. The
// sandbox trusts it through a CA bundle file (system roots + the run CA)
// named by SSL_CERT_FILE, NODE_EXTRA_CA_CERTS, REQUESTS_CA_BUNDLE,
// CURL_CA_BUNDLE and GIT_SSL_CAINFO (CAEnv).
package secrets
