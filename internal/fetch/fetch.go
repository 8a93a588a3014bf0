package fetch

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"time"

	"github.com/fullsend-ai/fullsend/internal/limit"
	"github.com/fullsend-ai/fullsend/internal/netguard"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// Limits applied when Options leaves them zero.
const (
	DefaultTimeout = 30 * time.Second
	DefaultMaxSize = 10 << 20
)

// Resolver looks up the addresses of a host name. *net.Resolver implements
// it; tests inject fakes to simulate DNS rebinding. It must be safe for
// concurrent use.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options is the fetch policy. The zero value is the strictest policy:
// no domain allowed (every fetch fails with ErrDomain), no private network
// exempted, DefaultTimeout, DefaultMaxSize, the system resolver and the
// system roots.
type Options struct {
	// AllowedDomains are host patterns for netguard.MatchHost: "host"
	// matches exactly, "*.suffix" matches subdomains only.
	AllowedDomains []string
	// AllowedPrivateNetworks exempt internal addresses inside them (never
	// a cloud metadata address).
	AllowedPrivateNetworks []netip.Prefix
	// Timeout bounds the whole exchange: lookup, dial, TLS, headers and the
	// full body. Zero means DefaultTimeout.
	Timeout time.Duration
	// MaxSize bounds the body in bytes. Zero means DefaultMaxSize.
	MaxSize int64
	// Resolver replaces net.DefaultResolver.
	Resolver Resolver
	// RootCAs replaces the system roots. Tests only.
	RootCAs *x509.CertPool
}

// Response is a 200 answer whose body was read completely within the limits.
type Response struct {
	Body       []byte
	Header     http.Header
	StatusCode int
}

// Client fetches https resources under one Options policy. It is safe for
// concurrent use and keeps one connection pool per (host, port, vetted
// addresses); connections are only ever dialled to vetted addresses.
type Client struct {
	o        Options
	resolver Resolver
	timeout  time.Duration
	maxSize  int64
	pool     *pool
}

// New returns a client enforcing o. It copies the slices of o.
func New(o Options) *Client {
	o.AllowedDomains = append([]string(nil), o.AllowedDomains...)
	o.AllowedPrivateNetworks = append([]netip.Prefix(nil), o.AllowedPrivateNetworks...)
	c := &Client{o: o, resolver: o.Resolver, timeout: o.Timeout, maxSize: o.MaxSize}
	if c.resolver == nil {
		c.resolver = net.DefaultResolver
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.maxSize <= 0 {
		c.maxSize = DefaultMaxSize
	}
	c.pool = newPool(o.RootCAs, nil)
	return c
}

// MaxSize is the body size limit in force (never zero).
func (c *Client) MaxSize() int64 { return c.maxSize }

// CloseIdleConnections closes every pooled connection not in use.
func (c *Client) CloseIdleConnections() { c.pool.closeIdle() }

var errDeadline = errors.New("deadline")

// Get fetches rawURL and returns the body of a 200 answer. h may be nil; it
// is sent as is (callers add Authorization only for hosts they trust: the
// request goes to exactly this URL, never anywhere else, since redirects
// are refused). Every error is an *Error wrapping one of the sentinels (or
// a lookup, dial or TLS failure).
func (c *Client) Get(ctx context.Context, rawURL string, h http.Header) (*Response, error) {
	canon, err := ref.Canonicalize(rawURL)
	if err != nil {
		return nil, &Error{URL: Redact(ref.Redact(rawURL)), Err: refusal(err)}
	}
	shown := Redact(canon)
	fail := func(err error) (*Response, error) { return nil, &Error{URL: shown, Err: err} }

	u, err := url.Parse(canon)
	if err != nil { // cannot happen for a canonical URL
		return fail(fmt.Errorf("%w: %v", ErrScheme, err))
	}
	host := u.Hostname()
	port := 443
	if p := u.Port(); p != "" {
		port, _ = strconv.Atoi(p)
	}
	if _, ok := netguard.MatchHost(host, c.o.AllowedDomains); !ok {
		return fail(fmt.Errorf("%w: %s matches no allowed_domains entry (add a prefix for it to allowed_remote_resources in config.yaml, or list it under security.remote_resources.allowed_domains)", ErrDomain, host))
	}

	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout, errDeadline)
	defer cancel()
	timedOut := func(err error) error {
		if context.Cause(ctx) == errDeadline {
			return fmt.Errorf("%w after %v", ErrTimeout, c.timeout)
		}
		return err
	}

	addrs, err := c.vet(ctx, host)
	if err != nil {
		return fail(timedOut(err))
	}
	tr := c.pool.get(host, uint16(port), addrs, c.vetAddr)

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, canon, nil)
	if err != nil {
		return fail(err)
	}
	if h != nil {
		req.Header = h.Clone()
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "fullsend")
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return fail(timedOut(err))
	}
	defer resp.Body.Close()

	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		loc := resp.Header.Get("Location")
		if l, err := u.Parse(loc); err == nil {
			loc = l.String()
		}
		if loc == "" {
			loc = "(no Location)"
		}
		return fail(fmt.Errorf("%w: %d to %s", ErrRedirect, resp.StatusCode, loc))
	case resp.StatusCode != http.StatusOK:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
		return fail(&StatusError{
			StatusCode: resp.StatusCode,
			Header:     resp.Header.Clone(),
			Body:       []byte(Redact(string(body))),
		})
	}
	if resp.ContentLength > c.maxSize {
		return fail(fmt.Errorf("%w: Content-Length %d exceeds the limit of %d bytes", ErrTooLarge, resp.ContentLength, c.maxSize))
	}
	body, err := limit.ReadAll(resp.Body, c.maxSize)
	if tl := (*limit.TooLargeError)(nil); errors.As(err, &tl) {
		return fail(fmt.Errorf("%w: body exceeds the limit of %d bytes", ErrTooLarge, c.maxSize))
	}
	if err != nil {
		return fail(timedOut(fmt.Errorf("reading body: %w", err)))
	}
	return &Response{Body: body, Header: resp.Header.Clone(), StatusCode: resp.StatusCode}, nil
}

