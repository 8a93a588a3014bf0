package gateway

import (
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/egress"
)

// DefaultPort is the gateway's listening port (the Service's too).
const DefaultPort = 3128

// Config configures a gateway.
type Config struct {
	Key                    []byte // signing key (ParseKey)
	AllowedPrivateNetworks []netip.Prefix
	Resolver               sandbox.Resolver // nil = net.DefaultResolver
	Log                    io.Writer        // one line per decision; may be nil
	Now                    func() time.Time // nil = time.Now
}

// Gateway is the egress proxy with per-request token checks.
type Gateway struct {
	proxy *egress.Proxy
}

// New returns a gateway; it refuses a key shorter than MinKeyBytes.
func New(c Config) (*Gateway, error) {
	if len(c.Key) < MinKeyBytes {
		return nil, fmt.Errorf("egress gateway: signing key shorter than %d bytes", MinKeyBytes)
	}
	now := c.Now
	if now == nil {
		now = time.Now
	}
	key := append([]byte(nil), c.Key...)
	p, err := egress.New(egress.Config{
		AllowedPrivateNetworks: c.AllowedPrivateNetworks,
		Resolver:               c.Resolver,
		Log:                    c.Log,
		LogAllowed:             true,
		Authorize: func(req *http.Request) ([]string, string, error) {
			cl, err := Verify(key, proxyPassword(req.Header.Get("Proxy-Authorization")), now())
			if err != nil {
				return nil, "run=?", err
			}
			return cl.Allow, "run=" + cl.Run, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return &Gateway{proxy: p}, nil
}

// proxyPassword returns the password of Basic proxy credentials, "" when
// there are none. The user name is not checked: the token says everything.
func proxyPassword(h string) string {
	scheme, enc, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return ""
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return ""
	}
	_, pw, _ := strings.Cut(string(b), ":")
	return pw
}

// Serve accepts connections on l until l or the gateway is closed.
func (g *Gateway) Serve(l net.Listener) error { return g.proxy.Serve(l) }

// Close stops the listeners and cuts every connection.
func (g *Gateway) Close() error { return g.proxy.Close() }

// ProxyURL is the HTTP(S)_PROXY value that gives a sandbox the token:
// http://run:TOKEN@GATEWAY. gateway is "http://HOST:PORT" (or "HOST:PORT").
func ProxyURL(gateway, token string) (string, error) {
	if !strings.Contains(gateway, "://") {
		gateway = "http://" + gateway
	}
	u, err := url.Parse(gateway)
	if err != nil || u.Scheme != "http" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("egress gateway %q: want http://HOST:PORT", gateway)
	}
	u.Path = ""
	u.User = url.UserPassword("run", token)
	return u.String(), nil
}
