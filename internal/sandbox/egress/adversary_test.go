package egress_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/fetch/fetchtest"
	"github.com/fullsend-ai/fullsend/internal/sandbox/egress"
	"github.com/fullsend-ai/fullsend/internal/syncbuf"
)

// TestCheckAdversarial: destinations a hostile sandbox might try.
func TestCheckAdversarial(t *testing.T) {
	r := fetchtest.Hosts{
		"meta.test":          {netip.MustParseAddr("169.254.169.254")},
		"meta6.test":         {netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("fd00:ec2::254")},
		"oracle.test":        {netip.MustParseAddr("192.0.0.192")},
		"teredo.test":        {netip.MustParseAddr("2001:0:4136:e378:8000:63bf:80ff:fffe")},
		"ok.example.com":     {netip.MustParseAddr("93.184.216.34")},
		"2130706433":         {netip.MustParseAddr("127.0.0.1")}, // what a libc resolver makes of it
		"\x00ok.example.com": {netip.MustParseAddr("93.184.216.34")},
	}
	long := strings.Repeat("a.", 130) + "example.com"
	r[long] = []netip.Addr{netip.MustParseAddr("93.184.216.34")}
	expectChecks(t, egress.Config{
		Allow: []string{"meta.test", "meta6.test", "oracle.test", "teredo.test", "*.example.com", "169.254.169.254",
			"2130706433", "2606:4700::1111", "fe80::1"},
		// An operator exempting link-local and ULA ranges still never
		// exempts metadata addresses.
		AllowedPrivateNetworks: []netip.Prefix{netip.MustParsePrefix("169.254.0.0/16"), netip.MustParsePrefix("fc00::/7"),
			netip.MustParsePrefix("fe80::/10")},
		Resolver: r,
	}, []checkCase{
		{"meta.test", 80, "metadata"},
		{"meta6.test", 443, "metadata"},
		{"169.254.169.254", 80, "metadata"},
		{"[::ffff:169.254.169.254]", 80, "metadata"},
		{"oracle.test", 443, "192.0.0.192"},
		{"teredo.test", 443, "Teredo"},
		{"2130706433", 443, "bad destination"},
		{"0x7f.0.0.1", 443, "bad destination"},
		{long, 443, "bad destination"},
		{"\x00ok.example.com", 443, "bad destination"},
		{"ok.example.com\x00", 443, "bad destination"},
		{" ok.example.com", 443, "bad destination"},
		{"ok.example.com:443", 443, "bad destination"},
		{"ok\u3002example.com", 443, "bad destination"},
		{"fe80::1%eth0", 443, "bad destination"},
		{"ok.example.com", 0, "bad destination"},
		{"ok.example.com", 65536, "bad destination"},
		{"ok.example.com", 8443, "not in the sandbox allowlist"},
		{"[2606:4700::1111]", 443, ""},
		{"OK.Example.COM.", 443, ""},
	})
}

// proxyEnv is a proxy allowing ok.test (-> 127.0.0.1) on the port of one
// upstream server that records what it receives.
type proxyEnv struct {
	addr, port string
	log        *syncbuf.Buffer
	mu         sync.Mutex
	seen       []string // "Host path" per request the upstream served
}

func newProxyEnv(t *testing.T) *proxyEnv {
	t.Helper()
	pe := &proxyEnv{log: &syncbuf.Buffer{}}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		pe.mu.Lock()
		pe.seen = append(pe.seen, r.Host+" "+r.URL.Path)
		pe.mu.Unlock()
		fmt.Fprintf(w, "upstream %s body=%q", r.URL.Path, body)
	}))
	t.Cleanup(up.Close)
	_, pe.port, _ = net.SplitHostPort(up.Listener.Addr().String())
	_, pe.addr = startProxy(t, egress.Config{
		Allow:                  []string{"ok.test:" + pe.port},
		AllowedPrivateNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Resolver:               fetchtest.Hosts{"ok.test": {netip.MustParseAddr("127.0.0.1")}, "no.test": {netip.MustParseAddr("127.0.0.1")}},
		Log:                    pe.log,
	})
	return pe
}

func (pe *proxyEnv) send(t *testing.T, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", pe.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go io.WriteString(c, raw)
	b, _ := io.ReadAll(c)
	return string(b)
}

func (pe *proxyEnv) requests() []string {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	return append([]string(nil), pe.seen...)
}

// TestHostHeaderCannotRedirect: for absolute-form requests the URL decides
// both the check and what the upstream sees as Host (no domain fronting
// through a Host header); for CONNECT the request target decides and the
// Host header is ignored.
func TestHostHeaderCannotRedirect(t *testing.T) {
	pe := newProxyEnv(t)
	got := pe.send(t, "GET http://ok.test:"+pe.port+"/a HTTP/1.1\r\nHost: no.test\r\n\r\n")
	if !strings.Contains(got, "upstream /a") {
		t.Fatalf("absolute-form: %q", got)
	}
	if req := pe.requests(); len(req) != 1 || !strings.HasPrefix(req[0], "ok.test:"+pe.port+" ") {
		t.Errorf("upstream saw %q, want Host ok.test:%s", req, pe.port)
	}
	got = pe.send(t, "CONNECT no.test:"+pe.port+" HTTP/1.1\r\nHost: ok.test:"+pe.port+"\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 403") {
		t.Errorf("CONNECT to a denied target with an allowed Host header: %q", got)
	}
}

