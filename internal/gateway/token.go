package gateway

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// MinKeyBytes is the shortest signing key accepted.
const MinKeyBytes = 32

// MaxTTL is the longest lifetime a token may have; the gateway refuses
// tokens whose expiry lies further from their issue time.
const MaxTTL = 24 * time.Hour

// ClockSkew is how far in the future a token's issue time may lie.
const ClockSkew = time.Minute

const (
	tokenPrefix = "v1."
	macContext  = "fullsend-egress-token.v1."
)

// Claims are what a token carries.
type Claims struct {
	Run   string   `json:"run"`
	Allow []string `json:"allow"`
	IAT   int64    `json:"iat"`
	Exp   int64    `json:"exp"`
	// Secrets is the run's secrets broker sealed under SealKey
	// (base64url; package secrets): the secrets the token authorises. The
	// sandbox holds the token, never the seal key.
	Secrets string `json:"secrets,omitempty"`
}

// SealKey is the key that seals a run's secrets for the gateway, derived
// from the signing key (so the gateway needs no second key).
func SealKey(key []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("fullsend-egress-seal.v1"))
	return m.Sum(nil)
}

// ErrToken is wrapped by every token refusal.
var ErrToken = errors.New("egress token refused")

// NewKey returns a fresh random signing key, base64-encoded (std, padded),
// the form ParseKey reads and the Secret holds.
func NewKey() (string, error) {
	b := make([]byte, MinKeyBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("egress signing key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// ParseKey decodes a key written by NewKey (surrounding white space, as a
// file or Secret may add, is ignored).
func ParseKey(s string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("egress signing key: not base64: %w", err)
	}
	if len(k) < MinKeyBytes {
		return nil, fmt.Errorf("egress signing key: %d bytes, want at least %d (fullsend egress-gateway keygen)", len(k), MinKeyBytes)
	}
	return k, nil
}

func mac(key []byte, payload string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(macContext))
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// Mint signs a token for run that admits allow until now+ttl.
func Mint(key []byte, run string, allow []string, now time.Time, ttl time.Duration) (string, error) {
	return MintWithSecrets(key, run, allow, nil, now, ttl)
}

// MintWithSecrets is Mint for a run with secrets: sealed is the run's
// broker sealed under SealKey(key) (nil: none).
func MintWithSecrets(key []byte, run string, allow []string, sealed []byte, now time.Time, ttl time.Duration) (string, error) {
	if len(key) < MinKeyBytes {
		return "", fmt.Errorf("egress token for run %s: signing key shorter than %d bytes", run, MinKeyBytes)
	}
	if ttl <= 0 || ttl > MaxTTL {
		return "", fmt.Errorf("egress token for run %s: lifetime %s outside (0, %s]", run, ttl, MaxTTL)
	}
	for _, a := range allow {
		if _, err := sandbox.ParseAllow(a); err != nil {
			return "", fmt.Errorf("egress token for run %s: %w", run, err)
		}
	}
	if allow == nil {
		allow = []string{}
	}
	c := Claims{Run: run, Allow: allow, IAT: now.Unix(), Exp: now.Add(ttl).Unix()}
	if len(sealed) > 0 {
		c.Secrets = base64.RawURLEncoding.EncodeToString(sealed)
	}
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	p := base64.RawURLEncoding.EncodeToString(b)
	return tokenPrefix + p + "." + base64.RawURLEncoding.EncodeToString(mac(key, p)), nil
}

// Verify checks tok's MAC with key and its lifetime against now, and
// returns its claims. Every error wraps ErrToken and names the reason only
// (never the token).
func Verify(key []byte, tok string, now time.Time) (*Claims, error) {
	bad := func(why string) (*Claims, error) { return nil, fmt.Errorf("%w: %s", ErrToken, why) }
	if tok == "" {
		return bad("missing")
	}
	rest, ok := strings.CutPrefix(tok, tokenPrefix)
	if !ok {
		return bad("not a v1 token")
	}
	p, m, ok := strings.Cut(rest, ".")
	if !ok || strings.Contains(m, ".") {
		return bad("malformed")
	}
	got, err := base64.RawURLEncoding.DecodeString(m)
	if err != nil || !hmac.Equal(got, mac(key, p)) {
		return bad("bad signature")
	}
	b, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return bad("malformed payload")
	}
	var c Claims
	if err := json.Unmarshal(b, &c); err != nil {
		return bad("malformed payload")
	}
	switch {
	case c.Run == "":
		return bad("no run id")
	case c.Exp <= c.IAT || time.Duration(c.Exp-c.IAT)*time.Second > MaxTTL:
		return bad(fmt.Sprintf("run %s: lifetime outside (0, %s]", c.Run, MaxTTL))
	case time.Unix(c.IAT, 0).After(now.Add(ClockSkew)):
		return bad(fmt.Sprintf("run %s: issued in the future", c.Run))
	case !now.Before(time.Unix(c.Exp, 0)):
		return bad(fmt.Sprintf("run %s: expired at %s", c.Run, time.Unix(c.Exp, 0).UTC().Format(time.RFC3339)))
	}
	return &c, nil
}
