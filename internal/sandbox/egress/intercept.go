package egress

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fullsend-ai/fullsend/internal/secrets"
)

// This file is the proxy's half of the secrets broker (package secrets
// owns the swap rule; this file only calls it): a CONNECT to a secret's
// host is terminated here, with a leaf of the run CA for TLS or as plain
// http for a loopback host service, and every request inside it is
// checked, rewritten and sent upstream over a connection to the vetted
// addresses, re-encrypted with full verification against the broker's
// roots. HTTP/1.1 on both sides (ALPN offers http/1.1 only); responses
// stream with a flush after every write.

// SecretRecorder receives every request the secrets broker refused. When
// Config.Log implements it, the run records each as a critical finding.
type SecretRecorder interface {
	SecretRefused(dest, secret, reason string)
}

// HandshakeTimeout bounds the sandbox's TLS handshake with the proxy and
// the wait for its first byte inside a terminated tunnel.
const HandshakeTimeout = 30 * time.Second

// refuse logs and records r, a request the broker refused.
func (g gate) refuse(r *secrets.Refusal) {
	p := g.p
	p.logLine(g.tag, "deny "+r.Dest+": "+r.Error())
	if rec, ok := p.log.(SecretRecorder); ok {
		rec.SecretRefused(r.Dest, r.Secret, r.Error())
	}
}

// checkHead refuses a placeholder in a request head that is never
// rewritten (a CONNECT, a request to a host that is not a secret's).
func (g gate) checkHead(c net.Conn, req *http.Request, d secrets.Dest, what string) bool {
	b := g.secrets
	if b == nil {
		return true
	}
	err := b.Check(req.RequestURI, what+" target", d)
	if err == nil {
		err = b.CheckHeader(req.Header, what, d)
	}
	var r *secrets.Refusal
	if errors.As(err, &r) {
		g.refuse(r)
		respond(c, http.StatusForbidden, r.Error())
		return false
	}
	return true
}

// bufConn reads through the bufio.Reader that already holds the bytes
// the client sent after its CONNECT head.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// intercept serves a CONNECT to host:port, a secret's destination, whose
// vetted addresses are addrs: TLS from the sandbox is terminated with a
// leaf of the run CA, anything else is read as plain http.
func (g gate) intercept(c net.Conn, br *bufio.Reader, host string, port int, addrs []netip.Addr) {
	p := g.p
	b := g.secrets
	host = normalize(host)
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	c.SetReadDeadline(time.Now().Add(HandshakeTimeout))
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	var conn net.Conn = &bufConn{Conn: c, r: br}
	useTLS := first[0] == 0x16 // a TLS handshake record
	if useTLS {
		tc := tls.Server(conn, &tls.Config{
			MinVersion: tls.VersionTLS12,
			NextProtos: []string{"http/1.1"},
			GetCertificate: func(hi *tls.ClientHelloInfo) (*tls.Certificate, error) {
				if hi.ServerName != "" && normalize(hi.ServerName) != host {
					return nil, fmt.Errorf("server name %q is not the CONNECT host %q", hi.ServerName, host)
				}
				return b.CA().Leaf(host)
			},
		})
		if err := tc.Handshake(); err != nil {
			p.logLine(g.tag, fmt.Sprintf("deny %s: TLS handshake with the sandbox: %v", net.JoinHostPort(host, strconv.Itoa(port)), err))
			return
		}
		conn = tc
	}
	c.SetReadDeadline(time.Time{})
	g.serveHTTP(conn, host, port, useTLS, addrs, nil)
}

// SniffWait bounds how long the proxy waits for the first bytes of a
// tunnel to a host that is not a secret's, to tell plain http (inspected
// for placeholders) from anything else (passed through untouched): a
// protocol whose server speaks first is passed through after it.
const SniffWait = 2 * time.Second

