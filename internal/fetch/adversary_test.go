package fetch_test

import (
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/fetch/fetchtest"
)

// TestProxyEnvironmentIgnored: HTTP(S)_PROXY and ALL_PROXY never reach the
// fetch transport. A proxy would be dialled instead of the vetted
// addresses, so honouring it would bypass every address rule.
func TestProxyEnvironmentIgnored(t *testing.T) {
	ln, proxied := fetchtest.Sink(t)
	proxy := "http://" + ln.Addr().String()
	for _, k := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"} {
		t.Setenv(k, proxy)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")

	e := newEnv(t, text("direct"), "files.test")
	c := fetch.New(e.opts("files.test"))
	resp, err := c.Get(context.Background(), e.url("files.test", "/"), nil)
	if err != nil {
		t.Fatalf("fetch with proxy variables set: %v", err)
	}
	if string(resp.Body) != "direct" || e.hits.Load() != 1 {
		t.Errorf("body %q, %d server hits", resp.Body, e.hits.Load())
	}
	if n := proxied.Load(); n != 0 {
		t.Errorf("the proxy from the environment got %d connections", n)
	}
	trs := fetch.TransportsForTest(c)
	if len(trs) == 0 {
		t.Fatal("no transport built")
	}
	for _, tr := range trs {
		if tr.Proxy != nil {
			t.Errorf("transport has a Proxy function")
		}
	}
}

// TestTransportSettings: TLS 1.2 at least, certificate checks on, header
// bytes bounded, on every transport the client builds.
func TestTransportSettings(t *testing.T) {
	e := newEnv(t, text("ok"), "files.test", "other.test")
	c := fetch.New(e.opts("files.test", "other.test"))
	for _, h := range []string{"files.test", "other.test"} {
		if _, err := c.Get(context.Background(), e.url(h, "/"), nil); err != nil {
			t.Fatal(err)
		}
	}
	trs := fetch.TransportsForTest(c)
	if len(trs) != 2 {
		t.Fatalf("%d transports for two hosts, want 2", len(trs))
	}
	for _, tr := range trs {
		tc := tr.TLSClientConfig
		if tc == nil || tc.InsecureSkipVerify || tc.MinVersion < tls.VersionTLS12 || tc.ServerName == "" || tc.VerifyPeerCertificate != nil {
			t.Errorf("TLS config %+v", tc)
		}
		if tr.MaxResponseHeaderBytes <= 0 || tr.MaxResponseHeaderBytes > fetch.MaxHeaderBytes {
			t.Errorf("MaxResponseHeaderBytes = %d", tr.MaxResponseHeaderBytes)
		}
		//lint:ignore SA1019 the deprecated DialTLS hook would bypass the vetted dialer too
		if tr.Proxy != nil || tr.DialTLSContext != nil || tr.DialTLS != nil {
			t.Errorf("transport can bypass the vetted dialer")
		}
	}
}

// TestNoConnectionSharingAcrossHosts: two allowed hosts on the same address
// never share a connection (no HTTP/2 coalescing, pools keyed by host).
func TestNoConnectionSharingAcrossHosts(t *testing.T) {
	var mu sync.Mutex
	byHost := map[string]map[string]bool{}
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := strings.Split(r.Host, ":")[0]
		if byHost[h] == nil {
			byHost[h] = map[string]bool{}
		}
		byHost[h][r.RemoteAddr] = true
		mu.Unlock()
	}, "a.test", "b.test")
	c := fetch.New(e.opts("a.test", "b.test"))
	for i := 0; i < 3; i++ {
		for _, h := range []string{"a.test", "b.test"} {
			if _, err := c.Get(context.Background(), e.url(h, "/"), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(byHost["a.test"]) == 0 || len(byHost["b.test"]) == 0 {
		t.Fatalf("requests seen: %v", byHost)
	}
	for conn := range byHost["a.test"] {
		if byHost["b.test"][conn] {
			t.Errorf("connection %s served both hosts", conn)
		}
	}
}

// TestHeaderSizeLimit: a server cannot make the client buffer more than
// MaxHeaderBytes of headers.
func TestHeaderSizeLimit(t *testing.T) {
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.URL.Query().Get("n"), &n)
		w.Header().Set("X-Big", strings.Repeat("h", n))
		fmt.Fprint(w, "ok")
	}, "files.test")
	c := fetch.New(e.opts("files.test"))
	if _, err := c.Get(context.Background(), e.url("files.test", "/?n=4096"), nil); err != nil {
		t.Fatalf("small headers: %v", err)
	}
	_, err := c.Get(context.Background(), e.url("files.test", fmt.Sprintf("/?n=%d", 2*fetch.MaxHeaderBytes)), nil)
	var fe *fetch.Error
	if err == nil || !errors.As(err, &fe) {
		t.Fatalf("headers of %d bytes: %v, want an error", 2*fetch.MaxHeaderBytes, err)
	}
}

