package egress_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox/egress"
	"github.com/fullsend-ai/fullsend/internal/secrets"
)

const realToken = "ghp_REALsecretVALUE_0123456789abcdef"

// secretLog is the proxy's log: lines, and the refusals it records.
type secretLog struct {
	mu       sync.Mutex
	lines    strings.Builder
	refusals []string
}

func (l *secretLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lines.Write(b)
}

func (l *secretLog) SecretRefused(dest, secret, reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refusals = append(l.refusals, dest+" "+secret+" "+reason)
}

func (l *secretLog) snapshot() (string, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lines.String(), append([]string(nil), l.refusals...)
}

// seen records what an upstream received.
type seen struct {
	mu   sync.Mutex
	reqs []string // method, target, headers and body of each request
}

func (s *seen) add(r *http.Request) string {
	body, _ := io.ReadAll(r.Body)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", r.Method, r.RequestURI)
	r.Header.Write(&b)
	b.Write(body)
	s.mu.Lock()
	s.reqs = append(s.reqs, b.String())
	s.mu.Unlock()
	return b.String()
}

func (s *seen) all() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.reqs, "\n--\n")
}

type secretEnv struct {
	b         *secrets.Broker
	ph        string
	api       *httptest.Server // HTTPS, the secret's host
	apiSeen   *seen
	other     *httptest.Server // plain http, allowed, not a secret host
	otherSeen *seen
	otherTLS  *httptest.Server // HTTPS, allowed, not a secret host
	proxy     string
	log       *secretLog
	client    *http.Client
}

// newSecretEnv serves a proxy whose broker holds GH_TOKEN for the api
// server (HTTPS with a loopback test certificate, trusted through roots;
// nil roots = the system's, which do not trust it).
func newSecretEnv(t *testing.T, trustAPI bool, apiHandler http.HandlerFunc) *secretEnv {
	t.Helper()
	e := &secretEnv{apiSeen: &seen{}, otherSeen: &seen{}, log: &secretLog{}}
	if apiHandler == nil {
		apiHandler = func(w http.ResponseWriter, r *http.Request) {
			e.apiSeen.add(r)
			w.Header().Set("X-Echo", r.Header.Get("Authorization"))
			io.WriteString(w, "echo "+r.Header.Get("Authorization"))
		}
	}
	e.api = httptest.NewTLSServer(apiHandler)
	t.Cleanup(e.api.Close)
	e.other = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { e.otherSeen.add(r) }))
	t.Cleanup(e.other.Close)
	e.otherTLS = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "other") }))
	t.Cleanup(e.otherTLS.Close)
	var roots *x509.CertPool
	if trustAPI {
		roots = x509.NewCertPool()
		roots.AddCert(e.api.Certificate())
	}
	b, err := secrets.New([]secrets.Secret{{Name: "GH_TOKEN", Value: realToken, Hosts: []string{hostOf(e.api)}}}, secrets.Options{Roots: roots})
	if err != nil {
		t.Fatal(err)
	}
	e.b, e.ph = b, b.Env()["GH_TOKEN"]
	_, e.proxy = startProxy(t, egress.Config{
		Services: []string{hostOf(e.api), hostOf(e.other), hostOf(e.otherTLS)},
		Log:      e.log, Secrets: b,
	})
	sandboxRoots := x509.NewCertPool()
	sandboxRoots.AppendCertsFromPEM(b.CA().PEM())
	sandboxRoots.AddCert(e.otherTLS.Certificate())
	e.client = &http.Client{
		Transport: &http.Transport{
			Proxy:           http.ProxyURL(&url.URL{Scheme: "http", Host: e.proxy}),
			TLSClientConfig: &tls.Config{RootCAs: sandboxRoots},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       10 * time.Second,
	}
	t.Cleanup(e.client.CloseIdleConnections)
	return e
}

func hostOf(s *httptest.Server) string { return s.Listener.Addr().String() }

