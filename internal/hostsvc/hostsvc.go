// Package hostsvc makes the org's host services (config.yaml
// sandbox.host_services: loopback endpoints of the runner host, such as a
// model gateway on 127.0.0.1:4000) reachable inside a sandbox at the same
// address and port, so that ANTHROPIC_BASE_URL=http://127.0.0.1:4000 in the
// sandbox's environment just works.
//
// Inside the sandbox, 127.0.0.1 is the sandbox's own loopback, and tools
// do not send loopback traffic to the egress proxy (NO_PROXY lists
// localhost, 127.0.0.1 and ::1, so that servers an agent starts inside the
// sandbox stay reachable). Start therefore runs a forwarder inside the
// sandbox: the fullsend binary (the sandbox's /usr/local/bin/fullsend) with
// EnvServices set listens on each service address on the sandbox's
// loopback and carries every connection through the sandbox's egress proxy
// (a CONNECT to the same address and port), which admits exactly the
// host services the runner put in the spec's Network.Services and logs
// refusals like any other egress. The forwarder holds no privilege: it
// reaches nothing the agent could not reach through the proxy itself, and
// an agent that stops it only loses the service (fail closed).
//
// The proxy must be the sandbox's HTTP proxy ($HTTP_PROXY or $http_proxy,
// an http:// URL on a loopback address, as every fullsend backend sets it);
// the forwarder refuses any other. A refusal by the proxy is passed back to
// the client as the proxy's own HTTP answer (403 and the reason), so an
// HTTP client shows why.
package hostsvc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// EnvServices switches the fullsend binary into the in-sandbox forwarder
// (Serve): a comma list of "IP:PORT" loopback endpoints to serve.
const EnvServices = "FULLSEND_SANDBOX_HOST_SERVICES"

// ReadyLine is what the forwarder prints on stdout once it listens on
// every address.
const ReadyLine = "fullsend host services ready"

// StartTimeout bounds how long Start waits for the forwarder.
const StartTimeout = 15 * time.Second

// Serve is the forwarder process, started with EnvServices set to list
// (package reexec calls it with the variable's value, already removed from
// the environment): it serves every address of list and returns the exit
// status (1, after one "error: …" line on stdout, when it cannot).
func Serve(list string) int { return serveMain(list, os.Stdout, os.Getenv) }

// serveMain is the forwarder process: it returns an exit status.
func serveMain(list string, out io.Writer, getenv func(string) string) int {
	proxy, err := ProxyAddr(getenv)
	if err != nil {
		fmt.Fprintln(out, "error:", err)
		return 1
	}
	services, err := parseList(list)
	if err != nil {
		fmt.Fprintln(out, "error:", err)
		return 1
	}
	f, err := Listen(services, proxy)
	if err != nil {
		fmt.Fprintln(out, "error:", err)
		return 1
	}
	fmt.Fprintln(out, ReadyLine)
	f.Serve()
	return 0
}

func parseList(list string) ([]netip.AddrPort, error) {
	var out []netip.AddrPort
	for _, s := range strings.Split(list, ",") {
		ap, err := netip.ParseAddrPort(strings.TrimSpace(s))
		if err != nil || !ap.Addr().IsLoopback() {
			return nil, fmt.Errorf("host service %q: want a loopback IP:PORT", s)
		}
		out = append(out, ap)
	}
	return out, nil
}

// ProxyAddr is the sandbox's egress proxy from $HTTP_PROXY or $http_proxy:
// it must be an http:// URL on a loopback IP address.
func ProxyAddr(getenv func(string) string) (string, error) {
	raw := getenv("HTTP_PROXY")
	if raw == "" {
		raw = getenv("http_proxy")
	}
	if raw == "" {
		return "", errors.New("no HTTP_PROXY: the sandbox has no egress proxy (the spec lists no host services)")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.User != nil {
		return "", fmt.Errorf("HTTP_PROXY %q: want http://IP:PORT", raw)
	}
	ap, err := netip.ParseAddrPort(u.Host)
	if err != nil || !ap.Addr().IsLoopback() {
		return "", fmt.Errorf("HTTP_PROXY %q: not the sandbox's proxy (a loopback IP:PORT)", raw)
	}
	return ap.String(), nil
}

// Forwarder serves host services on the local loopback through a proxy.
type Forwarder struct {
	proxy string
	lns   map[net.Listener]string // listener → service it carries to
	wg    sync.WaitGroup
}

// Listen binds every service address locally; connections will be
// carried through the HTTP proxy at proxy ("IP:PORT") to the same address.
func Listen(services []netip.AddrPort, proxy string) (*Forwarder, error) {
	pairs := make([][2]string, len(services))
	for i, s := range services {
		pairs[i] = [2]string{s.String(), s.String()}
	}
	return listen(pairs, proxy)
}

// listen binds each pair's local address, to be carried to its target.
func listen(pairs [][2]string, proxy string) (*Forwarder, error) {
	f := &Forwarder{proxy: proxy, lns: map[net.Listener]string{}}
	for _, p := range pairs {
		ln, err := net.Listen("tcp", p[0])
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("host service %s: %w", p[1], err)
		}
		f.lns[ln] = p[1]
	}
	return f, nil
}

