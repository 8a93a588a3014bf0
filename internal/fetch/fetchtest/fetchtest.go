package fetchtest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	caOnce sync.Once
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caPool *x509.CertPool
	caErr  error
)

func initCA() {
	caKey, caErr = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if caErr != nil {
		return
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "fullsend fetchtest CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &caKey.PublicKey, caKey)
	if err != nil {
		caErr = err
		return
	}
	caCert, caErr = x509.ParseCertificate(der)
	if caErr != nil {
		return
	}
	caPool = x509.NewCertPool()
	caPool.AddCert(caCert)
}

// CertPool returns a pool holding only the test CA, for fetch.Options.RootCAs.
// It panics if the CA cannot be generated (a broken crypto/rand).
func CertPool() *x509.CertPool {
	caOnce.Do(initCA)
	if caErr != nil {
		panic("fetchtest: generating test CA: " + caErr.Error())
	}
	return caPool
}

var serial struct {
	sync.Mutex
	n int64
}

// Certificate issues a server certificate signed by the test CA for names
// (DNS names or IP literals; ports are ignored) plus 127.0.0.1, ::1 and
// localhost.
func Certificate(names ...string) (tls.Certificate, error) {
	CertPool()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial.Lock()
	serial.n++
	sn := serial.n + 1
	serial.Unlock()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(sn),
		Subject:      pkix.Name{CommonName: "fetchtest server"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:     []string{"localhost"},
	}
	for _, n := range names {
		n = StripPort(n)
		if a, err := netip.ParseAddr(n); err == nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, a.AsSlice())
		} else if n != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// StripPort returns host without a ":port" suffix or IPv6 brackets.
func StripPort(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
}

// NewServer starts an HTTPS server (HTTP/2 enabled) on 127.0.0.1 serving h
// with a certificate for names, and closes it when the test ends. It fails
// the test (from the calling goroutine) if the certificate cannot be made.
func NewServer(t testing.TB, h http.Handler, names ...string) *httptest.Server {
	t.Helper()
	cert, err := Certificate(names...)
	if err != nil {
		t.Fatalf("fetchtest: issuing certificate: %v", err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshake failures are expected in tests
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// Sink listens on 127.0.0.1, accepts and closes every connection and
// counts them, until the test ends; tests use it to prove that nothing
// was ever dialled.
func Sink(t testing.TB) (net.Listener, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	return ln, &accepted
}

// Loopback is 127.0.0.0/8, the network tests put in
// fetch.Options.AllowedPrivateNetworks to reach their servers.
var Loopback = netip.MustParsePrefix("127.0.0.0/8")

// Hosts is a fixed fake DNS resolver: each host (as looked up, exact
// case) answers its addresses, every time; an unknown host fails like
// NXDOMAIN. Use Resolver to count lookups or to change answers.
type Hosts map[string][]netip.Addr

// LookupNetIP implements fetch.Resolver and sandbox.Resolver.
func (h Hosts) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := h[host]; ok {
		return append([]netip.Addr(nil), a...), nil
	}
	return nil, &net.DNSError{Err: "no such host (fetchtest hosts)", Name: host, IsNotFound: true}
}

// Resolver is a fake DNS resolver: each host maps to a sequence of answers,
// the n-th lookup of a host getting the n-th answer (the last one repeats),
// which is how tests simulate DNS rebinding. Unknown hosts fail. It is safe
// for concurrent use.
type Resolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	lookups map[string]int
}

// NewResolver returns an empty resolver.
func NewResolver() *Resolver {
	return &Resolver{answers: map[string][][]netip.Addr{}, lookups: map[string]int{}}
}

// Set makes every lookup of host answer addrs. host may carry a port,
// which is ignored.
func (r *Resolver) Set(host string, addrs ...netip.Addr) {
	r.SetSequence(host, addrs)
}

// SetSequence makes the n-th lookup of host answer answers[n] (the last
// entry repeats).
func (r *Resolver) SetSequence(host string, answers ...[]netip.Addr) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers[strings.ToLower(StripPort(host))] = answers
}

// LookupNetIP implements fetch.Resolver.
func (r *Resolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h := strings.ToLower(host)
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.lookups[h]
	r.lookups[h] = n + 1
	seq, ok := r.answers[h]
	if !ok || len(seq) == 0 {
		return nil, &net.DNSError{Err: "no such host (fetchtest resolver)", Name: host, IsNotFound: true}
	}
	if n >= len(seq) {
		n = len(seq) - 1
	}
	return append([]netip.Addr(nil), seq[n]...), nil
}

// Lookups returns how many times host was looked up.
func (r *Resolver) Lookups(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups[strings.ToLower(StripPort(host))]
}

// Hosts returns the host names the resolver knows.
func (r *Resolver) Hosts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.answers))
	for h := range r.answers {
		out = append(out, h)
	}
	return out
}

// LoopbackAddr is 127.0.0.1.
var LoopbackAddr = netip.MustParseAddr("127.0.0.1")

// String describes the resolver's table (for failure messages).
func (r *Resolver) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for h, seq := range r.answers {
		fmt.Fprintf(&b, "%s=%v ", h, seq)
	}
	return strings.TrimSpace(b.String())
}

// Listener is a server that serves the listener it is given until it is
// closed, like the egress proxy and the gateway.
type Listener interface {
	Serve(net.Listener) error
	Close() error
}

// Serve makes s serve a fresh listener on 127.0.0.1 until the test ends,
// and returns the listener's address (HOST:PORT).
func Serve(t testing.TB, s Listener) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return ln.Addr().String()
}
