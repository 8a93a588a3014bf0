package secrets

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/fullsend-ai/fullsend/internal/netguard"
)

// Secret is one secret of a run: the variable the sandbox sees, the real
// value (runner side only) and the destinations it may reach.
type Secret struct {
	Name  string
	Value string
	Hosts []string // "host" or "host:port"; netguard.MatchHost patterns
}

// PlaceholderPrefix starts every placeholder; the rest is 40 random hex
// digits, fresh for every run.
const PlaceholderPrefix = "fullsend-secret-"

// nameRE is a variable name the sandbox environment can carry.
var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// CheckName reports whether name can be a secret's variable name.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("secret name %q is not an environment variable name (letters, digits, _; not starting with a digit)", name)
	}
	return nil
}

// hostEntry is one parsed Secret.Hosts entry; port 0 = 443 only.
type hostEntry struct {
	host string
	port int
}

func (h hostEntry) String() string {
	if h.port == 0 {
		if strings.Contains(h.host, ":") {
			return net.JoinHostPort(h.host, "443") // the same entry
		}
		return h.host
	}
	return net.JoinHostPort(h.host, strconv.Itoa(h.port))
}

// ParseHost checks one Secret.Hosts entry ("host" or "host:port", host
// a netguard pattern or an IP literal).
func ParseHost(e string) error {
	_, err := parseHost(e)
	return err
}

func parseHost(e string) (hostEntry, error) {
	host, port := e, 0
	if strings.HasPrefix(e, "[") || strings.Count(e, ":") == 1 {
		h, p, err := net.SplitHostPort(e)
		if err != nil {
			return hostEntry{}, fmt.Errorf("secret host %q: %v", e, err)
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return hostEntry{}, fmt.Errorf("secret host %q: bad port", e)
		}
		host, port = h, n
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return hostEntry{}, fmt.Errorf("secret host %q: an address with a zone", e)
		}
		host = a.Unmap().String()
	} else if err := netguard.CheckHostPattern(host); err != nil {
		return hostEntry{}, fmt.Errorf("secret host %q: %v", e, err)
	}
	return hostEntry{host: host, port: port}, nil
}

type entry struct {
	name, value, ph string
	hosts           []hostEntry
}

// allows reports whether the entry's value may reach host:port.
func (e *entry) allows(host string, port int) bool {
	for _, h := range e.hosts {
		if _, ok := netguard.MatchHost(host, []string{h.host}); !ok {
			continue
		}
		if h.port == port || (h.port == 0 && port == 443) {
			return true
		}
	}
	return false
}

// Options configure a Broker.
type Options struct {
	// Roots verify the upstream servers of the secret hosts; nil = the
	// system roots, plus ExtraRootsPEM. A broker with Roots set cannot be
	// sealed (Seal).
	Roots *x509.CertPool
	// ExtraRootsPEM are PEM certificates trusted besides the system roots
	// (config.yaml secrets upstream_ca_file).
	ExtraRootsPEM []byte
}

// Broker holds a run's secrets, their placeholders and the run CA. Safe
// for concurrent use; its state never changes after New.
type Broker struct {
	list        []*entry
	ca          *Authority
	roots       *x509.CertPool
	rootsPEM    []byte
	rootsOpaque bool
}

// New returns the broker of one run: a fresh placeholder for every secret
// and a fresh CA. Names must be distinct, values non-empty, hosts valid.
func New(list []Secret, o Options) (*Broker, error) {
	b, patterns, err := newBroker(list, o)
	if err != nil {
		return nil, err
	}
	if b.ca, err = newAuthority(patterns); err != nil {
		return nil, err
	}
	return b, nil
}

// newBroker checks list and makes the broker without its CA.
func newBroker(list []Secret, o Options) (*Broker, []hostEntry, error) {
	b := &Broker{roots: o.Roots, rootsOpaque: o.Roots != nil}
	if o.Roots == nil && len(o.ExtraRootsPEM) > 0 {
		sys, err := x509.SystemCertPool()
		if err != nil || sys == nil {
			sys = x509.NewCertPool()
		}
		b.roots = sys.Clone()
		if !b.roots.AppendCertsFromPEM(o.ExtraRootsPEM) {
			return nil, nil, errors.New("secrets: no PEM certificate in the extra upstream roots")
		}
		b.rootsPEM = append([]byte(nil), o.ExtraRootsPEM...)
	}
	seen := map[string]bool{}
	var patterns []hostEntry
	for _, s := range list {
		if err := CheckName(s.Name); err != nil {
			return nil, nil, err
		}
		if seen[s.Name] {
			return nil, nil, fmt.Errorf("secret %s: declared twice", s.Name)
		}
		seen[s.Name] = true
		if s.Value == "" {
			return nil, nil, fmt.Errorf("secret %s: empty value", s.Name)
		}
		if len(s.Hosts) == 0 {
			return nil, nil, fmt.Errorf("secret %s: no hosts", s.Name)
		}
		e := &entry{name: s.Name, value: s.Value}
		for _, h := range s.Hosts {
			he, err := parseHost(h)
			if err != nil {
				return nil, nil, fmt.Errorf("secret %s: %v", s.Name, err)
			}
			e.hosts = append(e.hosts, he)
			patterns = append(patterns, he)
		}
		var r [20]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, nil, err
		}
		e.ph = PlaceholderPrefix + hex.EncodeToString(r[:])
		b.list = append(b.list, e)
	}
	return b, patterns, nil
}

