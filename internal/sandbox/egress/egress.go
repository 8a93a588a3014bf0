package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fullsend-ai/fullsend/internal/netguard"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/secrets"
	"github.com/fullsend-ai/fullsend/internal/termsafe"
)

// DialTimeout bounds each upstream connection attempt.
const DialTimeout = 10 * time.Second

// Config is the policy the proxy enforces.
type Config struct {
	Allow                  []string // Network.Allow entries
	Services               []string // "IP:PORT" runner endpoints
	AllowedPrivateNetworks []netip.Prefix
	Resolver               sandbox.Resolver // nil = net.DefaultResolver
	Log                    io.Writer        // denials; may be nil
	// Authorize, when set, is called with each request head before any
	// destination check (the Kubernetes egress gateway's per-run tokens).
	// It returns the allowlist that applies to this request instead of
	// Allow, and a tag that starts the request's log lines; an error
	// refuses the request with 407 and is logged as one "deny" line.
	Authorize func(req *http.Request) (allow []string, tag string, err error)
	// LogAllowed adds one "allow HOST:PORT" line per admitted request to Log.
	LogAllowed bool
	// Secrets, when set, is the run's secrets broker: connections to a
	// secret's hosts are terminated and their placeholders swapped
	// (intercept.go); a placeholder anywhere else is refused.
	Secrets *secrets.Broker
	// AuthorizeSecrets, with Authorize, gives the secrets broker of each
	// authorized request instead of Secrets (nil: none); an error refuses
	// the request like Authorize's.
	AuthorizeSecrets func(req *http.Request) (*secrets.Broker, error)
}

// Proxy is an allowlisting HTTP/CONNECT proxy. Safe for concurrent use.
type Proxy struct {
	mu       sync.Mutex
	allow    []sandbox.AllowEntry
	services map[netip.AddrPort]bool
	priv     []netip.Prefix
	resolver sandbox.Resolver
	log      io.Writer
	logMu    sync.Mutex
	auth     func(*http.Request) ([]string, string, error)
	logAllow bool
	secrets  *secrets.Broker
	// authSecrets: Config.AuthorizeSecrets.
	authSecrets func(*http.Request) (*secrets.Broker, error)

	connMu    sync.Mutex
	listeners map[net.Listener]bool
	conns     map[net.Conn]bool
	closed    bool
	wg        sync.WaitGroup
}

// New validates c and returns a proxy.
func New(c Config) (*Proxy, error) {
	p := &Proxy{listeners: map[net.Listener]bool{}, conns: map[net.Conn]bool{}, log: c.Log, resolver: c.Resolver, auth: c.Authorize, logAllow: c.LogAllowed, secrets: c.Secrets, authSecrets: c.AuthorizeSecrets}
	if p.resolver == nil {
		p.resolver = net.DefaultResolver
	}
	if err := p.Update(c.Allow, c.Services, c.AllowedPrivateNetworks); err != nil {
		return nil, err
	}
	return p, nil
}

// UpdateSession is sandbox.NetworkUpdater for a backend session whose
// egress goes through p: n is checked and applied to connections opened
// afterwards. p is nil for a session provisioned without network access,
// which can only be "updated" to none. what names the session in errors
// ("local sandbox ID").
func UpdateSession(p *Proxy, what string, n sandbox.Network, priv []netip.Prefix) error {
	if err := sandbox.CheckNetwork(n); err != nil {
		return err
	}
	if p == nil {
		if n.None() {
			return nil
		}
		return fmt.Errorf("%s: update network: session was provisioned without network access", what)
	}
	return p.Update(n.Allow, n.Services, priv)
}

// Update replaces the policy; it applies to connections opened afterwards.
func (p *Proxy) Update(allow, services []string, priv []netip.Prefix) error {
	entries, err := parseAllow(allow)
	if err != nil {
		return err
	}
	svc := map[netip.AddrPort]bool{}
	for _, s := range services {
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			return fmt.Errorf("egress service %q: %w", s, err)
		}
		svc[netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())] = true
	}
	p.mu.Lock()
	p.allow, p.services, p.priv = entries, svc, append([]netip.Prefix(nil), priv...)
	p.mu.Unlock()
	return nil
}

