package kubernetes

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client is what the backend asks of the API server: seven calls on two
// resources. NewClient implements it with net/http and JSON; tests adapt
// client-go's fake clientset to it.
type Client interface {
	CreatePod(ctx context.Context, p *Pod) error
	GetPod(ctx context.Context, ns, name string) (*Pod, error)
	ListPods(ctx context.Context, ns, selector string) ([]Pod, error)
	DeletePod(ctx context.Context, ns, name string) error // no grace period
	CreateNetworkPolicy(ctx context.Context, np *NetworkPolicy) error
	ListNetworkPolicies(ctx context.Context, ns, selector string) ([]NetworkPolicy, error)
	DeleteNetworkPolicy(ctx context.Context, ns, name string) error
}

// Cluster is how to reach one API server: its URL, the TLS settings
// (server CA, client certificate) and how each request is authenticated.
type Cluster struct {
	Server string // https://HOST[:PORT][/PATH]
	TLS    *tls.Config
	// Proxy picks the HTTP proxy of a request (nil: none).
	Proxy func(*http.Request) (*url.URL, error)
	// Auth adds credentials to a request (nil: none beyond the TLS
	// client certificate). Like kubectl, the backend never sends them to
	// an http:// server, where anyone on the path could read them.
	Auth func(*http.Request) error
}

// APIError is the API server's answer to a request it refused.
type APIError struct {
	Code    int    // HTTP status
	Reason  string // metav1.Status reason (NotFound, Forbidden, …)
	Message string
}

func (e *APIError) Error() string {
	if e.Message != "" {
		return e.Message
	}
	return fmt.Sprintf("the API server answered %d %s", e.Code, http.StatusText(e.Code))
}

// IsNotFound reports whether err is the API server's 404.
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Code == http.StatusNotFound
}

type restClient struct {
	base *url.URL
	hc   *http.Client
	auth func(*http.Request) error
}

// NewClient returns the Client of c. It speaks JSON (every API server
// does; the backend's few small objects gain nothing from protobuf).
func NewClient(c *Cluster) (Client, error) {
	u, err := serverURL(c.Server)
	if err != nil {
		return nil, err
	}
	return &restClient{base: u, hc: &http.Client{Transport: c.transport()}, auth: c.auth(u)}, nil
}

// auth is c.Auth, or nil for a plain-HTTP server.
func (c *Cluster) auth(u *url.URL) func(*http.Request) error {
	if u.Scheme != "https" {
		return nil
	}
	return c.Auth
}

func serverURL(server string) (*url.URL, error) {
	if !strings.Contains(server, "://") {
		server = "https://" + server
	}
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("kubernetes API server %q: want https://HOST[:PORT]", server)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u, nil
}

func (c *Cluster) transport() *http.Transport {
	return &http.Transport{
		Proxy:               c.Proxy,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     c.TLS.Clone(), // net/http adds "h2" to it: never the caller's copy
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     90 * time.Second,
	}
}

// do sends method to path (below the server URL) with body as JSON and
// decodes a 2xx answer into out (when not nil).
func (c *restClient) do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	u := *c.base
	u.Path += path
	u.RawQuery = query.Encode()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "fullsend")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.auth != nil {
		if err := c.auth(req); err != nil {
			return err
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, u.Path, err)
	}
	if resp.StatusCode/100 != 2 {
		return statusError(resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: the API server's answer: %w", method, u.Path, err)
	}
	return nil
}

// statusError reads the metav1.Status an API server sends with an error.
func statusError(code int, body []byte) error {
	var st struct {
		Kind    string `json:"kind"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" {
		return &APIError{Code: code, Reason: st.Reason, Message: st.Message}
	}
	msg := strings.TrimSpace(string(body))
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	if msg != "" {
		msg = fmt.Sprintf("the API server answered %d %s: %s", code, http.StatusText(code), msg)
	}
	return &APIError{Code: code, Message: msg}
}

func nsPath(group, ns, resource, name string) string {
	p := "/api/v1"
	if group != "" {
		p = "/apis/" + group + "/v1"
	}
	p += "/namespaces/" + url.PathEscape(ns) + "/" + resource
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	return p
}

var noGrace = map[string]any{"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0}

func (c *restClient) CreatePod(ctx context.Context, p *Pod) error {
	return c.do(ctx, http.MethodPost, nsPath("", p.Namespace, "pods", ""), nil, p, nil)
}

func (c *restClient) GetPod(ctx context.Context, ns, name string) (*Pod, error) {
	var p Pod
	err := c.do(ctx, http.MethodGet, nsPath("", ns, "pods", name), nil, nil, &p)
	return &p, err
}

func (c *restClient) ListPods(ctx context.Context, ns, selector string) ([]Pod, error) {
	var l struct{ Items []Pod }
	err := c.do(ctx, http.MethodGet, nsPath("", ns, "pods", ""), url.Values{"labelSelector": {selector}}, nil, &l)
	return l.Items, err
}

func (c *restClient) DeletePod(ctx context.Context, ns, name string) error {
	return c.do(ctx, http.MethodDelete, nsPath("", ns, "pods", name), nil, noGrace, nil)
}

func (c *restClient) CreateNetworkPolicy(ctx context.Context, np *NetworkPolicy) error {
	return c.do(ctx, http.MethodPost, nsPath("networking.k8s.io", np.Namespace, "networkpolicies", ""), nil, np, nil)
}

func (c *restClient) ListNetworkPolicies(ctx context.Context, ns, selector string) ([]NetworkPolicy, error) {
	var l struct{ Items []NetworkPolicy }
	err := c.do(ctx, http.MethodGet, nsPath("networking.k8s.io", ns, "networkpolicies", ""), url.Values{"labelSelector": {selector}}, nil, &l)
	return l.Items, err
}

func (c *restClient) DeleteNetworkPolicy(ctx context.Context, ns, name string) error {
	return c.do(ctx, http.MethodDelete, nsPath("networking.k8s.io", ns, "networkpolicies", name), nil, map[string]any{"kind": "DeleteOptions", "apiVersion": "v1"}, nil)
}
