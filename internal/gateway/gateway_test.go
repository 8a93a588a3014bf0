package gateway

import (
	"bufio"
	"encoding/base64"
	"fmt"
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
	"github.com/fullsend-ai/fullsend/internal/syncbuf"
)

type env struct {
	addr     string // gateway
	upstream *httptest.Server
	port     string // upstream port
	log      *syncbuf.Buffer
	now      time.Time
	gotAuth  chan string
}

// newEnv starts a gateway whose resolver maps allowed.test and other.test
// to a loopback upstream (loopback is an allowed private network, as a
// corporate range would be) and corp.test to an internal address.
func newEnv(t *testing.T) *env {
	e := &env{log: &syncbuf.Buffer{}, now: t0.Add(time.Minute), gotAuth: make(chan string, 10)}
	e.upstream = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.gotAuth <- r.Header.Get("Proxy-Authorization")
		io.WriteString(w, "upstream "+r.URL.Path)
	}))
	t.Cleanup(e.upstream.Close)
	_, e.port, _ = net.SplitHostPort(e.upstream.Listener.Addr().String())
	lo := netip.MustParseAddr("127.0.0.1")
	g, err := New(Config{
		Key:                    testKey,
		AllowedPrivateNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Resolver: fetchtest.Hosts{
			"allowed.test": {lo}, "sub.wild.test": {lo}, "other.test": {lo},
			"corp.test": {netip.MustParseAddr("10.1.2.3")}, "rebind.test": {lo, netip.MustParseAddr("192.168.1.1")},
		},
		Log: e.log,
		Now: func() time.Time { return e.now },
	})
	if err != nil {
		t.Fatal(err)
	}
	e.addr = fetchtest.Serve(t, g)
	return e
}

