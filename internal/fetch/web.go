package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/limit"
	"github.com/fullsend-ai/fullsend/internal/netguard"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// Limits of a web page fetch (WebClient) when WebOptions leaves them zero.
const (
	DefaultWebTimeout = 30 * time.Second
	DefaultWebMaxSize = 2 << 20
	MaxWebHops        = 5 // redirects followed at most
)

// ErrTooManyRedirects: a web page fetch met more than MaxWebHops redirects.
var ErrTooManyRedirects = errors.New("too many redirects")

// WebAllow is one egress allowlist entry (sandbox.ParseAllow's result),
// matched by the sandbox allowlist's own rule, netguard.AllowEntry.Admits:
// Port 0 admits ports 80 and 443.
type WebAllow = netguard.AllowEntry

// WebOptions is the policy of a WebClient: the rules of Client (address
// vetting, vetted-only dialling, no proxy, header bound) with plain http
// also allowed and redirects followed hop by hop.
type WebOptions struct {
	// Allow is the run's egress allowlist: a host (and port) outside it
	// is ErrDomain, so the fetch reaches nothing the sandbox could not.
	Allow                  []WebAllow
	AllowedPrivateNetworks []netip.Prefix
	Timeout                time.Duration // whole fetch, all hops; zero: DefaultWebTimeout
	MaxSize                int64         // body of the last hop; zero: DefaultWebMaxSize
	Resolver               Resolver
	// Client, when set, is used for its pool and dial (tests); its own
	// AllowedDomains are not consulted.
	Client *Client
}

// WebResponse is the final answer of a web page fetch.
type WebResponse struct {
	URL        string   // the URL of the last hop
	Hops       []string // every URL requested, in order (redirects included)
	StatusCode int
	Header     http.Header
	Body       []byte
}

// WebClient fetches web pages for the native runtime's web_fetch tool.
// Rules, per hop: the URL is canonicalised (http or https; https is never
// downgraded to http by a redirect), the host and port must match Allow,
// every resolved address passes netguard.CheckAddr with
// AllowedPrivateNetworks (metadata never), and only vetted addresses are
// dialled. A 3xx with a Location is followed up to MaxWebHops times, each
// hop vetted afresh; the whole fetch is bounded by Timeout and the body by
// MaxSize (ErrTooLarge). Any final status but 200 is a *StatusError.
type WebClient struct {
	c     *Client
	allow []WebAllow
}

// NewWeb returns a web page client enforcing o.
func NewWeb(o WebOptions) *WebClient {
	c := o.Client
	if c == nil {
		c = New(Options{})
	}
	// A copy of the client's policy: its pool and dial, web's own rules.
	wc := &Client{o: c.o, resolver: c.resolver, timeout: o.Timeout, maxSize: o.MaxSize, pool: c.pool}
	wc.o.AllowedDomains = nil
	wc.o.AllowedPrivateNetworks = append([]netip.Prefix(nil), o.AllowedPrivateNetworks...)
	if o.Resolver != nil {
		wc.resolver = o.Resolver
	}
	if wc.timeout <= 0 {
		wc.timeout = DefaultWebTimeout
	}
	if wc.maxSize <= 0 {
		wc.maxSize = DefaultWebMaxSize
	}
	return &WebClient{c: wc, allow: append([]WebAllow(nil), o.Allow...)}
}

// MaxSize is the body limit in force.
func (w *WebClient) MaxSize() int64 { return w.c.maxSize }