// tunnelSecrets serves a CONNECT when the run has secrets: a secret's
// host is intercepted; another host gets a tunnel in which plain http is
// read request by request (a placeholder there is refused like in a
// proxied http:// request) and anything else (TLS) passes untouched.
func (g gate) tunnelSecrets(c net.Conn, br *bufio.Reader, req *http.Request) {
	p := g.p
	host, port, err := splitHostPortDefault(req.RequestURI, 443)
	if err != nil {
		respond(c, http.StatusBadRequest, err.Error())
		return
	}
	if !g.checkHead(c, req, secrets.Dest{Host: host, Port: port}, "CONNECT request") {
		return
	}
	addrs, err := g.check(host, port)
	if err != nil {
		respond(c, http.StatusForbidden, err.Error())
		return
	}
	if g.secrets.Intercepts(host, port) {
		g.intercept(c, br, host, port, addrs)
		return
	}
	up, err := p.dial(context.Background(), addrs, port)
	if err != nil {
		respond(c, http.StatusBadGateway, fmt.Sprintf("connect %s: upstream unreachable", net.JoinHostPort(host, strconv.Itoa(port))))
		return
	}
	if !p.track(up, true) {
		up.Close()
		return
	}
	tracked := &trackedConn{Conn: up, p: p}
	defer tracked.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	if plainHTTP(c, br) {
		g.serveHTTP(&bufConn{Conn: c, r: br}, normalize(host), port, false, addrs, tracked)
		return
	}
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		if _, err := up.Write(b); err != nil {
			return
		}
		br.Discard(n)
	}
	pipe(c, up)
}

// plainHTTP reports whether the first bytes the client sends in a tunnel
// (waiting at most SniffWait) start an HTTP/1 request line.
func plainHTTP(c net.Conn, br *bufio.Reader) bool {
	c.SetReadDeadline(time.Now().Add(SniffWait))
	defer c.SetReadDeadline(time.Time{})
	for _, m := range []string{"GET ", "POST ", "PUT ", "PATCH ", "DELETE ", "HEAD ", "OPTIONS "} {
		b, _ := br.Peek(len(m))
		if len(b) > 0 && (b[0] < 'A' || b[0] > 'Z') {
			return false
		}
		if string(b) == m {
			return true
		}
	}
	return false
}

// serveHTTP serves the HTTP/1.1 requests of a tunnel to host:port (conn,
// already decrypted when useTLS): each is checked and rewritten by the
// broker and sent upstream, over TLS verified against the broker's roots
// when useTLS, over connections to addrs (first, when not nil, is the one
// to use first).
func (g gate) serveHTTP(conn net.Conn, host string, port int, useTLS bool, addrs []netip.Addr, first net.Conn) {
	p := g.p
	b := g.secrets
	d := secrets.Dest{Host: host, Port: port, TLS: useTLS}
	var firstMu sync.Mutex
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			firstMu.Lock()
			f := first
			first = nil
			firstMu.Unlock()
			if f != nil {
				return f, nil
			}
			up, err := p.dial(ctx, addrs, port)
			if err != nil {
				return nil, err
			}
			if !p.track(up, true) {
				up.Close()
				return nil, net.ErrClosed
			}
			return &trackedConn{Conn: up, p: p}, nil
		},
		TLSClientConfig:     &tls.Config{RootCAs: b.Roots(), ServerName: host, MinVersion: tls.VersionTLS12},
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{}, // HTTP/1.1
		TLSHandshakeTimeout: DialTimeout,
		DisableCompression:  true,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
	}
	defer tr.CloseIdleConnections()
	scheme := "http"
	if useTLS {
		scheme = "https"
	}
	hostport := net.JoinHostPort(host, strconv.Itoa(port))
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host, pr.Out.Host = scheme, hostport, pr.In.Host
		},
		Transport:     tr,
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			scrubResponse(b, resp)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if bs, ok := r.Context().Value(bodyKey{}).(*secrets.BodyScanner); ok && bs.Refusal() != nil {
				http.Error(w, "fullsend sandbox: "+bs.Refusal().Error(), http.StatusForbidden)
				return
			}
			if errors.Is(err, context.Canceled) {
				return
			}
			p.logLine(g.tag, fmt.Sprintf("upstream %s: %v", hostport, err))
			http.Error(w, fmt.Sprintf("fullsend sandbox: upstream %s: %v", hostport, err), http.StatusBadGateway)
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	var active sync.WaitGroup
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		active.Add(1)
		defer active.Done()
		if !sameHost(r.Host, host, port, useTLS) {
			p.logLine(g.tag, fmt.Sprintf("deny %s: request for host %q inside its tunnel", hostport, r.Host))
			http.Error(w, fmt.Sprintf("fullsend sandbox: the Host of a request through a tunnel to %s must be that host", hostport), http.StatusMisdirectedRequest)
			return
		}
		if r.Header.Get("Upgrade") != "" {
			// After an upgrade the proxy would pass frames it does not
			// read: a placeholder inside would go unseen.
			p.logLine(g.tag, fmt.Sprintf("deny %s: protocol upgrade %q", hostport, r.Header.Get("Upgrade")))
			http.Error(w, fmt.Sprintf("fullsend sandbox: protocol upgrades are not proxied through %s (a tunnel the secrets broker reads)", hostport), http.StatusForbidden)
			return
		}
		err := b.Check(r.RequestURI, "request target", d)
		if err == nil {
			_, err = b.Rewrite(r.Header, d)
		}
		var ref *secrets.Refusal
		if errors.As(err, &ref) {
			g.refuse(ref)
			http.Error(w, "fullsend sandbox: "+ref.Error(), http.StatusForbidden)
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			bs := b.NewBodyScanner(r.Body, d, g.refuse)
			if !prescan(r, bs) {
				http.Error(w, "fullsend sandbox: "+bs.Refusal().Error(), http.StatusForbidden)
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, bs))
		}
		rp.ServeHTTP(w, r)
	})
	l := &oneConn{c: conn, done: make(chan struct{})}
	srv := &http.Server{
		Handler: h, ReadHeaderTimeout: HandshakeTimeout, MaxHeaderBytes: MaxHeaderBytes,
		ErrorLog: log.New(io.Discard, "", 0),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateClosed || s == http.StateHijacked {
				l.Close()
			}
		},
	}
	srv.Serve(l)
	active.Wait()
}