// Names lists the secrets' names, sorted.
func (b *Broker) Names() []string {
	out := make([]string, 0, len(b.list))
	for _, e := range b.list {
		out = append(out, e.name)
	}
	slices.Sort(out)
	return out
}

// Env is what the sandbox environment carries: each name with its
// placeholder.
func (b *Broker) Env() map[string]string {
	out := make(map[string]string, len(b.list))
	for _, e := range b.list {
		out[e.name] = e.ph
	}
	return out
}

// Values lists the real values (for redaction tests and scrubbers of the
// runner; never for anything that reaches the sandbox or the run dir).
func (b *Broker) Values() []string {
	out := make([]string, 0, len(b.list))
	for _, e := range b.list {
		out = append(out, e.value)
	}
	return out
}

// CA is the run's certificate authority.
func (b *Broker) CA() *Authority { return b.ca }

// Roots are the roots upstream servers are verified against (nil = the
// system roots).
func (b *Broker) Roots() *x509.CertPool { return b.roots }

// Intercepts reports whether host:port is a destination of some secret:
// the egress proxy terminates its connections to swap placeholders. host
// is as the sandbox named it (lower-cased here).
func (b *Broker) Intercepts(host string, port int) bool {
	host = normHost(host)
	for _, e := range b.list {
		if e.allows(host, port) {
			return true
		}
	}
	return false
}

func normHost(h string) string {
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().String()
	}
	return h
}

