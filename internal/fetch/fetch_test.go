package fetch_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/fetch/fetchtest"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// env is one loopback TLS server reachable under a set of fake host names.
type env struct {
	srv      *httptest.Server
	port     string
	resolver *fetchtest.Resolver
	hits     atomic.Int64
}

func newEnv(t *testing.T, h http.HandlerFunc, hosts ...string) *env {
	t.Helper()
	e := &env{resolver: fetchtest.NewResolver()}
	e.srv = fetchtest.NewServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.hits.Add(1)
		h(w, r)
	}), hosts...)
	_, e.port, _ = net.SplitHostPort(e.srv.Listener.Addr().String())
	for _, h := range hosts {
		e.resolver.Set(h, fetchtest.LoopbackAddr)
	}
	return e
}

func (e *env) url(host, path string) string { return "https://" + host + ":" + e.port + path }

// opts allows hosts and loopback.
func (e *env) opts(hosts ...string) fetch.Options {
	return fetch.Options{
		AllowedDomains:         hosts,
		AllowedPrivateNetworks: []netip.Prefix{fetchtest.Loopback},
		Resolver:               e.resolver,
		RootCAs:                fetchtest.CertPool(),
		Timeout:                5 * time.Second,
	}
}

func text(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }
}

// wantErr checks the error class and that the message is one line naming
// the URL.
func wantErr(t *testing.T, err error, class error, substrs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v", class)
	}
	if !errors.Is(err, class) {
		t.Fatalf("error %q is not %v", err, class)
	}
	var fe *fetch.Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %q is not a *fetch.Error", err)
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\n\r") {
		t.Errorf("error is not one line: %q", msg)
	}
	if !strings.HasPrefix(msg, "fetch ") {
		t.Errorf("error %q does not start with \"fetch \"", msg)
	}
	for _, s := range substrs {
		if !strings.Contains(msg, s) {
			t.Errorf("error %q does not mention %q", msg, s)
		}
	}
}

func TestGetSuccess(t *testing.T) {
	var gotHeader, gotUA string
	var gotProto int
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		gotHeader, gotUA, gotProto = r.Header.Get("Accept"), r.UserAgent(), r.ProtoMajor
		w.Header().Set("X-Test", "yes")
		fmt.Fprint(w, "hello")
	}, "files.test")
	c := fetch.New(e.opts("files.test"))
	resp, err := c.Get(context.Background(), e.url("files.test", "/a.txt"), http.Header{"Accept": {"text/plain"}})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != "hello" || resp.StatusCode != 200 || resp.Header.Get("X-Test") != "yes" {
		t.Errorf("got %d %q %v", resp.StatusCode, resp.Body, resp.Header)
	}
	if gotHeader != "text/plain" || gotUA != "fullsend" {
		t.Errorf("server saw Accept %q, User-Agent %q", gotHeader, gotUA)
	}
	if gotProto != 2 {
		t.Errorf("server saw HTTP/%d, want HTTP/2", gotProto)
	}
}

func TestZeroOptionsAllowNothing(t *testing.T) {
	e := newEnv(t, text("x"), "files.test")
	c := fetch.New(fetch.Options{Resolver: e.resolver, RootCAs: fetchtest.CertPool()})
	_, err := c.Get(context.Background(), e.url("files.test", "/"), nil)
	wantErr(t, err, fetch.ErrDomain, "files.test")
	if n := e.resolver.Lookups("files.test"); n != 0 {
		t.Errorf("%d lookups before the domain check", n)
	}
}