func (e *secretEnv) do(t *testing.T, method, u string, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	if chunked, ok := strings.CutPrefix(body, "chunked:"); ok {
		r = io.MultiReader(strings.NewReader(chunked)) // no length: sent chunked
	}
	req, err := http.NewRequest(method, u, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestSecretSwap: to the secret's host, the placeholder in any header
// (and in https://user:TOKEN@ basic credentials) reaches the upstream as
// the real value over verified TLS; the upstream's echo of it comes back
// as the placeholder.
func TestSecretSwap(t *testing.T) {
	e := newSecretEnv(t, true, nil)
	resp, body := e.do(t, "GET", e.api.URL+"/user", "", map[string]string{
		"Authorization": "token " + e.ph, "x-api-key": e.ph, "X-Custom": "a=" + e.ph,
	})
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	got := e.apiSeen.all()
	for _, want := range []string{"Authorization: token " + realToken, "X-Api-Key: " + realToken, "X-Custom: a=" + realToken} {
		if !strings.Contains(got, want) {
			t.Errorf("upstream did not get %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, e.ph) {
		t.Errorf("upstream got the placeholder:\n%s", got)
	}
	if body != "echo token "+e.ph || resp.Header.Get("X-Echo") != "token "+e.ph {
		t.Errorf("echo not scrubbed: %q %q", body, resp.Header.Get("X-Echo"))
	}
	// The sandbox saw the run CA's leaf, not the upstream's certificate.
	if resp.TLS == nil || resp.TLS.PeerCertificates[0].Issuer.CommonName != e.b.CA().Certificate().Subject.CommonName {
		t.Error("the tunnel to the secret's host was not terminated with the run CA")
	}

	// git's and curl's https://user:TOKEN@host form.
	u, _ := url.Parse(e.api.URL + "/repo.git/info/refs")
	u.User = url.UserPassword("x-access-token", e.ph)
	resp, _ = e.do(t, "GET", u.String(), "", nil)
	if resp.StatusCode != 200 || !strings.Contains(e.apiSeen.all(), "Authorization: Basic "+basicOf("x-access-token:"+realToken)) {
		t.Errorf("basic credentials not swapped: %d\n%s", resp.StatusCode, e.apiSeen.all())
	}

	// Another host stays a plain tunnel: its own certificate reaches the
	// sandbox.
	resp, body = e.do(t, "GET", e.otherTLS.URL, "", nil)
	if resp.StatusCode != 200 || body != "other" || !resp.TLS.PeerCertificates[0].Equal(e.otherTLS.Certificate()) {
		t.Errorf("other host: %d %q", resp.StatusCode, body)
	}
	if _, refusals := e.log.snapshot(); len(refusals) != 0 {
		t.Errorf("refusals: %q", refusals)
	}
}

// basicOf is the credential of "Authorization: Basic" for "user:pass".
func basicOf(s string) string {
	r, _ := http.NewRequest("GET", "http://x/", nil)
	u, p, _ := strings.Cut(s, ":")
	r.SetBasicAuth(u, p)
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
}

// TestSecretRefusals: the placeholder in a body, a URL, or a header to a
// host that is not the secret's, is refused with 403, logged and recorded;
// the request never reaches the upstream with it.
func TestSecretRefusals(t *testing.T) {
	e := newSecretEnv(t, true, nil)
	for _, tc := range []struct {
		name, method, url, body string
		hdr                     map[string]string
		where                   string
	}{
		{"body to the secret's host", "POST", e.api.URL + "/comment1", `{"body":"` + e.ph + `"}`, nil, "request body"},
		{"large body, placeholder at the end", "POST", e.api.URL + "/comment2", strings.Repeat("x", 200000) + e.ph, nil, "request body"},
		{"chunked body", "POST", e.api.URL + "/comment", "chunked:" + strings.Repeat("x", 100000) + e.ph + "tail", nil, "request body"},
		{"query to the secret's host", "GET", e.api.URL + "/x?access_token=" + e.ph, "", nil, "request target"},
		{"header to another host", "GET", e.other.URL + "/steal", "", map[string]string{"Authorization": "token " + e.ph}, "header Authorization"},
		{"body to another host", "POST", e.other.URL + "/steal", "t=" + e.ph, nil, "request body"},
	} {
		before := len(e.apiSeen.all())
		resp, body := e.do(t, tc.method, tc.url, tc.body, tc.hdr)
		// A body of known length is scanned before anything goes upstream.
		path := tc.url[strings.Index(tc.url[8:], "/")+8:]
		if !strings.HasPrefix(tc.body, "chunked:") && (strings.Contains(e.apiSeen.all(), " "+path+"\n") || strings.Contains(e.otherSeen.all(), " "+path+"\n")) {
			t.Errorf("%s: the refused request reached the upstream", tc.name)
		}
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "secret GH_TOKEN") || !strings.Contains(body, tc.where) {
			t.Errorf("%s: %d %q", tc.name, resp.StatusCode, body)
		}
		_, refusals := e.log.snapshot()
		if len(refusals) == 0 || !strings.Contains(refusals[len(refusals)-1], "GH_TOKEN") || !strings.Contains(refusals[len(refusals)-1], tc.where) {
			t.Errorf("%s: not recorded: %q", tc.name, refusals)
		}
		if strings.Contains(e.apiSeen.all()[before:], e.ph) || strings.Contains(e.otherSeen.all(), e.ph) {
			t.Errorf("%s: the placeholder reached an upstream", tc.name)
		}
	}
	lines, refusals := e.log.snapshot()
	if len(refusals) != 6 || strings.Count(lines, "deny ") != 6 {
		t.Errorf("log:\n%s\nrefusals %q", lines, refusals)
	}
	if strings.Contains(lines, realToken) || strings.Contains(e.otherSeen.all(), realToken) {
		t.Error("the real value in the log or at another host")
	}
}

// TestSecretUpstreamVerified: an upstream whose certificate the broker's
// roots do not trust never gets the request.
func TestSecretUpstreamVerified(t *testing.T) {
	e := newSecretEnv(t, false, nil)
	resp, body := e.do(t, "GET", e.api.URL+"/user", "", map[string]string{"Authorization": "token " + e.ph})
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "certificate") {
		t.Errorf("%d %q", resp.StatusCode, body)
	}
	if e.apiSeen.all() != "" {
		t.Errorf("the unverified upstream got: %s", e.apiSeen.all())
	}
}

// TestSecretRedirect: the proxy never follows a redirect; following it to
// another host with the placeholder is refused there.
func TestSecretRedirect(t *testing.T) {
	var target string
	e := newSecretEnv(t, true, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+"/landing", http.StatusFound)
	})
	target = e.other.URL
	resp, _ := e.do(t, "GET", e.api.URL+"/go", "", map[string]string{"Authorization": "token " + e.ph})
	if resp.StatusCode != http.StatusFound || e.otherSeen.all() != "" {
		t.Fatalf("%d; other saw %q", resp.StatusCode, e.otherSeen.all())
	}
	resp, _ = e.do(t, "GET", resp.Header.Get("Location"), "", map[string]string{"Authorization": "token " + e.ph})
	if resp.StatusCode != http.StatusForbidden || e.otherSeen.all() != "" {
		t.Fatalf("followed: %d; other saw %q", resp.StatusCode, e.otherSeen.all())
	}
}