// TestInformationalFlood: a server answering with an endless run of 1xx
// responses gets an error, not an unbounded wait or buffer.
func TestInformationalFlood(t *testing.T) {
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		n := 2
		if r.URL.Path == "/flood" {
			n = 5000
		}
		// The header map is set once: net/http's HTTP/2 server encodes 1xx
		// headers asynchronously from the same map, so it must not change
		// between WriteHeader calls.
		w.Header().Set("Link", "</x.css>; rel=preload; "+strings.Repeat("p", 200))
		for i := 0; i < n; i++ {
			w.WriteHeader(http.StatusEarlyHints)
		}
		fmt.Fprint(w, "ok")
	}, "files.test")
	c := fetch.New(e.opts("files.test"))
	resp, err := c.Get(context.Background(), e.url("files.test", "/few"), nil)
	if err != nil || string(resp.Body) != "ok" || resp.StatusCode != 200 {
		t.Fatalf("two 103s then 200: %v", err)
	}
	if _, err := c.Get(context.Background(), e.url("files.test", "/flood"), nil); err == nil {
		t.Fatal("5000 informational responses accepted")
	}
}

// TestTrailersNotMerged: trailers never masquerade as headers callers read
// (forge pagination, rate limits).
func TestTrailersNotMerged(t *testing.T) {
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "Link")
		fmt.Fprint(w, "body")
		w.Header().Set("Link", `<https://evil.test/next>; rel="next"`)
	}, "files.test")
	resp, err := fetch.New(e.opts("files.test")).Get(context.Background(), e.url("files.test", "/"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != "body" || resp.Header.Get("Link") != "" {
		t.Errorf("body %q, Link header %q", resp.Body, resp.Header.Get("Link"))
	}
}

// TestContentEncodingTricks: a body claiming gzip that is not gzip is an
// error; an encoding the client did not ask for is never decoded (so a pin
// covers exactly the bytes received).
func TestContentEncodingTricks(t *testing.T) {
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/badgzip":
			w.Header().Set("Content-Encoding", "gzip")
			fmt.Fprint(w, "this is not gzip at all")
		case "/br":
			w.Header().Set("Content-Encoding", "br")
			fmt.Fprint(w, "raw")
		case "/gzipgzip":
			w.Header().Set("Content-Encoding", "gzip, gzip")
			zw := gzip.NewWriter(w)
			zw.Write([]byte("inner"))
			zw.Close()
		}
	}, "files.test")
	c := fetch.New(e.opts("files.test"))
	if _, err := c.Get(context.Background(), e.url("files.test", "/badgzip"), nil); err == nil {
		t.Error("invalid gzip body accepted")
	} else if strings.ContainsAny(err.Error(), "\r\n") {
		t.Errorf("error not one line: %q", err)
	}
	resp, err := c.Get(context.Background(), e.url("files.test", "/br"), nil)
	if err != nil || string(resp.Body) != "raw" {
		t.Errorf("br: %v", err)
	}
	resp, err = c.Get(context.Background(), e.url("files.test", "/gzipgzip"), nil)
	if err == nil && string(resp.Body) == "inner" {
		t.Errorf("stacked encoding decoded once and passed off as content")
	}
}

// TestErrorsCannotInjectLines: a hostile error body with CR/LF, terminal
// escapes and C1 controls comes out as one inert line.
func TestErrorsCannotInjectLines(t *testing.T) {
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(418)
		fmt.Fprint(w, "nope\r\nfullsend: all checks passed\x1b[2K\x1b]0;title\x07\u009b31m")
	}, "files.test")
	_, err := fetch.New(e.opts("files.test")).Get(context.Background(), e.url("files.test", "/"), nil)
	wantErr(t, err, fetch.ErrStatus, "418")
	if strings.ContainsAny(err.Error(), "\r\n\x1b\x07\u009b") {
		t.Errorf("control characters survive in %q", err)
	}
}