// TestURLRefused: scheme, userinfo, %25 and friends are refused before any
// lookup.
func TestURLRefused(t *testing.T) {
	e := newEnv(t, text("x"), "files.test")
	c := fetch.New(e.opts("files.test"))
	p := ":" + e.port
	for _, tc := range []struct {
		name, url string
		refErr    error
		secret    string
	}{
		{"http", "http://files.test" + p + "/a", ref.ErrScheme, ""},
		{"ftp", "ftp://files.test" + p + "/a", ref.ErrScheme, ""},
		{"file", "file:///etc/passwd", ref.ErrScheme, ""},
		{"userinfo", "https://alice:s3cretpw@files.test" + p + "/a", ref.ErrUserinfo, "s3cretpw"},
		{"user only", "https://ghp_0123456789abcdefghij0123@files.test" + p + "/a", ref.ErrUserinfo, "ghp_0123456789abcdefghij0123"},
		{"double encoded", "https://files.test" + p + "/a%252Fb", ref.ErrDoubleEncoded, ""},
		{"backslash", "https://files.test" + p + "/a\\b", ref.ErrBackslash, ""},
		{"fragment", "https://files.test" + p + "/a#x", ref.ErrFragment, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Get(context.Background(), tc.url, nil)
			wantErr(t, err, fetch.ErrScheme)
			if !errors.Is(err, tc.refErr) {
				t.Errorf("error %q is not %v", err, tc.refErr)
			}
			if tc.secret != "" && strings.Contains(err.Error(), tc.secret) {
				t.Errorf("error leaks %q: %s", tc.secret, err)
			}
		})
	}
	if n := e.hits.Load(); n != 0 {
		t.Errorf("server got %d requests", n)
	}
	if n := e.resolver.Lookups("files.test"); n != 0 {
		t.Errorf("%d lookups", n)
	}
}

func TestDomainAllowlist(t *testing.T) {
	hosts := []string{"example.test", "a.example.test", "b.a.example.test", "evil-example.test", "example.test.evil.test"}
	e := newEnv(t, text("ok"), hosts...)
	for _, tc := range []struct {
		name    string
		allowed []string
		host    string
		ok      bool
	}{
		{"exact", []string{"example.test"}, "example.test", true},
		{"exact does not cover subdomain", []string{"example.test"}, "a.example.test", false},
		{"wildcard covers subdomain", []string{"*.example.test"}, "a.example.test", true},
		{"wildcard covers deeper subdomain", []string{"*.example.test"}, "b.a.example.test", true},
		{"wildcard does not cover bare domain", []string{"*.example.test"}, "example.test", false},
		{"suffix without dot", []string{"*.example.test"}, "evil-example.test", false},
		{"allowed as prefix of other host", []string{"example.test"}, "example.test.evil.test", false},
		{"case and trailing dot", []string{"EXAMPLE.test."}, "example.test", true},
		{"empty list", nil, "example.test", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fetch.New(e.opts(tc.allowed...))
			resp, err := c.Get(context.Background(), e.url(tc.host, "/"), nil)
			if tc.ok {
				if err != nil || string(resp.Body) != "ok" {
					t.Fatalf("got %v, want ok", err)
				}
				return
			}
			wantErr(t, err, fetch.ErrDomain, tc.host)
			// The refusal names the usual fix (issue 14).
			if !strings.Contains(err.Error(), "allowed_remote_resources") {
				t.Errorf("refusal does not mention allowed_remote_resources: %v", err)
			}
		})
	}
}

// TestInternalAddressRefused: every answer the resolver gives is checked
// with netguard (classification itself is tested there); one internal
// answer among public ones is enough to refuse, and nothing is dialled.
func TestInternalAddressRefused(t *testing.T) {
	internal := []string{
		"0.0.0.0", "0.1.2.3", "127.0.0.1", "127.9.9.9", "10.1.2.3", "172.16.0.1", "172.31.255.255",
		"192.168.1.1", "100.64.0.1", "169.254.1.1", "198.18.0.1", "198.19.255.255",
		"224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
		"::", "::1", "fc00::1", "fd12:3456::1", "fe80::1", "ff02::1",
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:192.168.0.1",
		"::127.0.0.1", "64:ff9b::a00:1", "64:ff9b::7f00:1",
	}
	public := netip.MustParseAddr("93.184.216.34")
	for _, s := range internal {
		for _, mixed := range []bool{false, true} {
			name := s
			if mixed {
				name += " after public"
			}
			t.Run(name, func(t *testing.T) {
				a := netip.MustParseAddr(s)
				r := fetchtest.NewResolver()
				if mixed {
					r.Set("victim.test", public, a)
				} else {
					r.Set("victim.test", a)
				}
				c := fetch.New(fetch.Options{AllowedDomains: []string{"victim.test"}, Resolver: r, RootCAs: fetchtest.CertPool()})
				var dials atomic.Int64
				fetch.SetDialForTest(c, func(ctx context.Context, network, addr string) (net.Conn, error) {
					dials.Add(1)
					return nil, errors.New("test: dial must not happen")
				})
				_, err := c.Get(context.Background(), "https://victim.test/x", nil)
				wantErr(t, err, fetch.ErrInternalAddress, "victim.test", a.String())
				if dials.Load() != 0 {
					t.Errorf("dialled %d times", dials.Load())
				}
			})
		}
	}
}