// TestSecretStreams: a server-sent event reaches the sandbox before the
// upstream sends the next one.
func TestSecretStreams(t *testing.T) {
	next := make(chan struct{})
	e := newSecretEnv(t, true, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: one\ndata: {}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-next:
		case <-time.After(10 * time.Second):
		}
		io.WriteString(w, "event: two\ndata: {}\n\n")
	})
	req, _ := http.NewRequest("POST", e.api.URL+"/v1/messages", strings.NewReader("{}"))
	req.Header.Set("X-Api-Key", e.ph)
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	got := make(chan string, 1)
	go func() {
		var s strings.Builder
		for range 3 {
			l, _ := br.ReadString('\n')
			s.WriteString(l)
		}
		got <- s.String()
	}()
	select {
	case s := <-got:
		if s != "event: one\ndata: {}\n\n" {
			t.Fatalf("%q", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first event was held back")
	}
	close(next)
	rest, _ := io.ReadAll(br)
	if string(rest) != "event: two\ndata: {}\n\n" {
		t.Fatalf("%q", rest)
	}
}

// connectRaw opens a CONNECT tunnel to target through the proxy.
func connectRaw(t *testing.T, proxy, target string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	return c
}

// TestSecretTunnelChecks: a TLS server name other than the CONNECT host
// fails the handshake; a Host other than the tunnel's is refused (421).
func TestSecretTunnelChecks(t *testing.T) {
	e := newSecretEnv(t, true, nil)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(e.b.CA().PEM())
	c := connectRaw(t, e.proxy, hostOf(e.api))
	// The proxy itself refuses the name (the client does not even check).
	tc := tls.Client(c, &tls.Config{ServerName: "api.github.com", InsecureSkipVerify: true})
	if err := tc.Handshake(); err == nil {
		t.Fatal("a handshake for another server name succeeded")
	}

	c = connectRaw(t, e.proxy, hostOf(e.api))
	tc = tls.Client(c, &tls.Config{ServerName: "127.0.0.1", RootCAs: roots})
	fmt.Fprintf(tc, "GET / HTTP/1.1\r\nHost: %s\r\nAuthorization: token %s\r\n\r\n", hostOf(e.other), e.ph)
	br := bufio.NewReader(tc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusMisdirectedRequest || e.apiSeen.all() != "" {
		t.Fatalf("%v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	// A protocol upgrade (websocket) would pass frames unread: refused.
	fmt.Fprintf(tc, "GET /ws HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", hostOf(e.api))
	resp, err = http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusForbidden || e.apiSeen.all() != "" {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
}

// TestSecretPlainHostService: a loopback host service over plain http
// gets the swap without TLS, both as an absolute-form request and inside
// a CONNECT tunnel (how the in-sandbox host service forwarder sends it).
func TestSecretPlainHostService(t *testing.T) {
	svcSeen := &seen{}
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		svcSeen.add(r)
		io.WriteString(w, "echo "+r.Header.Get("X-Api-Key"))
	}))
	defer svc.Close()
	b, err := secrets.New([]secrets.Secret{{Name: "ANTHROPIC_API_KEY", Value: realToken, Hosts: []string{hostOf(svc)}}}, secrets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ph := b.Env()["ANTHROPIC_API_KEY"]
	log := &secretLog{}
	_, proxy := startProxy(t, egress.Config{Services: []string{hostOf(svc)}, Log: log, Secrets: b})
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: proxy})}}
	req, _ := http.NewRequest("GET", svc.URL+"/v1/models", nil)
	req.Header.Set("X-Api-Key", ph)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "echo "+ph || !strings.Contains(svcSeen.all(), "X-Api-Key: "+realToken) {
		t.Fatalf("absolute form: %q\n%s", body, svcSeen.all())
	}

	c := connectRaw(t, proxy, hostOf(svc))
	fmt.Fprintf(c, "POST /v1/messages HTTP/1.1\r\nHost: %s\r\nX-Api-Key: %s\r\nContent-Length: 2\r\n\r\n{}", hostOf(svc), ph)
	resp, err = http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	if string(body) != "echo "+ph || strings.Count(svcSeen.all(), "X-Api-Key: "+realToken) != 2 {
		t.Fatalf("in a tunnel: %q\n%s", body, svcSeen.all())
	}
	if _, r := log.snapshot(); len(r) != 0 {
		t.Fatal(r)
	}
}

