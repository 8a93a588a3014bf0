package egress_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/fetch/fetchtest"
	"github.com/fullsend-ai/fullsend/internal/sandbox/egress"
	"github.com/fullsend-ai/fullsend/internal/syncbuf"
)

var res = fetchtest.Hosts{
	"api.github.com":     {netip.MustParseAddr("140.82.112.6")},
	"a.example.com":      {netip.MustParseAddr("93.184.216.34")},
	"example.com":        {netip.MustParseAddr("93.184.216.34")},
	"rebind.example.com": {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.0.0.5")},
	"mapped.example.com": {netip.MustParseAddr("::ffff:127.0.0.1")},
	"local.test":         {netip.MustParseAddr("127.0.0.1")},
	"corp.test":          {netip.MustParseAddr("10.1.2.3")},
}

func TestCheck(t *testing.T) {
	expectChecks(t, egress.Config{
		Allow:                  []string{"api.github.com", "*.example.com:8443", "*.example.com", "local.test:9000", "corp.test:443"},
		Services:               []string{"127.0.0.1:7777"},
		AllowedPrivateNetworks: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")},
		Resolver:               res,
	}, []checkCase{
		{"api.github.com", 443, ""},
		{"API.GITHUB.COM.", 80, ""},
		{"api.github.com", 22, "not in the sandbox allowlist"},
		{"a.example.com", 8443, ""},
		{"a.example.com", 443, ""},
		{"example.com", 443, "not in the sandbox allowlist"}, // "*." = subdomains only
		{"rebind.example.com", 443, "internal address 10.0.0.5"},
		{"mapped.example.com", 443, "internal address"},
		{"local.test", 9000, "internal address"},
		{"corp.test", 443, ""},  // allowed private network
		{"127.0.0.1", 7777, ""}, // runner service
		{"127.0.0.1", 7778, "not in the sandbox allowlist"},
		{"169.254.169.254", 80, "metadata"},
		{"metadata.google.internal", 80, "metadata"},
		{"nosuch.example.com", 443, "resolve"},
	})
}

// checkCase is one Check call: the destination and a substring of the
// denial, "" when the destination must be allowed.
type checkCase struct {
	host string
	port int
	deny string
}

// expectChecks runs Check, on a proxy made from cfg, for every case: an
// allowed case must pass, a denied one must fail with a *egress.Denial
// containing deny.
func expectChecks(t *testing.T, cfg egress.Config, cases []checkCase) {
	t.Helper()
	p, err := egress.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		_, err := p.Check(context.Background(), c.host, c.port)
		if c.deny == "" {
			if err != nil {
				t.Errorf("%q:%d denied: %v", c.host, c.port, err)
			}
			continue
		}
		var d *egress.Denial
		if err == nil || !errors.As(err, &d) || !strings.Contains(err.Error(), c.deny) {
			t.Errorf("%q:%d: %v, want denial containing %q", c.host, c.port, err, c.deny)
		}
	}
}

// startProxy serves a proxy made from c on a loopback listener until the
// test ends and returns it with its address.
func startProxy(t *testing.T, c egress.Config) (*egress.Proxy, string) {
	t.Helper()
	p, err := egress.New(c)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(ln)
	t.Cleanup(func() { p.Close() })
	return p, ln.Addr().String()
}

// TestServe drives the proxy over a real listener: plain HTTP, CONNECT, a
// denial (logged with host and port) and one request per connection.
func TestServe(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "upstream "+r.URL.Path) }))
	defer up.Close()
	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
	var log syncbuf.Buffer
	_, addr := startProxy(t, egress.Config{
		Allow: []string{"ok.test:" + port}, AllowedPrivateNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Resolver: fetchtest.Hosts{"ok.test": {netip.MustParseAddr("127.0.0.1")}, "no.test": {netip.MustParseAddr("127.0.0.1")}},
		Log:      &log,
	})
	roundTrip := func(req string) string {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, req)
		b, _ := io.ReadAll(c)
		return string(b)
	}
	if got := roundTrip("GET http://ok.test:" + port + "/x HTTP/1.1\r\nHost: ok.test:" + port + "\r\n\r\n"); !strings.Contains(got, "upstream /x") {
		t.Errorf("plain HTTP: %q", got)
	}
	if got := roundTrip("GET http://no.test:" + port + "/x HTTP/1.1\r\nHost: no.test\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.1 403") {
		t.Errorf("denied host: %q", got)
	}
	// CONNECT then speak HTTP through the tunnel.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT ok.test:%s HTTP/1.1\r\nHost: ok.test\r\n\r\n", port)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	fmt.Fprintf(c, "GET /tunnel HTTP/1.1\r\nHost: ok.test\r\nConnection: close\r\n\r\n")
	b, _ := io.ReadAll(br)
	if !strings.Contains(string(b), "upstream /tunnel") {
		t.Errorf("tunnel: %q", b)
	}
	if !strings.Contains(log.String(), "deny no.test:"+port+": not in the sandbox allowlist") {
		t.Errorf("log: %q", log.String())
	}
	// Keep-alive cannot smuggle a second host: the connection closes after one request.
	got := roundTrip("GET http://ok.test:" + port + "/1 HTTP/1.1\r\nHost: ok.test\r\n\r\nGET http://no.test:" + port + "/2 HTTP/1.1\r\nHost: no.test\r\n\r\n")
	if strings.Contains(got, "upstream /2") || strings.Count(got, "HTTP/1.1 ") != 1 {
		t.Errorf("second request on one connection was served: %q", got)
	}
}

func TestUpdate(t *testing.T) {
	p, _ := egress.New(egress.Config{Resolver: res})
	if _, err := p.Check(context.Background(), "api.github.com", 443); err == nil {
		t.Fatal("empty allowlist allowed a host")
	}
	if err := p.Update([]string{"api.github.com"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Check(context.Background(), "api.github.com", 443); err != nil {
		t.Errorf("after update: %v", err)
	}
	if err := p.Update([]string{"bad host"}, nil, nil); err == nil {
		t.Errorf("bad entry accepted")
	}
}