// TestIPLiteralVetted: an IP literal host goes through the same address
// rules without a lookup.
func TestIPLiteralVetted(t *testing.T) {
	r := fetchtest.NewResolver()
	for _, host := range []string{"10.0.0.1", "[::1]", "[::ffff:7f00:1]", "169.254.169.254"} {
		t.Run(host, func(t *testing.T) {
			h := fetchtest.StripPort(host)
			c := fetch.New(fetch.Options{AllowedDomains: []string{h, "::ffff:127.0.0.1", "127.0.0.1"}, Resolver: r})
			_, err := c.Get(context.Background(), "https://"+host+"/x", nil)
			wantErr(t, err, fetch.ErrInternalAddress)
		})
	}
}

// TestLoopbackOnlyThroughAllowedPrivateNetworks: the same loopback server
// is refused unless its range is listed.
func TestLoopbackOnlyThroughAllowedPrivateNetworks(t *testing.T) {
	e := newEnv(t, text("ok"), "forge.test")
	for _, tc := range []struct {
		name string
		nets []netip.Prefix
		ok   bool
	}{
		{"none", nil, false},
		{"other range", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, false},
		{"neighbouring host", []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}, false},
		{"exact host", []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, true},
		{"loopback range", []netip.Prefix{fetchtest.Loopback}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := e.opts("forge.test")
			o.AllowedPrivateNetworks = tc.nets
			_, err := fetch.New(o).Get(context.Background(), e.url("forge.test", "/"), nil)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantErr(t, err, fetch.ErrInternalAddress, "127.0.0.1", "loopback")
		})
	}
}

// TestMetadataNeverExempt: allowed_private_networks never opens cloud
// metadata endpoints, by address or by name.
func TestMetadataNeverExempt(t *testing.T) {
	r := fetchtest.NewResolver()
	r.Set("meta.test", netip.MustParseAddr("169.254.169.254"))
	r.Set("metadata.google.internal", netip.MustParseAddr("169.254.169.254"))
	o := fetch.Options{
		AllowedDomains:         []string{"meta.test", "metadata.google.internal", "169.254.169.254"},
		AllowedPrivateNetworks: []netip.Prefix{netip.MustParsePrefix("169.254.0.0/16")},
		Resolver:               r,
	}
	c := fetch.New(o)
	for _, u := range []string{"https://meta.test/latest", "https://metadata.google.internal/x", "https://169.254.169.254/latest"} {
		_, err := c.Get(context.Background(), u, nil)
		wantErr(t, err, fetch.ErrInternalAddress, "metadata")
	}
	if n := r.Lookups("metadata.google.internal"); n != 0 {
		t.Errorf("metadata name was looked up %d times", n)
	}
}