// Addrs lists the local addresses served.
func (f *Forwarder) Addrs() []string {
	var out []string
	for ln := range f.lns {
		out = append(out, ln.Addr().String())
	}
	return out
}

// Serve accepts connections until Close.
func (f *Forwarder) Serve() {
	var wg sync.WaitGroup
	for ln, svc := range f.lns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				f.wg.Add(1)
				go func() {
					defer f.wg.Done()
					f.forward(c, svc)
				}()
			}
		}()
	}
	wg.Wait()
	f.wg.Wait()
}

// Close stops accepting connections.
func (f *Forwarder) Close() {
	for ln := range f.lns {
		ln.Close()
	}
}

// forward carries one connection to svc through the proxy.
func (f *Forwarder) forward(c net.Conn, svc string) {
	defer c.Close()
	up, err := net.DialTimeout("tcp", f.proxy, 10*time.Second)
	if err != nil {
		return
	}
	defer up.Close()
	if _, err := fmt.Fprintf(up, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", svc, svc); err != nil {
		return
	}
	br := bufio.NewReader(up)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return
	}
	if resp.StatusCode != http.StatusOK {
		// The proxy's refusal, as it is, for the client to show.
		resp.Close = true
		resp.Write(c)
		return
	}
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		if _, err := c.Write(b); err != nil {
			return
		}
	}
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(up, c)
	go cp(c, up)
	<-done
	<-done
}

// Start runs the forwarder for services ("IP:PORT" loopback endpoints) in
// s and returns once it listens, or with the reason it could not. stop
// ends it (the sandbox's teardown would too). The forwarder runs for at
// most the session's wall time.
func Start(ctx context.Context, s sandbox.Session, services []string) (stop func(), err error) {
	if len(services) == 0 {
		return func() {}, nil
	}
	if _, err := parseList(strings.Join(services, ",")); err != nil {
		return nil, err
	}
	fctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	lw := &readyWriter{ready: ready}
	ended := make(chan error, 1)
	go func() {
		res, err := s.Exec(fctx, sandbox.ExecRequest{
			Args:   []string{sandbox.BinaryPath, "sandbox-host-services"},
			Env:    map[string]string{EnvServices: strings.Join(services, ",")},
			Cwd:    "/",
			Stdout: lw,
		})
		if err == nil {
			err = fmt.Errorf("exited with status %d: %s", res.ExitCode, lw.last())
		}
		ended <- err
	}()
	t := time.NewTimer(StartTimeout)
	defer t.Stop()
	select {
	case <-ready:
		return cancel, nil
	case err := <-ended:
		cancel()
		return nil, fmt.Errorf("host services %s: forwarder in the sandbox: %w", strings.Join(services, ", "), err)
	case <-ctx.Done():
		cancel()
		return nil, ctx.Err()
	case <-t.C:
		cancel()
		return nil, fmt.Errorf("host services %s: forwarder in the sandbox did not start within %s", strings.Join(services, ", "), StartTimeout)
	}
}

// readyWriter watches the forwarder's stdout for ReadyLine.
type readyWriter struct {
	mu    sync.Mutex
	buf   []byte
	ready chan struct{}
	done  bool
}

func (w *readyWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) < 4096 {
		w.buf = append(w.buf, b...)
	}
	if !w.done && strings.Contains(string(w.buf), ReadyLine+"\n") {
		w.done = true
		close(w.ready)
	}
	return len(b), nil
}

func (w *readyWriter) last() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := strings.TrimSpace(string(w.buf))
	if s == "" {
		return "no output"
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
