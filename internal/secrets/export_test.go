package secrets

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
)

// SignUnchecked (tests only) signs a leaf for host with a's key, bypassing Leaf's
// host check, and verifies it under a: it shows the CA's name constraints
// hold even for a leaf the broker would never issue.
func SignUnchecked(a *Authority, host string) (*x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: serial(), DNSNames: []string{host}, NotBefore: a.cert.NotBefore, NotAfter: a.cert.NotAfter,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return nil, err
	}
	leaf, _ := x509.ParseCertificate(der)
	roots := x509.NewCertPool()
	roots.AddCert(a.cert)
	return leaf, func() error { _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots}); return err }()
}