// TestDNSRebindingPublicThenInternal: the resolver answers a public address
// first and an internal one afterwards. The client looks the name up once
// per request and dials only the vetted public address (routed to the
// loopback server by the test dialer, so no traffic leaves the machine); the
// next request sees the internal answer and is refused even though a pooled
// connection exists.
func TestDNSRebindingPublicThenInternal(t *testing.T) {
	const certHost = "rebind.test"
	e2 := newEnv(t, text("ok"), certHost)
	public := netip.MustParseAddr("93.184.216.34")
	r := fetchtest.NewResolver()
	r.SetSequence(certHost, []netip.Addr{public}, []netip.Addr{netip.MustParseAddr("10.0.0.7")})
	c := fetch.New(fetch.Options{AllowedDomains: []string{certHost}, Resolver: r, RootCAs: fetchtest.CertPool()})
	var mu sync.Mutex
	var targets []string
	fetch.SetDialForTest(c, func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		targets = append(targets, addr)
		mu.Unlock()
		var d net.Dialer
		return d.DialContext(ctx, network, e2.srv.Listener.Addr().String())
	})
	resp, err := c.Get(context.Background(), e2.url(certHost, "/x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != "ok" {
		t.Errorf("body %q", resp.Body)
	}
	if n := r.Lookups(certHost); n != 1 {
		t.Errorf("%d lookups for one request, want 1", n)
	}
	mu.Lock()
	want := netip.AddrPortFrom(public, mustPort(t, e2.port)).String()
	if len(targets) != 1 || targets[0] != want {
		t.Errorf("dialled %v, want only %s", targets, want)
	}
	mu.Unlock()

	_, err = c.Get(context.Background(), e2.url(certHost, "/x"), nil)
	wantErr(t, err, fetch.ErrInternalAddress, "10.0.0.7")
	if n := r.Lookups(certHost); n != 2 {
		t.Errorf("%d lookups after two requests, want 2", n)
	}
	if e2.hits.Load() != 1 {
		t.Errorf("server got %d requests, want 1", e2.hits.Load())
	}
}

// TestDNSRebindingRealDial: the same with real loopback dials. The first
// answer (127.0.0.1) is vetted; later answers point at 127.0.0.2 where no
// server listens. One lookup per request, and the server sees the
// connection on the vetted address.
func TestDNSRebindingRealDial(t *testing.T) {
	var local atomic.Value
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		local.Store(r.Context().Value(http.LocalAddrContextKey).(net.Addr).String())
		fmt.Fprint(w, "ok")
	}, "rebind.test")
	e.resolver.SetSequence("rebind.test", []netip.Addr{fetchtest.LoopbackAddr}, []netip.Addr{netip.MustParseAddr("127.0.0.2")})
	c := fetch.New(e.opts("rebind.test"))
	if _, err := c.Get(context.Background(), e.url("rebind.test", "/"), nil); err != nil {
		t.Fatal(err)
	}
	if n := e.resolver.Lookups("rebind.test"); n != 1 {
		t.Errorf("%d lookups, want 1", n)
	}
	if got, want := local.Load(), "127.0.0.1:"+e.port; got != want {
		t.Errorf("connection reached %v, want %s", got, want)
	}
}

func mustPort(t *testing.T, s string) uint16 {
	var p uint16
	if _, err := fmt.Sscan(s, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRedirectRefused: 3xx is never followed, whether the target is public
// or internal, and the error names the Location.
func TestRedirectRefused(t *testing.T) {
	target := newEnv(t, text("target"), "target.test")
	for _, tc := range []struct{ name, loc, want string }{
		{"public", "https://target.test:" + target.port + "/moved", "https://target.test:" + target.port + "/moved"},
		{"internal", "https://169.254.169.254/latest/meta-data/", "169.254.169.254"},
		{"loopback", "https://127.0.0.1:" + target.port + "/", "127.0.0.1"},
		{"relative", "/elsewhere", "/elsewhere"},
		{"token in query", "https://target.test/x?access_token=hunter2secret", "access_token=REDACTED"},
	} {
		for _, code := range []int{301, 302, 303, 307, 308} {
			t.Run(fmt.Sprintf("%s %d", tc.name, code), func(t *testing.T) {
				e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, tc.loc, code)
				}, "origin.test")
				o := e.opts("origin.test", "target.test", "127.0.0.1", "169.254.169.254")
				o.Resolver = e.resolver
				e.resolver.Set("target.test", fetchtest.LoopbackAddr)
				_, err := fetch.New(o).Get(context.Background(), e.url("origin.test", "/start"), nil)
				wantErr(t, err, fetch.ErrRedirect, tc.want, fmt.Sprint(code))
				if strings.Contains(err.Error(), "hunter2secret") {
					t.Errorf("error leaks token: %s", err)
				}
				if n := e.resolver.Lookups("target.test"); n != 0 {
					t.Errorf("redirect target looked up %d times", n)
				}
			})
		}
	}
	if n := target.hits.Load(); n != 0 {
		t.Errorf("redirect target got %d requests", n)
	}
}