func parseAllow(allow []string) ([]sandbox.AllowEntry, error) {
	var entries []sandbox.AllowEntry
	for _, a := range allow {
		e, err := sandbox.ParseAllow(a)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// Serve accepts connections on l until l is closed or Close is called.
func (p *Proxy) Serve(l net.Listener) error {
	p.connMu.Lock()
	if p.closed {
		p.connMu.Unlock()
		l.Close()
		return net.ErrClosed
	}
	p.listeners[l] = true
	p.connMu.Unlock()
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		if !p.track(c, true) {
			c.Close()
			return nil
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.track(c, false)
			defer c.Close()
			p.handle(c)
		}()
	}
}

func (p *Proxy) track(c net.Conn, add bool) bool {
	p.connMu.Lock()
	defer p.connMu.Unlock()
	if add {
		if p.closed {
			return false
		}
		p.conns[c] = true
	} else {
		delete(p.conns, c)
	}
	return true
}

// Close stops every listener, cuts every connection, the sandbox side and
// the upstream side alike (a request still open to a slow server ends at
// once), and waits for the handlers.
func (p *Proxy) Close() error {
	p.connMu.Lock()
	p.closed = true
	for l := range p.listeners {
		l.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	p.connMu.Unlock()
	p.wg.Wait()
	return nil
}

// Denial is a refused destination.
type Denial struct {
	Host   string
	Port   int
	Reason string
}

func (d *Denial) Error() string {
	return fmt.Sprintf("egress to %s denied: %s", net.JoinHostPort(d.Host, strconv.Itoa(d.Port)), d.Reason)
}

// Check decides whether host:port may be reached and returns the vetted
// addresses to dial.
func (p *Proxy) Check(ctx context.Context, host string, port int) ([]netip.Addr, error) {
	p.mu.Lock()
	allow := p.allow
	p.mu.Unlock()
	return p.check(ctx, host, port, allow)
}

func (p *Proxy) check(ctx context.Context, host string, port int, allow []sandbox.AllowEntry) ([]netip.Addr, error) {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	deny := func(format string, a ...any) ([]netip.Addr, error) {
		return nil, &Denial{Host: host, Port: port, Reason: fmt.Sprintf(format, a...)}
	}
	if port < 1 || port > 65535 || !validHost(host) {
		return deny("bad destination")
	}
	p.mu.Lock()
	services, priv := p.services, p.priv
	p.mu.Unlock()
	if ip, err := netip.ParseAddr(host); err == nil && services[netip.AddrPortFrom(ip.Unmap(), uint16(port))] {
		return []netip.Addr{ip}, nil
	}
	if netguard.IsMetadata(host) {
		return deny("cloud metadata endpoint")
	}
	if !netguard.Admits(allow, host, port) {
		if ip, err := netip.ParseAddr(host); err == nil && ip.Unmap().IsLoopback() {
			return deny("not in the sandbox allowlist; %s", hintHostService(host, port))
		}
		return deny("not in the sandbox allowlist (the harness policy's network_policies and openshell.profiles endpoints)")
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		rctx, cancel := context.WithTimeout(ctx, DialTimeout)
		defer cancel()
		addrs, err = p.resolver.LookupNetIP(rctx, "ip", host)
		if err != nil {
			return deny("resolve: %v", err)
		}
		if len(addrs) == 0 {
			return deny("resolve: no addresses")
		}
	}
	for _, a := range addrs {
		switch class, why := netguard.CheckAddr(a, priv); class {
		case netguard.Metadata:
			return deny("resolves to cloud metadata address %s", a)
		case netguard.Internal:
			return deny("resolves to internal address %s (%s); %s", a, why, hintInternal(a, port))
		}
	}
	return addrs, nil
}

// hintHostService names the config key that would admit a loopback
// destination: a host service of the org config.
func hintHostService(host string, port int) string {
	return fmt.Sprintf("a runner-host endpoint is reachable only when config.yaml sandbox.host_services lists it (%q)", net.JoinHostPort(host, strconv.Itoa(port)))
}

// hintInternal names the config key that would admit internal address a.
func hintInternal(a netip.Addr, port int) string {
	if a.Unmap().IsLoopback() {
		return hintHostService(a.Unmap().String(), port)
	}
	bits := 24
	if !a.Unmap().Is4() {
		bits = 64
	}
	pf, _ := a.Unmap().Prefix(bits)
	return fmt.Sprintf("allow its range in config.yaml security.remote_resources.allowed_private_networks (e.g. %q)", pf.String())
}

// validHost accepts an IP literal without a zone, or a DNS name in the one
// form ref accepts (ASCII letters, digits, "-", "_", at most 253 bytes, no
// legacy numeric IPv4 forms such as "2130706433" that a libc resolver
// would turn into an address).
func validHost(h string) bool {
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Zone() == ""
	}
	c, err := ref.CanonicalHost(h)
	return err == nil && c == h
}

func (p *Proxy) logDenial(tag string, err error) {
	var d *Denial
	if !errors.As(err, &d) {
		return
	}
	p.logLine(tag, fmt.Sprintf("deny %s: %s", net.JoinHostPort(d.Host, strconv.Itoa(d.Port)), d.Reason))
}

func (p *Proxy) logLine(tag, line string) {
	if p.log == nil {
		return
	}
	if tag != "" {
		line = tag + " " + line
	}
	// The host comes from the sandbox: it may not add lines or terminal
	// escapes to the log (termsafe.Sanitize, the one terminal rule).
	line = termsafe.Sanitize(line)
	p.logMu.Lock()
	defer p.logMu.Unlock()
	fmt.Fprintln(p.log, line)
}

func (p *Proxy) dial(ctx context.Context, addrs []netip.Addr, port int) (net.Conn, error) {
	var last error
	d := net.Dialer{Timeout: DialTimeout}
	for _, a := range addrs {
		c, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

func splitHostPortDefault(hp string, def int) (string, int, error) {
	if h, ps, err := net.SplitHostPort(hp); err == nil {
		n, err := strconv.Atoi(ps)
		if err != nil {
			return "", 0, fmt.Errorf("bad port in %q", hp)
		}
		return h, n, nil
	}
	return strings.Trim(hp, "[]"), def, nil
}

func respond(c net.Conn, code int, msg string) {
	body := "fullsend sandbox: " + msg + "\n"
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), len(body), body)
}

// MaxHeaderBytes bounds the request line and headers a sandbox may send
// before the proxy decides; past it the request is refused.
const MaxHeaderBytes = 64 << 10

func (p *Proxy) handle(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	// The head is read through a limit (http.ReadRequest has none of its
	// own); the limit is lifted for the body and the tunnel.
	lr := &io.LimitedReader{R: c, N: MaxHeaderBytes}
	br := bufio.NewReader(lr)
	req, err := http.ReadRequest(br)
	if err != nil {
		respond(c, http.StatusBadRequest, "bad proxy request")
		return
	}
	lr.N = math.MaxInt64
	c.SetReadDeadline(time.Time{})
	g, ok := p.authorize(c, req)
	if !ok {
		return
	}
	if req.Method == http.MethodConnect {
		g.connect(c, br, req)
		return
	}
	g.forward(c, req)
}

// gate decides the destinations of one client request: the allowlist in
// force for it and the tag of its log lines.
type gate struct {
	p       *Proxy
	allow   []sandbox.AllowEntry
	tag     string
	secrets *secrets.Broker // nil: no secrets
}

// authorize is the gate of req: the proxy's allowlist, or the one the
// Authorize hook gives. A refused authorization is answered with 407 and
// ok false.
func (p *Proxy) authorize(c net.Conn, req *http.Request) (g gate, ok bool) {
	p.mu.Lock()
	g = gate{p: p, allow: p.allow, secrets: p.secrets}
	p.mu.Unlock()
	if p.auth == nil {
		return g, true
	}
	a, t, err := p.auth(req)
	if err == nil {
		g.allow, err = parseAllow(a)
	}
	if err == nil && p.authSecrets != nil {
		g.secrets, err = p.authSecrets(req)
	}
	g.tag = t
	if err != nil {
		dest := req.RequestURI
		if req.URL != nil && req.URL.Host != "" {
			dest = req.URL.Host
		}
		p.logLine(g.tag, fmt.Sprintf("deny %s: proxy authorization: %v", dest, err))
		body := "fullsend egress gateway: proxy authorization required\n"
		fmt.Fprintf(c, "HTTP/1.1 407 %s\r\nProxy-Authenticate: Basic realm=\"fullsend\"\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
			http.StatusText(http.StatusProxyAuthRequired), len(body), body)
		return g, false
	}
	return g, true
}

// check decides host:port, recording and logging the decision.
func (g gate) check(host string, port int) ([]netip.Addr, error) {
	p := g.p
	addrs, err := p.check(context.Background(), host, port, g.allow)
	p.record(host, port, err)
	if err != nil {
		p.logDenial(g.tag, err)
	} else if p.logAllow {
		p.logLine(g.tag, "allow "+net.JoinHostPort(strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), "."), strconv.Itoa(port)))
	}
	return addrs, err
}

