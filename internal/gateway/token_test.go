package gateway

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

var (
	testKey  = []byte("0123456789abcdef0123456789abcdef")
	otherKey = []byte("fedcba9876543210fedcba9876543210")
	t0       = time.Unix(1_800_000_000, 0)
)

// sign makes a token with arbitrary claims, bypassing Mint's checks.
func sign(key []byte, c Claims) string {
	b, _ := json.Marshal(c)
	p := base64.RawURLEncoding.EncodeToString(b)
	return tokenPrefix + p + "." + base64.RawURLEncoding.EncodeToString(mac(key, p))
}

func TestMintVerify(t *testing.T) {
	tok, err := Mint(testKey, "r1", []string{"github.com", "*.example.com:8443"}, t0, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Verify(testKey, tok, t0.Add(59*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if c.Run != "r1" || strings.Join(c.Allow, ",") != "github.com,*.example.com:8443" || c.Exp-c.IAT != 3600 {
		t.Fatalf("claims %+v", c)
	}
	if u, err := ProxyURL("http://gw.fullsend.svc:3128", tok); err != nil || u != "http://run:"+tok+"@gw.fullsend.svc:3128" {
		t.Fatalf("ProxyURL = %q, %v", u, err)
	}
}

func TestVerifyRefuses(t *testing.T) {
	good, err := Mint(testKey, "r1", []string{"github.com"}, t0, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p, m, _ := strings.Cut(strings.TrimPrefix(good, tokenPrefix), ".")
	// Same MAC, payload widened to every host.
	wide, _ := json.Marshal(Claims{Run: "r1", Allow: []string{"*.com"}, IAT: t0.Unix(), Exp: t0.Add(time.Hour).Unix()})
	flip := []byte(m)
	if flip[0] == 'A' {
		flip[0] = 'B'
	} else {
		flip[0] = 'A'
	}
	for _, c := range []struct {
		name, tok string
		now       time.Time
		want      string
	}{
		{"missing", "", t0, "missing"},
		{"not v1", "v2." + p + "." + m, t0, "not a v1 token"},
		{"no mac", tokenPrefix + p, t0, "malformed"},
		{"extra part", good + ".x", t0, "malformed"},
		{"tampered payload", tokenPrefix + base64.RawURLEncoding.EncodeToString(wide) + "." + m, t0, "bad signature"},
		{"tampered mac", tokenPrefix + p + "." + string(flip), t0, "bad signature"},
		{"wrong key", sign(otherKey, Claims{Run: "r1", IAT: t0.Unix(), Exp: t0.Add(time.Hour).Unix()}), t0, "bad signature"},
		{"expired", good, t0.Add(time.Hour), "expired"},
		{"future", good, t0.Add(-2 * time.Minute), "issued in the future"},
		{"too long", sign(testKey, Claims{Run: "r1", IAT: t0.Unix(), Exp: t0.Add(MaxTTL + time.Second).Unix()}), t0, "lifetime"},
		{"exp before iat", sign(testKey, Claims{Run: "r1", IAT: t0.Unix(), Exp: t0.Unix()}), t0, "lifetime"},
		{"no run", sign(testKey, Claims{IAT: t0.Unix(), Exp: t0.Add(time.Hour).Unix()}), t0, "no run id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Verify(testKey, c.tok, c.now)
			if !errors.Is(err, ErrToken) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Verify = %v, want ErrToken %q", err, c.want)
			}
		})
	}
}

func TestMintRefuses(t *testing.T) {
	for _, c := range []struct {
		key   []byte
		allow []string
		ttl   time.Duration
	}{
		{testKey[:31], nil, time.Hour},
		{testKey, nil, 0},
		{testKey, nil, MaxTTL + time.Second},
		{testKey, []string{"bad host/"}, time.Hour},
	} {
		if _, err := Mint(testKey[:len(c.key)], "r", c.allow, t0, c.ttl); err == nil {
			t.Errorf("Mint(%d-byte key, %q, %s) succeeded", len(c.key), c.allow, c.ttl)
		}
	}
}

func TestKeys(t *testing.T) {
	k, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseKey(k + "\n")
	if err != nil || len(b) != MinKeyBytes {
		t.Fatalf("ParseKey(NewKey()) = %d bytes, %v", len(b), err)
	}
	if _, err := ParseKey(base64.StdEncoding.EncodeToString(make([]byte, 16))); err == nil {
		t.Fatal("16-byte key accepted")
	}
	if _, err := ParseKey("not base64!"); err == nil {
		t.Fatal("junk key accepted")
	}
	if _, err := New(Config{Key: make([]byte, 8)}); err == nil {
		t.Fatal("gateway with short key")
	}
}

func TestProxyURLRefuses(t *testing.T) {
	for _, g := range []string{"https://gw:3128", "http://u:p@gw:3128", "http://gw:3128/x", "http://"} {
		if _, err := ProxyURL(g, "t"); err == nil {
			t.Errorf("ProxyURL(%q) accepted", g)
		}
	}
}
