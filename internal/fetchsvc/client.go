package fetchsvc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/limit"
)

// Client limits.
const (
	DefaultClientTimeout = DefaultRequestTimeout + 30*time.Second
	MaxResponseBytes     = 1 << 20
)

// ErrNotEnabled means the sandbox has no fetch service: the harness does
// not allow runtime fetch.
var ErrNotEnabled = errors.New("runtime fetch is not enabled for this run (the harness needs allow_runtime_fetch: true)")

// Client is the in-sandbox side of the protocol (`fullsend fetch-skill`).
type Client struct {
	base  *url.URL // http://IP:PORT
	token string
	http  *http.Client
}

// ClientFromEnv builds a client from FULLSEND_FETCH_URL and
// FULLSEND_FETCH_TOKEN. The service URL must be http:// with a loopback IP
// literal and a port (the token goes nowhere else).
//
// The request goes through the sandbox's egress proxy when http_proxy /
// HTTP_PROXY names one on a loopback address (NO_PROXY is ignored for it):
// inside a sandbox the service's loopback address is the runner host's,
// reachable only through that proxy, which admits it as a runner Service.
// Without such a proxy (or with a proxy elsewhere, which must never see the
// token) the client connects directly.
func ClientFromEnv(getenv func(string) string) (*Client, error) {
	raw := getenv(EnvURL)
	if raw == "" {
		return nil, fmt.Errorf("%s is not set: %w", EnvURL, ErrNotEnabled)
	}
	tok := getenv(EnvToken)
	if tok == "" {
		return nil, fmt.Errorf("%s is not set: %w", EnvToken, ErrNotEnabled)
	}
	base, err := serviceURL(raw)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		Proxy:              nil,
		DisableKeepAlives:  true,
		DisableCompression: true,
		DialContext:        (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
	}
	if p := sandboxProxy(getenv); p != nil {
		tr.Proxy = http.ProxyURL(p)
	}
	return &Client{base: base, token: tok, http: &http.Client{
		Transport:     tr,
		Timeout:       DefaultClientTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, nil
}

func serviceURL(raw string) (*url.URL, error) {
	bad := func(why string) (*url.URL, error) {
		return nil, fmt.Errorf("%s %q: %s", EnvURL, raw, why)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad("not a URL")
	}
	if u.Scheme != "http" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		return bad("want http://IP:PORT")
	}
	ap, err := netip.ParseAddrPort(u.Host)
	if err != nil || !ap.Addr().Unmap().IsLoopback() || ap.Port() == 0 {
		return bad("want a loopback IP address and port")
	}
	return &url.URL{Scheme: "http", Host: u.Host}, nil
}

// sandboxProxy returns the HTTP proxy named by http_proxy or HTTP_PROXY
// when it is an http:// proxy on a loopback IP, else nil.
func sandboxProxy(getenv func(string) string) *url.URL {
	for _, k := range []string{"http_proxy", "HTTP_PROXY"} {
		v := getenv(k)
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil || u.Scheme != "http" || u.User != nil {
			return nil
		}
		ap, err := netip.ParseAddrPort(u.Host)
		if err != nil || !ap.Addr().Unmap().IsLoopback() {
			return nil
		}
		return &url.URL{Scheme: "http", Host: u.Host}
	}
	return nil
}

// ServiceError is a refusal or failure reported by the service.
type ServiceError struct {
	Status  int
	Code    string
	Message string
}

func (e *ServiceError) Error() string {
	return fmt.Sprintf("%s (%s, HTTP %d)", e.Message, e.Code, e.Status)
}

// FetchSkill asks the service for the skill at skillURL (a pinned forge
// tree URL) and returns where it now is in the sandbox.
func (c *Client) FetchSkill(ctx context.Context, skillURL string) (*Response, error) {
	body, _ := json.Marshal(Request{URL: skillURL})
	u := *c.base
	u.Path = Path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("runtime fetch service %s: %w", c.base.Host, scrubErr(err, c.token))
	}
	defer resp.Body.Close()
	data, err := limit.ReadAll(resp.Body, MaxResponseBytes)
	if tl := (*limit.TooLargeError)(nil); errors.As(err, &tl) {
		return nil, fmt.Errorf("runtime fetch service %s: answer %w", c.base.Host, err)
	}
	if err != nil {
		return nil, fmt.Errorf("runtime fetch service %s: reading the answer: %w", c.base.Host, scrubErr(err, c.token))
	}
	if resp.StatusCode != http.StatusOK {
		var eb ErrorBody
		if json.Unmarshal(data, &eb) == nil && eb.Error.Code != "" {
			return nil, &ServiceError{Status: resp.StatusCode, Code: eb.Error.Code, Message: eb.Error.Message}
		}
		// Not the service speaking (e.g. the sandbox proxy refusing).
		return nil, &ServiceError{Status: resp.StatusCode, Code: "transport", Message: fmt.Sprintf("runtime fetch service %s: %s", c.base.Host, firstLine(data))}
	}
	var r Response
	if err := json.Unmarshal(data, &r); err != nil || r.Path == "" || !strings.HasPrefix(r.Path, "/") || strings.ContainsAny(r.Path, "\n\r\x00") {
		return nil, fmt.Errorf("runtime fetch service %s: malformed answer", c.base.Host)
	}
	return &r, nil
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// scrubErr makes sure no error text carries the token.
func scrubErr(err error, token string) error {
	if token != "" && strings.Contains(err.Error(), token) {
		return errors.New(strings.ReplaceAll(err.Error(), token, "[token]"))
	}
	return err
}