// connect serves a CONNECT request: a tunnel to an allowed destination.
func (g gate) connect(c net.Conn, br *bufio.Reader, req *http.Request) {
	p := g.p
	if g.secrets != nil {
		g.tunnelSecrets(c, br, req)
		return
	}
	up := p.upstream(context.Background(), c, req.RequestURI, 443, g.check, "connect %s: upstream unreachable")
	if up == nil {
		return
	}
	defer up.Close()
	defer p.track(up, false)
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	// Bytes the client already sent after the CONNECT head.
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		if _, err := up.Write(b); err != nil {
			return
		}
	}
	pipe(c, up)
}

// forward serves an absolute http:// request to an allowed destination,
// one request per connection.
func (g gate) forward(c net.Conn, req *http.Request) {
	p := g.p
	if req.URL == nil || req.URL.Scheme != "http" || req.URL.Host == "" {
		respond(c, http.StatusBadRequest, "only CONNECT and absolute http:// requests are proxied")
		return
	}
	var body *secrets.BodyScanner
	swapped := false
	if b := g.secrets; b != nil {
		host, port, err := splitHostPortDefault(req.URL.Host, 80)
		if err != nil {
			respond(c, http.StatusBadRequest, err.Error())
			return
		}
		d := secrets.Dest{Host: host, Port: port}
		req.Header.Del("Proxy-Authorization")
		err = b.Check(req.RequestURI, "request target", d)
		var used []string
		if err == nil {
			used, err = b.Rewrite(req.Header, d)
		}
		var r *secrets.Refusal
		if errors.As(err, &r) {
			g.refuse(r)
			respond(c, http.StatusForbidden, r.Error())
			return
		}
		swapped = len(used) > 0
		if req.Body != nil && req.Body != http.NoBody {
			body = b.NewBodyScanner(req.Body, d, g.refuse)
			if !prescan(req, body) {
				respond(c, http.StatusForbidden, body.Refusal().Error())
				return
			}
		}
	}
	up := p.upstream(context.Background(), c, req.URL.Host, 80, g.check, "upstream %s unreachable")
	if up == nil {
		return
	}
	defer up.Close()
	defer p.track(up, false)
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	req.Close = true
	req.RequestURI = ""
	if err := req.Write(up); err != nil {
		if body != nil && body.Refusal() != nil {
			respond(c, http.StatusForbidden, body.Refusal().Error())
		}
		return
	}
	if !swapped {
		io.Copy(c, up)
		return
	}
	// A response to a request that carried a real value: scrubbed of it.
	resp, err := http.ReadResponse(bufio.NewReader(up), req)
	if err != nil {
		respond(c, http.StatusBadGateway, "bad upstream response")
		return
	}
	defer resp.Body.Close()
	scrubResponse(g.secrets, resp)
	resp.Close = true
	resp.Write(c)
}