// plainAllowed is the rule for a value sent without TLS: only to a
// loopback address (a host service of the runner).
func plainAllowed(host string) bool {
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// Dest is the destination of a request as the proxy vetted it.
type Dest struct {
	Host string
	Port int
	// TLS is true when the proxy re-encrypts the request upstream with
	// full verification; false for plain http.
	TLS bool
}

func (d Dest) String() string { return net.JoinHostPort(normHost(d.Host), strconv.Itoa(d.Port)) }

// Refusal is a placeholder where it may not go. It never holds a value.
type Refusal struct {
	Secret string // the secret's name
	Where  string // "header X-Foo", "request body", "request target", ...
	Dest   string // HOST:PORT
	Reason string
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("secret %s: its placeholder in the %s to %s: %s", r.Secret, r.Where, r.Dest, r.Reason)
}

const (
	reasonHost  = "refused (the secret reaches only its hosts in config.yaml secrets)"
	reasonBody  = "refused (a secret is sent only in request headers, never in a body or URL)"
	reasonPlain = "refused (a secret leaves over plain http only to a loopback host service)"
)

// find returns the first entry whose placeholder occurs in s.
func (b *Broker) find(s string) *entry {
	if !strings.Contains(s, PlaceholderPrefix) {
		return nil
	}
	for _, e := range b.list {
		if strings.Contains(s, e.ph) {
			return e
		}
	}
	return nil
}

// Check refuses any placeholder in s, a part of a request that never
// carries secrets (where names it: "request target", "CONNECT request").
func (b *Broker) Check(s, where string, d Dest) error {
	if e := b.find(s); e != nil {
		return &Refusal{Secret: e.name, Where: where, Dest: d.String(), Reason: reasonBody}
	}
	return nil
}

// CheckHeader refuses any placeholder in h (names and values, Basic
// credentials decoded): for a request whose headers are never rewritten.
func (b *Broker) CheckHeader(h http.Header, where string, d Dest) error {
	for k, vs := range h {
		if e := b.find(k); e != nil {
			return &Refusal{Secret: e.name, Where: where + " header field name", Dest: d.String(), Reason: reasonHost}
		}
		for _, v := range vs {
			if e := b.find(v); e != nil {
				return &Refusal{Secret: e.name, Where: where + " header " + k, Dest: d.String(), Reason: reasonHost}
			}
			if dec, ok := basic(v); ok {
				if e := b.find(dec); e != nil {
					return &Refusal{Secret: e.name, Where: where + " header " + k + " (basic credentials)", Dest: d.String(), Reason: reasonHost}
				}
			}
		}
	}
	return nil
}

// Rewrite swaps, in the header fields of a request to d, every
// placeholder of a secret allowed to reach d for its value. Any other
// placeholder is a *Refusal, and h is then left unchanged. It returns the
// names of the secrets swapped in.
func (b *Broker) Rewrite(h http.Header, d Dest) ([]string, error) {
	host := normHost(d.Host)
	var used []string
	swap := func(v, where string) (string, error) {
		if !strings.Contains(v, PlaceholderPrefix) {
			return v, nil
		}
		for _, e := range b.list {
			if !strings.Contains(v, e.ph) {
				continue
			}
			switch {
			case !e.allows(host, d.Port):
				return "", &Refusal{Secret: e.name, Where: where, Dest: d.String(), Reason: reasonHost}
			case !d.TLS && !plainAllowed(host):
				return "", &Refusal{Secret: e.name, Where: where, Dest: d.String(), Reason: reasonPlain}
			}
			v = strings.ReplaceAll(v, e.ph, e.value)
			if !slices.Contains(used, e.name) {
				used = append(used, e.name)
			}
		}
		return v, nil
	}
	out := make(map[string][]string, len(h))
	for k, vs := range h {
		if e := b.find(k); e != nil {
			return nil, &Refusal{Secret: e.name, Where: "header field name", Dest: d.String(), Reason: reasonHost}
		}
		nv := make([]string, len(vs))
		for i, v := range vs {
			if dec, ok := basic(v); ok && strings.Contains(dec, PlaceholderPrefix) {
				r, err := swap(dec, "header "+k+" (basic credentials)")
				if err != nil {
					return nil, err
				}
				v = v[:5] + " " + base64.StdEncoding.EncodeToString([]byte(r))
			}
			r, err := swap(v, "header "+k)
			if err != nil {
				return nil, err
			}
			nv[i] = r
		}
		out[k] = nv
	}
	for k, v := range out {
		h[k] = v
	}
	return used, nil
}

// basic decodes the credentials of an "Authorization: Basic …" value
// (scheme case-insensitive, standard or unpadded base64).
func basic(v string) (string, bool) {
	if len(v) < 6 || !strings.EqualFold(v[:5], "basic") || (v[5] != ' ' && v[5] != '\t') {
		return "", false
	}
	cred := strings.TrimSpace(v[5:])
	if d, err := base64.StdEncoding.DecodeString(cred); err == nil {
		return string(d), true
	}
	if d, err := base64.RawStdEncoding.DecodeString(cred); err == nil {
		return string(d), true
	}
	return "", false
}

// ScrubHeader replaces every real value in h with its placeholder (a
// response header an upstream echoes back).
func (b *Broker) ScrubHeader(h http.Header) {
	for k, vs := range h {
		for i, v := range vs {
			for _, e := range b.list {
				v = strings.ReplaceAll(v, e.value, e.ph)
			}
			vs[i] = v
		}
		h[k] = vs
	}
}

// BodyScanner is a request body on its way upstream: it passes the
// bytes through and fails with a *Refusal (and no further bytes) when a
// placeholder occurs in them. A read never waits for more than the bytes
// that could begin a placeholder.
type BodyScanner struct {
	s       *stream
	refusal atomic.Pointer[Refusal]
}

// NewBodyScanner scans r, the body of a request to d; refused, when not
// nil, is called once with the refusal when a placeholder is found.
func (b *Broker) NewBodyScanner(r io.ReadCloser, d Dest, refused func(*Refusal)) *BodyScanner {
	bs := &BodyScanner{}
	needles := make([][]byte, len(b.list))
	for i, e := range b.list {
		needles[i] = []byte(e.ph)
	}
	bs.s = &stream{src: r, find: needles, repl: func(i int) ([]byte, error) {
		r := &Refusal{Secret: b.list[i].name, Where: "request body", Dest: d.String(), Reason: reasonBody}
		bs.refusal.Store(r)
		if refused != nil {
			refused(r)
		}
		return nil, r
	}}
	return bs
}

func (bs *BodyScanner) Read(p []byte) (int, error) { return bs.s.Read(p) }

// Close closes the underlying body.
func (bs *BodyScanner) Close() error { return bs.s.Close() }

// Refusal is the refusal the scan ended with, or nil.
func (bs *BodyScanner) Refusal() *Refusal { return bs.refusal.Load() }

// NewScrubber passes r through with every real value replaced by its
// placeholder (a response body an upstream echoes a secret into).
func (b *Broker) NewScrubber(r io.ReadCloser) io.ReadCloser {
	needles := make([][]byte, len(b.list))
	for i, e := range b.list {
		needles[i] = []byte(e.value)
	}
	return &stream{src: r, find: needles, repl: func(i int) ([]byte, error) {
		return []byte(b.list[i].ph), nil
	}}
}