func TestStatusError(t *testing.T) {
	big := strings.Repeat("e", fetch.MaxErrorBody+500)
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/404":
			http.Error(w, "not here\nsecond line", 404)
		case "/500":
			w.WriteHeader(500)
			fmt.Fprint(w, big)
		case "/echo":
			w.WriteHeader(401)
			fmt.Fprint(w, "bad credentials Authorization: Bearer sekritvalue123 ghp_0123456789abcdefghijABCD")
		case "/204":
			w.WriteHeader(204)
		}
	}, "files.test")
	c := fetch.New(e.opts("files.test"))

	_, err := c.Get(context.Background(), e.url("files.test", "/404"), nil)
	wantErr(t, err, fetch.ErrStatus, "404", "not here second line", "/404")
	var se *fetch.StatusError
	if !errors.As(err, &se) || se.StatusCode != 404 {
		t.Fatalf("no *StatusError with 404 in %v", err)
	}

	_, err = c.Get(context.Background(), e.url("files.test", "/500"), nil)
	wantErr(t, err, fetch.ErrStatus, "500")
	if !errors.As(err, &se) || len(se.Body) != fetch.MaxErrorBody {
		t.Errorf("body excerpt is %d bytes, want %d", len(se.Body), fetch.MaxErrorBody)
	}
	if len(err.Error()) > 500 {
		t.Errorf("message is %d bytes long", len(err.Error()))
	}

	_, err = c.Get(context.Background(), e.url("files.test", "/echo"), nil)
	wantErr(t, err, fetch.ErrStatus, "401")
	for _, secret := range []string{"sekritvalue123", "ghp_0123456789abcdefghijABCD"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error leaks %q: %s", secret, err)
		}
		if errors.As(err, &se) && bytes.Contains(se.Body, []byte(secret)) {
			t.Errorf("StatusError.Body keeps %q", secret)
		}
	}

	_, err = c.Get(context.Background(), e.url("files.test", "/204"), nil)
	wantErr(t, err, fetch.ErrStatus, "204")
}

// TestSizeLimit: exactly MaxSize is fine, one byte more fails, whether or
// not the server declares a length, and a compressed body is limited after
// decompression.
func TestSizeLimit(t *testing.T) {
	const max = 1000
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.URL.Query().Get("n"), &n)
		body := bytes.Repeat([]byte("a"), n)
		switch r.URL.Path {
		case "/declared":
			w.Header().Set("Content-Length", fmt.Sprint(n))
			w.Write(body)
		case "/streamed": // no Content-Length: chunks flushed one by one
			for len(body) > 0 {
				k := min(100, len(body))
				w.Write(body[:k])
				w.(http.Flusher).Flush()
				body = body[k:]
			}
		case "/gzip": // tiny on the wire, n bytes once decompressed
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			zw.Write(body)
			zw.Close()
		}
	}, "files.test")
	o := e.opts("files.test")
	o.MaxSize = max
	c := fetch.New(o)
	if c.MaxSize() != max {
		t.Errorf("MaxSize() = %d", c.MaxSize())
	}
	for _, path := range []string{"/declared", "/streamed", "/gzip"} {
		t.Run(path, func(t *testing.T) {
			resp, err := c.Get(context.Background(), e.url("files.test", path+"?n=1000"), nil)
			if err != nil || len(resp.Body) != max {
				t.Fatalf("at the limit: %v", err)
			}
			_, err = c.Get(context.Background(), e.url("files.test", path+"?n=1001"), nil)
			wantErr(t, err, fetch.ErrTooLarge, "1000")
		})
	}
	if d := fetch.New(fetch.Options{}).MaxSize(); d != fetch.DefaultMaxSize {
		t.Errorf("default MaxSize = %d", d)
	}
}