// upstream opens the connection for target (host[:port], port def when
// absent): checked vets the destination, a vetted address is dialled and
// the connection tracked, so Close cuts it. On any failure it answers c
// (400, 403, or 502 with unreachable, a format for "HOST:PORT") and
// returns nil. The caller closes the connection and untracks it.
func (p *Proxy) upstream(ctx context.Context, c net.Conn, target string, def int,
	checked func(string, int) ([]netip.Addr, error), unreachable string) net.Conn {
	host, port, err := splitHostPortDefault(target, def)
	if err != nil {
		respond(c, http.StatusBadRequest, err.Error())
		return nil
	}
	addrs, err := checked(host, port)
	if err != nil {
		respond(c, http.StatusForbidden, err.Error())
		return nil
	}
	up, err := p.dial(ctx, addrs, port)
	if err != nil {
		respond(c, http.StatusBadGateway, fmt.Sprintf(unreachable, net.JoinHostPort(host, strconv.Itoa(port))))
		return nil
	}
	if !p.track(up, true) {
		up.Close()
		return nil
	}
	return up
}

func pipe(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		} else {
			dst.Close()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
}

// Recorder receives every destination decision of the proxy, admitted
// ones too. When Config.Log implements it, it gets each decision besides
// the log lines (the run's trace records them as span events this way).
type Recorder interface {
	EgressDecision(host string, port int, allowed bool, reason string)
}

// record passes one decision to a Recorder log. The host is as the
// sandbox wrote it (lower-cased, brackets and a final dot removed).
func (p *Proxy) record(host string, port int, err error) {
	r, ok := p.log.(Recorder)
	if !ok {
		return
	}
	var d *Denial
	switch {
	case err == nil:
		r.EgressDecision(strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), "."), port, true, "allowed")
	case errors.As(err, &d):
		r.EgressDecision(d.Host, d.Port, false, d.Reason)
	}
}
