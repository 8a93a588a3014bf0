package gateway

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/fetch/fetchtest"
	"github.com/fullsend-ai/fullsend/internal/secrets"
	"github.com/fullsend-ai/fullsend/internal/syncbuf"
)

// TestGatewaySecrets: a run token that carries the run's sealed secrets
// makes the gateway swap the placeholder for the value on the way to the
// secret's host (TLS terminated with the run CA, the upstream verified);
// the token holds neither value nor placeholder in clear; a token without
// secrets swaps nothing; the placeholder towards another host is refused.
func TestGatewaySecrets(t *testing.T) {
	const real = "ghp_REAL_gateway_value_0123456789"
	got := make(chan string, 10)
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		io.WriteString(w, "ok")
	}))
	defer up.Close()
	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
	lo := netip.MustParseAddr("127.0.0.1")
	log := &syncbuf.Buffer{}
	g, err := New(Config{
		Key: testKey, AllowedPrivateNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Resolver: fetchtest.Hosts{"example.com": {lo}, "other.test": {lo}}, Log: log,
		Now: func() time.Time { return t0.Add(time.Minute) },
	})
	if err != nil {
		t.Fatal(err)
	}
	addr := fetchtest.Serve(t, g)
	upPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: up.Certificate().Raw})
	b, err := secrets.New([]secrets.Secret{{Name: "GH_TOKEN", Value: real, Hosts: []string{"example.com:" + port}}}, secrets.Options{ExtraRootsPEM: upPEM})
	if err != nil {
		t.Fatal(err)
	}
	ph := b.Env()["GH_TOKEN"]
	sealed, err := b.Seal(SealKey(testKey))
	if err != nil {
		t.Fatal(err)
	}
	allow := []string{"example.com:" + port, "other.test:" + port}
	tok, err := MintWithSecrets(testKey, "run-s", allow, sealed, t0, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tok, real) || strings.Contains(tok, ph) {
		t.Fatal("the token holds a value or placeholder in clear")
	}
	client := func(tok string) *http.Client {
		pu, err := ProxyURL(addr, tok)
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(pu)
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(b.CA().PEM())
		roots.AddCert(up.Certificate())
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: &tls.Config{RootCAs: roots}}}
	}
	do := func(c *http.Client, u string) int {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Authorization", "token "+ph)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	c := client(tok)
	for range 2 { // the second request reuses the cached broker
		if code := do(c, "https://example.com:"+port+"/user"); code != 200 {
			t.Fatalf("%d\n%s", code, log.String())
		}
		if a := <-got; a != "token "+real {
			t.Fatalf("upstream got %q", a)
		}
	}
	// The placeholder over plain http to another allowed host: refused.
	if code := do(c, "http://other.test:"+port+"/steal"); code != http.StatusForbidden {
		t.Fatalf("other host: %d", code)
	}
	// A token without secrets: no interception, the placeholder stays.
	plain, err := Mint(testKey, "run-p", allow, t0, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if code := do(client(plain), "https://example.com:"+port+"/user"); code != 200 {
		t.Fatal(code)
	}
	if a := <-got; a != "token "+ph {
		t.Fatalf("without secrets the upstream got %q", a)
	}
	// A sealed claim the gateway cannot open refuses the request.
	bad, err := MintWithSecrets(testKey, "run-b", allow, []byte("not sealed by this key, at all"), t0, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if code := do(client(bad), "http://other.test:"+port+"/x"); code != http.StatusProxyAuthRequired {
		t.Fatalf("bad sealed claim: %d", code)
	}
	if strings.Contains(log.String(), real) {
		t.Fatal("the value in the gateway log")
	}
}
