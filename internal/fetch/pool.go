package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// dialFunc opens a TCP connection to a literal "ip:port".
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// MaxHeaderBytes bounds the response headers (and 1xx responses) a server
// may send, HTTP/1.1 and HTTP/2 alike (net/http's default is 10 MiB).
const MaxHeaderBytes = 256 << 10

// maxTransports bounds the number of pools a Client keeps; past it every
// pool is closed and forgotten (connections are cheap to redo, memory is
// not unbounded).
const maxTransports = 64

// pool keeps one *http.Transport per (host, port, vetted address set).
// A transport's DialContext is bound to the addresses that were vetted
// when it was created and ignores the address the transport asks for, so
// nothing it dials, pooled or not, was resolved by anything but Client.vet.
type pool struct {
	roots *x509.CertPool
	dial  dialFunc

	mu sync.Mutex
	m  map[string]*http.Transport
}

func newPool(roots *x509.CertPool, dial dialFunc) *pool {
	if dial == nil {
		d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
		dial = d.DialContext
	}
	return &pool{roots: roots, dial: dial, m: map[string]*http.Transport{}}
}

func (p *pool) get(host string, port uint16, addrs []netip.Addr, vet func(netip.Addr) error) *http.Transport {
	sorted := slices.Clone(addrs)
	slices.SortFunc(sorted, func(a, b netip.Addr) int { return a.Compare(b) })
	sorted = slices.Compact(sorted)
	var kb strings.Builder
	kb.WriteString(host)
	kb.WriteString("|")
	kb.WriteString(strconv.Itoa(int(port)))
	for _, a := range sorted {
		kb.WriteString("|")
		kb.WriteString(a.String())
	}
	key := kb.String()

	p.mu.Lock()
	defer p.mu.Unlock()
	if tr, ok := p.m[key]; ok {
		return tr
	}
	if len(p.m) >= maxTransports {
		for k, tr := range p.m {
			tr.CloseIdleConnections()
			delete(p.m, k)
		}
	}
	dial := p.dial
	tr := &http.Transport{
		Proxy: nil, // never a proxy from the environment
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialVetted(ctx, dial, host, port, addrs, vet)
		},
		TLSClientConfig: &tls.Config{
			ServerName: host,
			RootCAs:    p.roots,
			MinVersion: tls.VersionTLS12,
		},
		ForceAttemptHTTP2:      true,
		MaxResponseHeaderBytes: MaxHeaderBytes,
		MaxIdleConns:           32,
		MaxIdleConnsPerHost:    32,
		IdleConnTimeout:        60 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
	}
	p.m[key] = tr
	return tr
}

func (p *pool) closeIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, tr := range p.m {
		tr.CloseIdleConnections()
	}
}

// dialVetted tries each vetted address in turn (re-checking it first) and
// returns the first connection that opens.
func dialVetted(ctx context.Context, dial dialFunc, host string, port uint16, addrs []netip.Addr, vet func(netip.Addr) error) (net.Conn, error) {
	var last error = errors.New("no vetted address")
	for _, a := range addrs {
		if err := vet(a); err != nil {
			return nil, err
		}
		conn, err := dial(ctx, "tcp", netip.AddrPortFrom(a, port).String())
		if err == nil {
			return conn, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("connecting to %s (%d vetted addresses): %w", host, len(addrs), last)
}