// GetPinned fetches rawURL and returns its body only if its sha256 is want.
// An empty want is ErrMissingDigest (no request is made); a malformed one
// is ref.ErrBadDigest; a mismatch is ErrHashMismatch.
func (c *Client) GetPinned(ctx context.Context, rawURL string, want ref.Digest) ([]byte, error) {
	shown := Redact(ref.Redact(rawURL))
	if want == "" {
		return nil, &Error{URL: shown, Err: ErrMissingDigest}
	}
	want, err := ref.ParseDigest(string(want))
	if err != nil {
		return nil, &Error{URL: shown, Err: ref.ErrBadDigest}
	}
	resp, err := c.Get(ctx, rawURL, nil)
	if err != nil {
		return nil, err
	}
	if got := ref.SHA256(resp.Body); got != want {
		return nil, &Error{URL: shown, Err: fmt.Errorf("%w: got %s, want %s", ErrHashMismatch, got, want)}
	}
	return resp.Body, nil
}

// refusal turns a canonicalisation error into ErrScheme keeping ref's
// reason (the URL itself is named by the outer *Error).
func refusal(err error) error {
	var re *ref.Error
	if errors.As(err, &re) {
		err = re.Err
	}
	return fmt.Errorf("%w: %w", ErrScheme, err)
}

// vet returns the addresses host may be dialled at: a literal address, or
// every address the resolver returns, all of which must pass checkAddr.
func (c *Client) vet(ctx context.Context, host string) ([]netip.Addr, error) {
	if netguard.IsMetadata(host) {
		return nil, fmt.Errorf("%w: %s is a cloud metadata endpoint", ErrInternalAddress, host)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if why := c.checkAddr(a); why != "" {
			return nil, fmt.Errorf("%w: %v is %s", ErrInternalAddress, a, why)
		}
		return []netip.Addr{a.Unmap()}, nil
	}
	addrs, err := c.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolving %s: no addresses", host)
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if why := c.checkAddr(a); why != "" {
			return nil, fmt.Errorf("%w: %s resolves to %v, %s", ErrInternalAddress, host, a, why)
		}
		out = append(out, a.Unmap())
	}
	return out, nil
}

// vetAddr is checkAddr as an error, for the dialer's re-check.
func (c *Client) vetAddr(a netip.Addr) error {
	if why := c.checkAddr(a); why != "" {
		return fmt.Errorf("%w: %v is %s", ErrInternalAddress, a, why)
	}
	return nil
}

// checkAddr applies netguard's address rule to one address and returns why
// it is refused, or "". Metadata addresses are refused even inside
// AllowedPrivateNetworks.
func (c *Client) checkAddr(a netip.Addr) string {
	switch class, why := netguard.CheckAddr(a, c.o.AllowedPrivateNetworks); class {
	case netguard.Metadata:
		return why
	case netguard.Internal:
		return why + ", outside allowed_private_networks"
	}
	return ""
}
