package secrets

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/fullsend-ai/fullsend/internal/netguard"
)

// Validity of the run CA and of its leaf certificates. A leaf is issued
// again when less than LeafRenew of it is left.
const (
	CAValidity    = 7 * 24 * time.Hour
	LeafValidity  = time.Hour
	LeafRenew     = 10 * time.Minute
	clockSkewBack = 5 * time.Minute
)

// Authority is a run's CA: its key lives only in this process's memory.
type Authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte

	hosts []string // the patterns it issues leaves for

	mu     sync.Mutex
	leaves map[string]*tls.Certificate
}

// newAuthority makes a CA name-constrained to the hosts of patterns: DNS
// patterns become permitted DNS subtrees ("*.x" → ".x"). Addresses are
// excluded altogether when no host is an IP literal; with one, addresses
// are left unconstrained, because some TLS clients (BoringSSL: Bun, hence
// Claude Code) refuse every address certificate under a CA that
// constrains addresses.
func newAuthority(patterns []hostEntry) (*Authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:                serial(),
		Subject:                     pkix.Name{CommonName: "fullsend run CA " + now.UTC().Format(time.RFC3339)},
		NotBefore:                   now.Add(-clockSkewBack),
		NotAfter:                    now.Add(CAValidity),
		KeyUsage:                    x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid:       true,
		IsCA:                        true,
		MaxPathLenZero:              true,
		PermittedDNSDomainsCritical: true,
	}
	ips := false
	for _, p := range patterns {
		if _, err := netip.ParseAddr(p.host); err == nil {
			ips = true
			continue
		}
		tmpl.PermittedDNSDomains = append(tmpl.PermittedDNSDomains, strings.TrimPrefix(p.host, "*"))
	}
	if !ips {
		tmpl.ExcludedIPRanges = []*net.IPNet{
			{IP: net.IPv4zero.To4(), Mask: net.CIDRMask(0, 32)},
			{IP: net.IPv6zero, Mask: net.CIDRMask(0, 128)},
		}
	}
	if len(tmpl.PermittedDNSDomains) == 0 {
		tmpl.PermittedDNSDomains = []string{"invalid"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("run CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	var hosts []string
	for _, p := range patterns {
		hosts = append(hosts, p.host)
	}
	return &Authority{cert: cert, key: key, leaves: map[string]*tls.Certificate{}, hosts: hosts,
		pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n.Add(n, big.NewInt(1))
}

// PEM is the CA certificate (never the key).
func (a *Authority) PEM() []byte { return a.pem }

// Certificate is the CA certificate.
func (a *Authority) Certificate() *x509.Certificate { return a.cert }

// Leaf returns a certificate for host (a DNS name or an IP literal that
// a secret's hosts match), issued on first use and again when it nears its
// end.
func (a *Authority) Leaf(host string) (*tls.Certificate, error) {
	host = normHost(host)
	if host == "" {
		return nil, errors.New("run CA: no host name")
	}
	if _, ok := netguard.MatchHost(host, a.hosts); !ok {
		return nil, fmt.Errorf("run CA: %s is not a secret host", host)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	if c := a.leaves[host]; c != nil && now.Add(LeafRenew).Before(c.Leaf.NotAfter) {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		NotBefore:    now.Add(-clockSkewBack),
		NotAfter:     now.Add(LeafValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	// An address has no common name: verifiers that read the common name
	// as a DNS name would hold it against the CA's DNS name constraints.
	if ip, err := netip.ParseAddr(host); err == nil {
		tmpl.IPAddresses = []net.IP{ip.AsSlice()}
	} else {
		tmpl.Subject = pkix.Name{CommonName: host}
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return nil, fmt.Errorf("run CA: leaf for %s: %w", host, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der, a.cert.Raw}, PrivateKey: key, Leaf: leaf}
	a.leaves[host] = c
	return c, nil
}

// SystemBundles are where Linux distributions keep the system roots, in
// the order Go's crypto/x509 looks.
var SystemBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/tls/cacert.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/cert.pem",
}

// Bundle is the CA bundle the sandbox trusts: the runner's system roots
// (the first file of SystemBundles that exists; none is fine) followed by
// the run CA.
func (a *Authority) Bundle() []byte {
	var out []byte
	for _, f := range SystemBundles {
		if b, err := os.ReadFile(f); err == nil {
			out = append(out, b...)
			if len(out) > 0 && out[len(out)-1] != '\n' {
				out = append(out, '\n')
			}
			break
		}
	}
	return append(out, a.pem...)
}

// CAEnv is the environment that makes the sandbox's TLS clients trust
// the bundle at path.
func CAEnv(path string) map[string]string {
	return map[string]string{
		"SSL_CERT_FILE":       path,
		"NODE_EXTRA_CA_CERTS": path,
		"REQUESTS_CA_BUNDLE":  path,
		"CURL_CA_BUNDLE":      path,
		"GIT_SSL_CAINFO":      path,
	}
}
