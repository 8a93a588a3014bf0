// Package gateway is the fullsend egress gateway for sandboxes that run as
// Kubernetes Pods, and the per-run tokens that tell it what each run may
// reach.
//
// Why a gateway: a NetworkPolicy selects peers by label and CIDR, never by
// host name, so it cannot express "github.com and nothing else". The
// kubernetes backend therefore gives each run's Pod a default-deny
// NetworkPolicy that admits only cluster DNS and this gateway, and the
// gateway applies the host allowlist. The gateway is the same proxy as the
// local backend's (package sandbox/egress: allowlist matching, refusal of
// internal and cloud metadata addresses, dialling only vetted addresses,
// one log line per decision); it only adds the token check in front.
//
// The gateway is stateless. The runner mints a token per run that carries
// the run id, the run's allowlist and an expiry, and hands it to the Pod as
// proxy credentials (HTTPS_PROXY=http://run:TOKEN@GATEWAY:3128). The
// gateway verifies it on every request and applies the allowlist inside;
// a missing, malformed, tampered, expired or over-long-lived token is
// refused with 407 and the refusal is logged.
//
// Token format (version 1), all parts unpadded base64url so the token is
// valid URL userinfo:
//
//	v1.PAYLOAD.MAC
//	PAYLOAD = base64url(JSON {"run": ID, "allow": [HOST[:PORT]...], "iat": UNIX, "exp": UNIX})
//	MAC     = base64url(HMAC-SHA256(key, "fullsend-egress-token.v1." + PAYLOAD))
//
// HMAC-SHA256 rather than Ed25519: both ends are ours and both need the
// same Secret (the runner to sign, the gateway to check), so a signature's
// one advantage, a verifier that cannot mint, buys nothing here: a
// compromised gateway can already reach whatever it likes. HMAC keeps the
// token short enough for an environment variable and the key a single
// random string, and the check is a constant-time compare. Keys are at
// least 32 random bytes (`fullsend egress-gateway keygen`). A token lives
// at most MaxTTL, so a leaked one is short-lived; it is not bound to the
// Pod's address (unknown when it is minted), which is why the per-run
// NetworkPolicy and the expiry matter.
//
// What gVisor adds: the Pod's runtimeClassName (e.g. gvisor) puts a user-
// space kernel between the agent and the node's kernel, so a kernel bug
// reachable from the sandbox's system calls does not compromise the node.
// It changes nothing about egress: that is the NetworkPolicy and this
// gateway.
package gateway
