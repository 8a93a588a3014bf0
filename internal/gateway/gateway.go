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
	"sync"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/egress"
	"github.com/fullsend-ai/fullsend/internal/secrets"
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
	brokers := &brokerCache{seal: SealKey(key), m: map[string]*cachedBroker{}}
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
		AuthorizeSecrets: func(req *http.Request) (*secrets.Broker, error) {
			cl, err := Verify(key, proxyPassword(req.Header.Get("Proxy-Authorization")), now())
			if err != nil {
				return nil, err
			}
			return brokers.get(cl, now())
		},
	})
	if err != nil {
		return nil, err
	}
	return &Gateway{proxy: p}, nil
}

// brokerCache keeps the opened broker of each sealed secrets claim until
// its token expires, so that a run's CA leaves are issued once.
type brokerCache struct {
	seal []byte
	mu   sync.Mutex
	m    map[string]*cachedBroker
}

type cachedBroker struct {
	b   *secrets.Broker
	exp time.Time
}

// get opens the broker of cl's secrets (nil when it has none).
func (c *brokerCache) get(cl *Claims, now time.Time) (*secrets.Broker, error) {
	if cl.Secrets == "" {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range c.m {
		if !now.Before(v.exp) {
			delete(c.m, k)
		}
	}
	if v, ok := c.m[cl.Secrets]; ok {
		return v.b, nil
	}
	blob, err := base64.RawURLEncoding.DecodeString(cl.Secrets)
	if err != nil {
		return nil, fmt.Errorf("%w: run %s: malformed secrets", ErrToken, cl.Run)
	}
	b, err := secrets.Open(c.seal, blob)
	if err != nil {
		return nil, fmt.Errorf("%w: run %s: %v", ErrToken, cl.Run, err)
	}
	c.m[cl.Secrets] = &cachedBroker{b: b, exp: time.Unix(cl.Exp, 0)}
	return b, nil
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