// TestOnlyProxyForms: origin-form requests (no target host) and https://
// absolute-form requests are refused; nothing reaches the upstream.
func TestOnlyProxyForms(t *testing.T) {
	pe := newProxyEnv(t)
	for _, raw := range []string{
		"GET /a HTTP/1.1\r\nHost: ok.test:" + pe.port + "\r\n\r\n",
		"GET https://ok.test:" + pe.port + "/a HTTP/1.1\r\nHost: ok.test\r\n\r\n",
		"GET ftp://ok.test:" + pe.port + "/a HTTP/1.1\r\nHost: ok.test\r\n\r\n",
	} {
		if got := pe.send(t, raw); !strings.HasPrefix(got, "HTTP/1.1 400") {
			t.Errorf("%q: %q, want 400", raw, got)
		}
	}
	if req := pe.requests(); len(req) != 0 {
		t.Errorf("upstream served %q", req)
	}
}

// TestNoSmuggling: a request carrying both Content-Length and chunked
// framing, with a second request hidden behind it, reaches the upstream as
// one request; the hidden one (to a path the sandbox could not name
// otherwise) is never served.
func TestNoSmuggling(t *testing.T) {
	pe := newProxyEnv(t)
	hidden := "GET http://no.test:" + pe.port + "/smuggled HTTP/1.1\r\nHost: no.test\r\n\r\n"
	for _, raw := range []string{
		// TE wins over CL: the body ends at the 0 chunk; the rest is a second request.
		"POST http://ok.test:" + pe.port + "/one HTTP/1.1\r\nHost: ok.test\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + hidden,
		// Keep-alive pipelining.
		"GET http://ok.test:" + pe.port + "/one HTTP/1.1\r\nHost: ok.test\r\n\r\n" + hidden,
		// A body that is itself a request.
		fmt.Sprintf("POST http://ok.test:%s/one HTTP/1.1\r\nHost: ok.test\r\nContent-Length: %d\r\n\r\n%s", pe.port, len(hidden), hidden),
	} {
		pe.send(t, raw)
	}
	for _, r := range pe.requests() {
		if strings.Contains(r, "smuggled") || !strings.HasSuffix(r, " /one") {
			t.Errorf("upstream served %q", r)
		}
	}
	if n := len(pe.requests()); n != 3 {
		t.Errorf("upstream served %d requests, want 3", n)
	}
}

// TestHeaderFlood: a request head larger than MaxHeaderBytes is refused
// without buffering it all.
func TestHeaderFlood(t *testing.T) {
	pe := newProxyEnv(t)
	c, err := net.Dial("tcp", pe.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go func() {
		io.WriteString(c, "GET http://ok.test:"+pe.port+"/ HTTP/1.1\r\nHost: ok.test\r\n")
		line := "X-Pad: " + strings.Repeat("p", 1000) + "\r\n"
		for i := 0; i < 4*egress.MaxHeaderBytes/len(line); i++ {
			if _, err := io.WriteString(c, line); err != nil {
				return
			}
		}
		io.WriteString(c, "\r\n")
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a header flood: %v", err)
	}
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status %d, want 400", resp.StatusCode)
	}
	if req := pe.requests(); len(req) != 0 {
		t.Errorf("upstream served %q", req)
	}
}

// TestDenialLogIsOneLine: a destination carrying control characters that
// net/http lets through (C1 controls such as CSI, U+009B) cannot add
// terminal escapes to the denial log, which stays one line per denial.
func TestDenialLogIsOneLine(t *testing.T) {
	pe := newProxyEnv(t)
	got := pe.send(t, "CONNECT evil\u009b2K.test:443 HTTP/1.1\r\nHost: x\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 403") {
		t.Fatalf("answer %q, want 403", got)
	}
	log := pe.log.String()
	if !strings.HasPrefix(log, "deny evil") || strings.Count(log, "\n") != 1 || strings.Contains(log, "\u009b") {
		t.Errorf("denial log %q", log)
	}
}

// seqResolver answers the n-th lookup with answers[n] (the last repeats).
type seqResolver struct {
	mu      sync.Mutex
	n       int
	answers [][]netip.Addr
}

func (r *seqResolver) LookupNetIP(_ context.Context, _, _ string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.answers[min(r.n, len(r.answers)-1)]
	r.n++
	return a, nil
}

// TestDialsVettedAddress: one lookup per request, and the connection goes
// to the address that lookup vetted; a later answer (here 127.0.0.2, where
// a different server listens) is never dialled for it.
func TestDialsVettedAddress(t *testing.T) {
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "vetted") }))
	defer good.Close()
	_, port, _ := net.SplitHostPort(good.Listener.Addr().String())
	if ln, err := net.Listen("tcp", "127.0.0.2:"+port); err == nil {
		bad := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "rebound") })}
		go bad.Serve(ln)
		defer bad.Close()
	}
	r := &seqResolver{answers: [][]netip.Addr{{netip.MustParseAddr("127.0.0.1")}, {netip.MustParseAddr("127.0.0.2")}}}
	_, addr := startProxy(t, egress.Config{
		Allow:                  []string{"rebind.test:" + port},
		AllowedPrivateNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Resolver:               r,
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "GET http://rebind.test:%s/ HTTP/1.1\r\nHost: rebind.test\r\n\r\n", port)
	b, _ := io.ReadAll(c)
	if !strings.Contains(string(b), "vetted") {
		t.Errorf("answer %q, want the vetted server's", b)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n != 1 {
		t.Errorf("%d lookups for one request, want 1", r.n)
	}
}
