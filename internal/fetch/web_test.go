package fetch_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/fetch/fetchtest"
)

// webEnv is one plain-http loopback server reachable as page.test, with
// internal.test resolving to an internal (never dialled) address.
type webEnv struct {
	srv  *httptest.Server
	port int
	res  *fetchtest.Resolver
	hits atomic.Int64
}

func newWebEnv(t *testing.T, h http.HandlerFunc) *webEnv {
	t.Helper()
	e := &webEnv{res: fetchtest.NewResolver()}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(e.srv.Close)
	_, p, _ := net.SplitHostPort(e.srv.Listener.Addr().String())
	e.port, _ = strconv.Atoi(p)
	e.res.Set("page.test", fetchtest.LoopbackAddr)
	e.res.Set("other.test", fetchtest.LoopbackAddr)
	e.res.Set("internal.test", netip.MustParseAddr("10.9.8.7"))
	return e
}

func (e *webEnv) url(host, path string) string {
	return "http://" + host + ":" + strconv.Itoa(e.port) + path
}

// client allows page.test and internal.test on the server's port, with
// loopback exempted.
func (e *webEnv) client(maxSize int64) *fetch.WebClient {
	return fetch.NewWeb(fetch.WebOptions{
		Allow:                  []fetch.WebAllow{{Host: "page.test", Port: e.port}, {Host: "internal.test", Port: e.port}, {Host: "10.9.8.7", Port: e.port}},
		AllowedPrivateNetworks: []netip.Prefix{fetchtest.Loopback},
		Resolver:               e.res,
		Timeout:                5 * time.Second,
		MaxSize:                maxSize,
	})
}

func TestWebGetFollowsRedirects(t *testing.T) {
	e := newWebEnv(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			http.Redirect(w, r, "/b", http.StatusFound)
		case "/b":
			http.Redirect(w, r, "/page", http.StatusMovedPermanently)
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<p>hello</p>")
		}
	})
	resp, err := e.client(0).Get(context.Background(), e.url("page.test", "/a"))
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != "<p>hello</p>" || resp.StatusCode != 200 || len(resp.Hops) != 3 || !strings.HasSuffix(resp.URL, "/page") {
		t.Fatalf("got %+v", resp)
	}
	if resp.Header.Get("Content-Type") != "text/html" {
		t.Errorf("header lost: %v", resp.Header)
	}
}

func TestWebGetRefusals(t *testing.T) {
	var e *webEnv
	e = newWebEnv(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-internal":
			http.Redirect(w, r, "http://internal.test:"+strconv.Itoa(e.portOf(r))+"/x", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/to-other":
			http.Redirect(w, r, "http://other.test:"+strconv.Itoa(e.portOf(r))+"/", http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/big":
			fmt.Fprint(w, strings.Repeat("x", 2048))
		case "/missing":
			http.NotFound(w, r)
		default:
			fmt.Fprint(w, "ok")
		}
	})
	c := e.client(1024)
	for _, tc := range []struct {
		name, url string
		class     error
		want      string
		hits      int64
	}{
		{"internal name", e.url("internal.test", "/"), fetch.ErrInternalAddress, "10.9.8.7", 0},
		{"internal literal", e.url("10.9.8.7", "/"), fetch.ErrInternalAddress, "10.9.8.7", 0},
		{"redirect to internal", e.url("page.test", "/to-internal"), fetch.ErrInternalAddress, "internal.test", 1},
		{"redirect to metadata", e.url("page.test", "/to-metadata"), fetch.ErrInternalAddress, "metadata", 1},
		{"redirect outside allowlist", e.url("page.test", "/to-other"), fetch.ErrDomain, "egress allowlist", 1},
		{"redirect to file", e.url("page.test", "/to-file"), fetch.ErrScheme, "http and https", 1},
		{"outside allowlist", e.url("other.test", "/"), fetch.ErrDomain, "other.test", 0},
		{"other port", "http://page.test:1/", fetch.ErrDomain, "port 1", 0},
		{"scheme", "ftp://page.test/", fetch.ErrScheme, "http and https", 0},
		{"userinfo", "http://u:p@page.test/", fetch.ErrScheme, "", 0},
		{"oversize", e.url("page.test", "/big"), fetch.ErrTooLarge, "1024", 1},
		{"too many redirects", e.url("page.test", "/loop"), fetch.ErrTooManyRedirects, "5", fetch.MaxWebHops + 1},
		{"status", e.url("page.test", "/missing"), fetch.ErrStatus, "404", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.hits.Load()
			_, err := c.Get(context.Background(), tc.url)
			wantErr(t, err, tc.class, tc.want)
			if got := e.hits.Load() - before; got != tc.hits {
				t.Errorf("server hit %d times, want %d", got, tc.hits)
			}
		})
	}
}

func (e *webEnv) portOf(*http.Request) int { return e.port }

// TestWebGetNoDowngrade: an https page may not redirect to plain http.
func TestWebGetNoDowngrade(t *testing.T) {
	res := fetchtest.NewResolver()
	res.Set("secure.test", fetchtest.LoopbackAddr)
	srv := fetchtest.NewServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/down" {
			http.Redirect(w, r, "http://secure.test/", http.StatusFound)
			return
		}
		fmt.Fprint(w, "secure")
	}), "secure.test")
	_, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(p)
	c := fetch.NewWeb(fetch.WebOptions{
		Allow:                  []fetch.WebAllow{{Host: "secure.test", Port: port}, {Host: "secure.test"}},
		AllowedPrivateNetworks: []netip.Prefix{fetchtest.Loopback},
		Resolver:               res,
		Client:                 fetch.New(fetch.Options{RootCAs: fetchtest.CertPool()}),
	})
	base := "https://secure.test:" + p
	resp, err := c.Get(context.Background(), base+"/")
	if err != nil || string(resp.Body) != "secure" {
		t.Fatalf("https page: %v %v", resp, err)
	}
	_, err = c.Get(context.Background(), base+"/down")
	wantErr(t, err, fetch.ErrScheme, "https to http")
}

// TestWebGetTimeout: the whole fetch is bounded.
func TestWebGetTimeout(t *testing.T) {
	release := make(chan struct{})
	e := newWebEnv(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	c := fetch.NewWeb(fetch.WebOptions{
		Allow:                  []fetch.WebAllow{{Host: "page.test", Port: e.port}},
		AllowedPrivateNetworks: []netip.Prefix{fetchtest.Loopback},
		Resolver:               e.res,
		Timeout:                200 * time.Millisecond,
	})
	_, err := c.Get(context.Background(), e.url("page.test", "/slow"))
	wantErr(t, err, fetch.ErrTimeout)
}