func (e *env) token(t *testing.T, allow ...string) string {
	tok, err := Mint(testKey, "run-1", allow, t0, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// raw sends one request head and returns the status line, the headers
// and the connection (for a tunnel).
func (e *env) raw(t *testing.T, method, target, token string) (*http.Response, net.Conn, *bufio.Reader) {
	c, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\n", method, target, strings.TrimPrefix(target, "http://"))
	if token != "" {
		head += "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("run:"+token)) + "\r\n"
	}
	if _, err := io.WriteString(c, head+"\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp, c, br
}

func TestGatewayTokenRefusals(t *testing.T) {
	e := newEnv(t)
	good := e.token(t, "allowed.test:"+e.port)
	p, m, _ := strings.Cut(strings.TrimPrefix(good, tokenPrefix), ".")
	wide := base64.RawURLEncoding.EncodeToString([]byte(`{"run":"run-1","allow":["*.test:` + e.port + `"],"iat":` + fmt.Sprint(t0.Unix()) + `,"exp":` + fmt.Sprint(t0.Add(time.Hour).Unix()) + `}`))
	forged := sign(otherKey, Claims{Run: "evil", Allow: []string{"other.test:" + e.port}, IAT: t0.Unix(), Exp: t0.Add(time.Hour).Unix()})
	for _, c := range []struct{ name, tok, want string }{
		{"missing", "", "missing"},
		{"garbage", "hello", "not a v1 token"},
		{"tampered payload", tokenPrefix + wide + "." + m, "bad signature"},
		{"truncated mac", tokenPrefix + p + "." + m[:len(m)-2], "bad signature"},
		{"wrong key", forged, "bad signature"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, method := range []string{"CONNECT", "GET"} {
				target := "allowed.test:" + e.port
				if method == "GET" {
					target = "http://" + target + "/x"
				}
				resp, _, _ := e.raw(t, method, target, c.tok)
				if resp.StatusCode != http.StatusProxyAuthRequired || !strings.HasPrefix(resp.Header.Get("Proxy-Authenticate"), "Basic") {
					t.Fatalf("%s: status %d (Proxy-Authenticate %q), want 407", method, resp.StatusCode, resp.Header.Get("Proxy-Authenticate"))
				}
			}
			if !hasLine(e.log.String(), "run=? deny allowed.test:"+e.port+": proxy authorization: egress token refused: "+c.want) {
				t.Fatalf("log lacks the refusal:\n%s", e.log.String())
			}
		})
	}
	// Expiry: the same good token, once the clock passes exp.
	e.now = t0.Add(2 * time.Hour)
	resp, _, _ := e.raw(t, "CONNECT", "allowed.test:"+e.port, good)
	if resp.StatusCode != http.StatusProxyAuthRequired || !strings.Contains(e.log.String(), "run run-1: expired") {
		t.Fatalf("expired token: status %d, log:\n%s", resp.StatusCode, e.log.String())
	}
	if strings.Contains(e.log.String(), good) || strings.Contains(e.log.String(), m) {
		t.Fatal("the log holds a token")
	}
	select {
	case a := <-e.gotAuth:
		t.Fatalf("a refused request reached the upstream (auth %q)", a)
	default:
	}
}

// TestGatewayPolicy runs the egress proxy's decisions over the wire through
// the gateway, with the allowlist coming from the token.
func TestGatewayPolicy(t *testing.T) {
	e := newEnv(t)
	tok := e.token(t, "allowed.test:"+e.port, "*.wild.test:"+e.port, "corp.test:"+e.port, "rebind.test:"+e.port, "169.254.169.254:80")
	for _, c := range []struct {
		target string
		status int
		log    string
	}{
		{"allowed.test:" + e.port, 200, "run=run-1 allow allowed.test:" + e.port},
		{"ALLOWED.TEST.:" + e.port, 200, "run=run-1 allow allowed.test:" + e.port},
		{"sub.wild.test:" + e.port, 200, "run=run-1 allow sub.wild.test:" + e.port},
		{"wild.test:" + e.port, 403, "run=run-1 deny wild.test:" + e.port + ": not in the sandbox allowlist"},
		{"other.test:" + e.port, 403, "run=run-1 deny other.test:" + e.port + ": not in the sandbox allowlist"},
		{"allowed.test:22", 403, "run=run-1 deny allowed.test:22: not in the sandbox allowlist"},
		{"corp.test:" + e.port, 403, "run=run-1 deny corp.test:" + e.port + ": resolves to internal address 10.1.2.3"},
		{"rebind.test:" + e.port, 403, "run=run-1 deny rebind.test:" + e.port + ": resolves to internal address 192.168.1.1"},
		{"10.0.0.1:443", 403, "run=run-1 deny 10.0.0.1:443: not in the sandbox allowlist"},
		{"169.254.169.254:80", 403, "run=run-1 deny 169.254.169.254:80: cloud metadata endpoint"},
	} {
		resp, conn, br := e.raw(t, "CONNECT", c.target, tok)
		if resp.StatusCode != c.status {
			t.Errorf("CONNECT %s: status %d, want %d", c.target, resp.StatusCode, c.status)
		}
		if !hasLine(e.log.String(), c.log) {
			t.Errorf("CONNECT %s: log lacks %q:\n%s", c.target, c.log, e.log.String())
		}
		if c.status == 200 {
			// The tunnel reaches the upstream.
			fmt.Fprintf(conn, "GET /tunnel HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
			r, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(r.Body)
			if string(body) != "upstream /tunnel" {
				t.Errorf("tunnel body %q", body)
			}
			<-e.gotAuth
		}
	}
	if n := strings.Count(e.log.String(), "\n"); n != 10 {
		t.Errorf("%d log lines for 10 decisions:\n%s", n, e.log.String())
	}
}

// TestGatewayHTTPClient uses the gateway exactly as a Pod does: a proxy URL
// with the token as password (HTTP_PROXY=http://run:TOKEN@gateway:3128).
// The token never reaches the upstream.
func TestGatewayHTTPClient(t *testing.T) {
	e := newEnv(t)
	pu, err := ProxyURL("http://"+e.addr, e.token(t, "allowed.test:"+e.port))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(pu)
	cl := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}}
	// get fetches /plain from host through cl: the status and the body.
	get := func(host string) (int, string) {
		resp, err := cl.Get("http://" + host + ":" + e.port + "/plain")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(body)
	}
	if code, body := get("allowed.test"); code != 200 || body != "upstream /plain" {
		t.Fatalf("GET via gateway: %d %q", code, body)
	}
	if a := <-e.gotAuth; a != "" {
		t.Fatalf("upstream saw Proxy-Authorization %q", a)
	}
	if code, _ := get("other.test"); code != http.StatusForbidden {
		t.Fatalf("other host: %d, want 403", code)
	}
	// Without credentials the client gets 407.
	u.User = nil
	cl = &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}}
	if code, _ := get("allowed.test"); code != http.StatusProxyAuthRequired {
		t.Fatalf("no credentials: %d, want 407", code)
	}
}

// hasLine reports whether some line of log starts with prefix.
func hasLine(log, prefix string) bool {
	for _, l := range strings.Split(log, "\n") {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