// Get fetches rawURL following redirects under the rules of WebClient.
func (w *WebClient) Get(ctx context.Context, rawURL string) (*WebResponse, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, w.c.timeout, errDeadline)
	defer cancel()
	timedOut := func(err error) error {
		if context.Cause(ctx) == errDeadline {
			return fmt.Errorf("%w after %v", ErrTimeout, w.c.timeout)
		}
		return err
	}
	out := &WebResponse{}
	next, wasHTTPS := rawURL, false
	for hop := 0; ; hop++ {
		canon, u, err := canonicalWeb(next)
		if err != nil {
			return nil, &Error{URL: Redact(ref.Redact(next)), Err: refusal(err)}
		}
		shown := Redact(canon)
		if wasHTTPS && u.Scheme == "http" {
			return nil, &Error{URL: shown, Err: fmt.Errorf("%w: redirect from https to http", ErrScheme)}
		}
		wasHTTPS = u.Scheme == "https"
		out.Hops = append(out.Hops, shown)
		resp, err := w.hop(ctx, u)
		if err != nil {
			return nil, &Error{URL: shown, Err: timedOut(err)}
		}
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			loc := resp.Header.Get("Location")
			resp.Body.Close()
			if loc == "" {
				return nil, &Error{URL: shown, Err: fmt.Errorf("%w: %d without Location", ErrRedirect, resp.StatusCode)}
			}
			if hop >= MaxWebHops {
				return nil, &Error{URL: shown, Err: fmt.Errorf("%w: more than %d", ErrTooManyRedirects, MaxWebHops)}
			}
			l, err := u.Parse(loc)
			if err != nil {
				return nil, &Error{URL: shown, Err: fmt.Errorf("%w: bad Location: %v", ErrRedirect, err)}
			}
			l.Fragment, l.RawFragment = "", ""
			next = l.String()
			continue
		}
		out.URL, out.StatusCode, out.Header = shown, resp.StatusCode, resp.Header.Clone()
		body, err := w.body(resp)
		if err != nil {
			return nil, &Error{URL: shown, Err: timedOut(err)}
		}
		out.Body = body
		return out, nil
	}
}

// hop applies the host, port and address rules to u and sends one GET.
func (w *WebClient) hop(ctx context.Context, u *url.URL) (*http.Response, error) {
	host := u.Hostname()
	port := 443
	if u.Scheme == "http" {
		port = 80
	}
	if p := u.Port(); p != "" {
		port, _ = strconv.Atoi(p)
	}
	if netguard.IsMetadata(host) {
		return nil, fmt.Errorf("%w: %s is a cloud metadata endpoint", ErrInternalAddress, host)
	}
	if !netguard.Admits(w.allow, host, port) {
		return nil, fmt.Errorf("%w: %s port %d is not in the run's egress allowlist (the harness policy's network_policies endpoints)", ErrDomain, host, port)
	}
	addrs, err := w.c.vet(ctx, host)
	if err != nil {
		return nil, err
	}
	tr := w.c.pool.get(host, uint16(port), addrs, w.c.vetAddr)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "fullsend")
	req.Header.Set("Accept", "text/html, text/plain;q=0.9, */*;q=0.5")
	return tr.RoundTrip(req)
}

// body reads a final answer within the size limit; non-200 is a StatusError.
func (w *WebClient) body(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
		return nil, &StatusError{StatusCode: resp.StatusCode, Header: resp.Header.Clone(), Body: []byte(Redact(string(body)))}
	}
	if resp.ContentLength > w.c.maxSize {
		return nil, fmt.Errorf("%w: Content-Length %d exceeds the limit of %d bytes", ErrTooLarge, resp.ContentLength, w.c.maxSize)
	}
	body, err := limit.ReadAll(resp.Body, w.c.maxSize)
	if tl := (*limit.TooLargeError)(nil); errors.As(err, &tl) {
		return nil, fmt.Errorf("%w: body exceeds the limit of %d bytes", ErrTooLarge, w.c.maxSize)
	}
	if err != nil {
		return nil, fmt.Errorf("reading body: %w", err)
	}
	return body, nil
}

// canonicalWeb canonicalises an http or https URL with ref's rules (an
// http URL is canonicalised as its https twin, keeping its own port).
func canonicalWeb(raw string) (string, *url.URL, error) {
	scheme, rest, ok := strings.Cut(raw, ":")
	if !ok || !(strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")) {
		return "", nil, errors.New("only http and https URLs are allowed")
	}
	isHTTP := strings.EqualFold(scheme, "http")
	canon, err := ref.Canonicalize("https:" + rest)
	if err != nil {
		return "", nil, err
	}
	u, err := url.Parse(canon)
	if err != nil {
		return "", nil, err
	}
	if isHTTP {
		u.Scheme = "http"
		if orig, err := url.Parse(raw); err == nil && orig.Port() == "443" {
			u.Host = u.Host + ":443"
		}
	}
	return u.String(), u, nil
}
