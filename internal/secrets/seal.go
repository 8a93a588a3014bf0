package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"regexp"
)

// A sealed broker is how a run's secrets reach a stateless egress gateway
// (package gateway): everything the gateway needs to swap for one run
// (names, values, placeholders, hosts, the run CA's key and certificate,
// the extra upstream roots) as JSON, encrypted and authenticated with
// AES-256-GCM under a key the runner and the gateway share and the sandbox
// never sees. The sandbox may hold the sealed bytes (they travel in its
// proxy credentials): without the key they reveal nothing and cannot be
// altered.

// SealKeyBytes is the length of a seal key.
const SealKeyBytes = 32

type sealed struct {
	Secrets []sealedSecret `json:"secrets"`
	CAKey   []byte         `json:"ca_key"`
	CACert  []byte         `json:"ca_cert"`
	Roots   []byte         `json:"roots,omitempty"` // extra upstream roots, PEM
}

type sealedSecret struct {
	Name  string   `json:"name"`
	Value string   `json:"value"`
	PH    string   `json:"ph"`
	Hosts []string `json:"hosts"`
}

var phRE = regexp.MustCompile(`^` + PlaceholderPrefix + `[0-9a-f]{40}$`)

// ErrSealed wraps every failure to open a sealed broker.
var ErrSealed = errors.New("sealed secrets refused")

// Seal encrypts b under key (SealKeyBytes long). A broker made with
// Options.Roots (not ExtraRootsPEM) cannot be sealed.
func (b *Broker) Seal(key []byte) ([]byte, error) {
	if b.rootsOpaque {
		return nil, errors.New("secrets: a broker with an opaque root pool cannot be sealed")
	}
	raw, err := b.ca.key.Bytes()
	if err != nil {
		return nil, err
	}
	s := sealed{CAKey: raw, CACert: b.ca.cert.Raw, Roots: b.rootsPEM}
	for _, e := range b.list {
		var hosts []string
		for _, h := range e.hosts {
			hosts = append(hosts, h.String())
		}
		s.Secrets = append(s.Secrets, sealedSecret{Name: e.name, Value: e.value, PH: e.ph, Hosts: hosts})
	}
	plain, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return aead.Seal(nonce, nonce, plain, []byte(sealContext)), nil
}

const sealContext = "fullsend-sealed-secrets.v1"

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != SealKeyBytes {
		return nil, fmt.Errorf("secrets: seal key of %d bytes, want %d", len(key), SealKeyBytes)
	}
	blk, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(blk)
}

// Open decrypts a broker sealed under key and checks it like New does.
func Open(key, blob []byte) (*Broker, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	if len(blob) < aead.NonceSize() {
		return nil, fmt.Errorf("%w: too short", ErrSealed)
	}
	plain, err := aead.Open(nil, blob[:aead.NonceSize()], blob[aead.NonceSize():], []byte(sealContext))
	if err != nil {
		return nil, fmt.Errorf("%w: not sealed with this key", ErrSealed)
	}
	var s sealed
	if err := json.Unmarshal(plain, &s); err != nil {
		return nil, fmt.Errorf("%w: malformed", ErrSealed)
	}
	var list []Secret
	for _, e := range s.Secrets {
		list = append(list, Secret{Name: e.Name, Value: e.Value, Hosts: e.Hosts})
	}
	b, patterns, err := newBroker(list, Options{ExtraRootsPEM: s.Roots})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSealed, err)
	}
	for i, e := range s.Secrets {
		if !phRE.MatchString(e.PH) {
			return nil, fmt.Errorf("%w: placeholder of %s", ErrSealed, e.Name)
		}
		b.list[i].ph = e.PH
	}
	key2, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), s.CAKey)
	if err != nil {
		return nil, fmt.Errorf("%w: CA key: %v", ErrSealed, err)
	}
	cert, err := x509.ParseCertificate(s.CACert)
	if err != nil || !cert.IsCA {
		return nil, fmt.Errorf("%w: CA certificate", ErrSealed)
	}
	if !key2.PublicKey.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("%w: CA key and certificate differ", ErrSealed)
	}
	var hosts []string
	for _, p := range patterns {
		hosts = append(hosts, p.host)
	}
	b.ca = &Authority{cert: cert, key: key2, hosts: hosts, leaves: map[string]*tls.Certificate{},
		pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})}
	return b, nil
}