// TestSecretCloseCutsIntercepted: Close ends a terminated tunnel with a
// request still waiting on its upstream.
func TestSecretCloseCutsIntercepted(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	e := newSecretEnv(t, true, func(w http.ResponseWriter, r *http.Request) { <-hold })
	p, proxy := startProxy(t, egress.Config{Services: []string{hostOf(e.api)}, Secrets: e.b})
	e.client.Transport.(*http.Transport).Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: proxy})
	errc := make(chan error, 1)
	go func() {
		_, err := e.client.Get(e.api.URL + "/slow")
		errc <- err
	}()
	time.Sleep(300 * time.Millisecond)
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited for the upstream")
	}
	if err := <-errc; err == nil || errors.Is(err, nil) {
		t.Fatal("the request survived Close")
	}
}

// TestSecretPlainHTTPInTunnel: plain http inside a CONNECT tunnel to a
// host that is not a secret's (how the host service forwarder carries
// it) is read: the placeholder there is refused and recorded; a request
// without one and a non-HTTP protocol pass.
func TestSecretPlainHTTPInTunnel(t *testing.T) {
	e := newSecretEnv(t, true, nil)
	c := connectRaw(t, e.proxy, hostOf(e.other))
	fmt.Fprintf(c, "POST /steal HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\nt=%s", hostOf(e.other), len(e.ph)+2, e.ph)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("%v %v", resp, err)
	}
	if _, r := e.log.snapshot(); len(r) != 1 || !strings.Contains(r[0], "request body") || strings.Contains(e.otherSeen.all(), e.ph) {
		t.Fatalf("refusals %q; other saw %q", r, e.otherSeen.all())
	}
	c = connectRaw(t, e.proxy, hostOf(e.other))
	fmt.Fprintf(c, "GET /fine HTTP/1.1\r\nHost: %s\r\n\r\n", hostOf(e.other))
	resp, err = http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 200 || !strings.Contains(e.otherSeen.all(), "GET /fine") {
		t.Fatalf("%v %v", resp, err)
	}
	// Not HTTP: a raw tunnel, bytes untouched.
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		s, err := echo.Accept()
		if err == nil {
			io.Copy(s, s)
			s.Close()
		}
	}()
	_, proxy := startProxy(t, egress.Config{Services: []string{echo.Addr().String()}, Secrets: e.b})
	c = connectRaw(t, proxy, echo.Addr().String())
	io.WriteString(c, "SSH-2.0-test "+e.ph+"\n")
	got := make([]byte, len("SSH-2.0-test ")+len(e.ph)+1)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "SSH-2.0-test "+e.ph+"\n" {
		t.Fatalf("%q %v", got, err)
	}
}

// TestSecretConnectHead: a placeholder in a CONNECT request's head (its
// target or a header such as Proxy-Authorization) is refused before any
// tunnel opens.
func TestSecretConnectHead(t *testing.T) {
	e := newSecretEnv(t, true, nil)
	c, err := net.Dial("tcp", e.proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\n\r\n", hostOf(e.otherTLS), hostOf(e.otherTLS), basicOf("u:"+e.ph))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("%v %v", resp, err)
	}
	if _, r := e.log.snapshot(); len(r) != 1 || !strings.Contains(r[0], "CONNECT request header Proxy-Authorization") {
		t.Fatalf("%q", r)
	}
}