// TestTimeoutWholeExchange: a server that sends headers and part of the
// body then stalls is cut off at the timeout; so is one that never answers.
func TestTimeoutWholeExchange(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slowbody" {
			w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}, "files.test")
	o := e.opts("files.test")
	o.Timeout = 300 * time.Millisecond
	c := fetch.New(o)
	for _, path := range []string{"/slowbody", "/slowheaders"} {
		start := time.Now()
		_, err := c.Get(context.Background(), e.url("files.test", path), nil)
		wantErr(t, err, fetch.ErrTimeout, path)
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s: took %v with a 300ms timeout", path, d)
		}
	}
	// A caller's own cancellation is not reported as our timeout.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Get(ctx, e.url("files.test", "/slowheaders"), nil)
	if err == nil || errors.Is(err, fetch.ErrTimeout) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: got %v", err)
	}
}

func TestGetPinned(t *testing.T) {
	e := newEnv(t, text("pinned content"), "files.test")
	c := fetch.New(e.opts("files.test"))
	u := e.url("files.test", "/f")
	good := ref.SHA256([]byte("pinned content"))

	b, err := c.GetPinned(context.Background(), u, good)
	if err != nil || string(b) != "pinned content" {
		t.Fatalf("good pin: %q %v", b, err)
	}
	b, err = c.GetPinned(context.Background(), u, ref.Digest(strings.ToUpper(string(good))))
	if err != nil || string(b) != "pinned content" {
		t.Fatalf("upper-case pin: %q %v", b, err)
	}

	wrong := ref.SHA256([]byte("other content"))
	b, err = c.GetPinned(context.Background(), u, wrong)
	wantErr(t, err, fetch.ErrHashMismatch, string(wrong), string(good))
	if b != nil {
		t.Errorf("mismatch returned %d bytes", len(b))
	}

	hits := e.hits.Load()
	b, err = c.GetPinned(context.Background(), u, "")
	wantErr(t, err, fetch.ErrMissingDigest)
	if b != nil || e.hits.Load() != hits {
		t.Errorf("missing pin: got bytes or made a request")
	}
	_, err = c.GetPinned(context.Background(), u, "abc")
	wantErr(t, err, ref.ErrBadDigest)
	if e.hits.Load() != hits {
		t.Errorf("bad pin made a request")
	}
}

// TestConnectionReuse: sequential requests to one host share a connection.
func TestConnectionReuse(t *testing.T) {
	var mu sync.Mutex
	remotes := map[string]bool{}
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		remotes[r.RemoteAddr] = true
		mu.Unlock()
	}, "files.test")
	c := fetch.New(e.opts("files.test"))
	for i := 0; i < 5; i++ {
		if _, err := c.Get(context.Background(), e.url("files.test", "/"), nil); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if n := len(remotes); n != 1 {
		t.Errorf("%d connections for 5 sequential requests, want 1", n)
	}
	c.CloseIdleConnections()
}

// TestNoTLSWithoutTrust: the system roots (no RootCAs) do not trust the
// test server, proving RootCAs is what lets tests in.
func TestNoTLSWithoutTrust(t *testing.T) {
	e := newEnv(t, text("ok"), "files.test")
	o := e.opts("files.test")
	o.RootCAs = nil
	_, err := fetch.New(o).Get(context.Background(), e.url("files.test", "/"), nil)
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("got %v, want a certificate error", err)
	}
}

// TestServerNameIsHost: the certificate is checked against the host name,
// not the dialled address: a server whose certificate lacks the name fails.
func TestServerNameIsHost(t *testing.T) {
	e := newEnv(t, text("ok"), "other.test")
	e.resolver.Set("files.test", fetchtest.LoopbackAddr)
	_, err := fetch.New(e.opts("files.test")).Get(context.Background(), e.url("files.test", "/"), nil)
	if err == nil || !strings.Contains(err.Error(), "files.test") || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("got %v, want a certificate error for files.test", err)
	}
}