// scrubResponse replaces real values by their placeholders in resp's
// header and body; the body's length may change, so it is sent without
// Content-Length.
func scrubResponse(b *secrets.Broker, resp *http.Response) {
	b.ScrubHeader(resp.Header)
	if resp.Body == nil || resp.Body == http.NoBody {
		return
	}
	resp.Body = b.NewScrubber(resp.Body)
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
}

// MaxPrescan bounds a request body the proxy reads whole, and scans for
// placeholders, before anything of the request goes upstream (a body of
// known length up to it); a longer or chunked body is scanned as it
// streams, and a placeholder found there cuts it before the placeholder.
const MaxPrescan = 8 << 20

// prescan sets r's body to bs; a body of known length up to MaxPrescan is
// read and scanned first. It reports false when that found a placeholder.
func prescan(r *http.Request, bs *secrets.BodyScanner) bool {
	if r.ContentLength < 0 || r.ContentLength > MaxPrescan {
		r.Body = bs
		return true
	}
	buf, err := io.ReadAll(io.LimitReader(bs, r.ContentLength))
	if bs.Refusal() != nil {
		return false
	}
	if err != nil {
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(buf), errReader{err}))
		return true
	}
	r.Body = io.NopCloser(bytes.NewReader(buf))
	return true
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// bodyKey is the context key of a request's body scanner.
type bodyKey struct{}

// sameHost reports whether a request's Host names the tunnel's host and
// port (the default port of the scheme may be left out).
func sameHost(reqHost, host string, port int, useTLS bool) bool {
	h, ps, err := net.SplitHostPort(reqHost)
	if err != nil {
		h, ps = reqHost, ""
	}
	if normalize(h) != host {
		return false
	}
	if ps == "" {
		def := 80
		if useTLS {
			def = 443
		}
		return port == def
	}
	n, err := strconv.Atoi(ps)
	return err == nil && n == port
}

func normalize(h string) string {
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().String()
	}
	return h
}

// trackedConn is an upstream connection of the proxy, untracked on Close.
type trackedConn struct {
	net.Conn
	p    *Proxy
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() { c.p.track(c.Conn, false) })
	return c.Conn.Close()
}

// oneConn is a listener that yields c once, then blocks until closed.
type oneConn struct {
	mu   sync.Mutex
	c    net.Conn
	done chan struct{}
	once sync.Once
}

func (l *oneConn) Accept() (net.Conn, error) {
	l.mu.Lock()
	c := l.c
	l.c = nil
	l.mu.Unlock()
	if c != nil {
		return c, nil
	}
	<-l.done
	return nil, net.ErrClosed
}

func (l *oneConn) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *oneConn) Addr() net.Addr { return dummyAddr{} }

type dummyAddr struct{}

func (dummyAddr) Network() string { return "tcp" }
func (dummyAddr) String() string  { return "sandbox" }
