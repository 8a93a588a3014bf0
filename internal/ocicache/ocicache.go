package ocicache

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// Media types, tags and annotations of the layout (see the package doc).
const (
	TreeArtifactType = "application/vnd.fullsend.tree.v1"
	FileArtifactType = "application/vnd.fullsend.file.v1"
	LayerMediaType   = "application/vnd.fullsend.file.v1.content"
	ManifestType     = "application/vnd.oci.image.manifest.v1+json"
	EmptyConfigType  = "application/vnd.oci.empty.v1+json"

	TreeTagPrefix = "tree-"
	FileTagPrefix = "file-"

	AnnotationPath   = "dev.fullsend.path"
	AnnotationMode   = "dev.fullsend.mode"
	AnnotationDigest = "dev.fullsend.sha256"
	AnnotationSource = "dev.fullsend.source"
	annotationTitle  = "org.opencontainers.image.title"

	// FileMode is the mode recorded for every layer (modes are not part of
	// the tree hash; see the package doc).
	FileMode = "0644"
)

// Limits.
const (
	// MaxManifestSize bounds a manifest read from the registry (the size
	// registries themselves accept).
	MaxManifestSize = 4 << 20
	// EmbedFileMax and EmbedTotalMax bound the bytes embedded in a tree
	// manifest ("data"): per file, and per manifest before base64.
	EmbedFileMax  = 16 << 10
	EmbedTotalMax = 256 << 10
	// MaxRedirects bounds the redirects of one blob GET or HEAD.
	MaxRedirects = 3
	// DefaultConcurrency bounds the parallel blob requests of one tree.
	DefaultConcurrency = 8
	// maxTagPages bounds the pages of a tag listing.
	maxTagPages = 1000
)

// Environment variables with credentials for the registry.
const (
	EnvToken    = "FULLSEND_CACHE_OCI_TOKEN"
	EnvUsername = "FULLSEND_CACHE_OCI_USERNAME"
	EnvPassword = "FULLSEND_CACHE_OCI_PASSWORD"
)

// Sentinels; every error of a Cache method is an *Error matching one.
var (
	// ErrNotFound: the registry does not have the entry (a miss).
	ErrNotFound = errors.New("not in the registry")
	// ErrRefused: the registry served content that failed verification.
	ErrRefused = errors.New("registry content refused")
	// ErrUnavailable: the registry could not be reached or answered with
	// an error; the Cache asks it no more.
	ErrUnavailable = errors.New("registry unavailable")
)

// Error is a failure of one registry operation.
type Error struct {
	Registry string     // the repository, HOST/PATH
	Digest   ref.Digest // "" for operations on no single entry
	What     string     // "file", "tree", "tag list"
	Err      error
}

func (e *Error) Error() string {
	if e.Digest == "" {
		return fmt.Sprintf("registry %s: %s: %v", e.Registry, e.What, e.Err)
	}
	return fmt.Sprintf("registry %s: %s sha256:%s: %v", e.Registry, e.What, e.Digest, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Options configures a Cache.
type Options struct {
	// Repository is "HOST[:PORT]/PATH" (config.CheckOCIRepository).
	Repository string
	// PlainHTTP talks HTTP to the registry host instead of HTTPS.
	PlainHTTP bool
	// AllowedPrivateNetworks apply to every host but the registry's own
	// (blob redirects, upload locations, token realms).
	AllowedPrivateNetworks []netip.Prefix
	// Timeout bounds each request, body included (default
	// fetch.DefaultTimeout).
	Timeout time.Duration
	// MaxSize bounds a file and a tree's total (default
	// fetch.DefaultMaxSize).
	MaxSize int64
	// Concurrency bounds a tree's parallel blob requests (default
	// DefaultConcurrency).
	Concurrency int
	// Getenv reads the FULLSEND_CACHE_OCI_* credentials (nil: none from
	// the environment; the Docker credential store is still asked).
	Getenv func(string) string
	// Resolver replaces the system resolver; RootCAs the system roots.
	// Tests only.
	Resolver fetch.Resolver
	RootCAs  *x509.CertPool
	// DockerConfig, when set, is the Docker config.json to read
	// credentials from instead of the default one. Tests only.
	DockerConfig string
}

// Cache is one registry repository. It is safe for concurrent use.
type Cache struct {
	o        Options
	repo     *remote.Repository
	registry string // host[:port] as in the repository reference
	hostport string // lower-case host:port as dialled
	maxSize  int64

	down     atomic.Pointer[Error] // first unavailability, then every call fails
	pushDown atomic.Pointer[Error] // first failed push, then every push fails

	storeOnce sync.Once
	store     credentials.Store
	storeErr  error

	uploads singleflight.Group // one upload per blob digest at a time
	pushed  sync.Map           // godigest.Digest → struct{}: blobs the registry has
}

// New returns a Cache for o.Repository. It makes no request.
func New(o Options) (*Cache, error) {
	if o.Timeout <= 0 {
		o.Timeout = fetch.DefaultTimeout
	}
	if o.MaxSize <= 0 {
		o.MaxSize = fetch.DefaultMaxSize
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if strings.Contains(o.Repository, "://") || strings.ContainsAny(o.Repository, "@") {
		return nil, fmt.Errorf("registry %s: want HOST[:PORT]/PATH", o.Repository)
	}
	repo, err := remote.NewRepository(o.Repository)
	if err != nil {
		return nil, fmt.Errorf("registry %s: %w", o.Repository, err)
	}
	if repo.Reference.Reference != "" {
		return nil, fmt.Errorf("registry %s: a repository, not a tag or digest reference", o.Repository)
	}
	c := &Cache{o: o, repo: repo, registry: repo.Reference.Registry, maxSize: o.MaxSize}
	c.hostport = dialHostPort(c.registry, o.PlainHTTP)
	repo.PlainHTTP = o.PlainHTTP
	repo.SkipReferrersGC = true
	repo.TagListMaxPages = maxTagPages
	repo.Client = &auth.Client{
		Client:     c.httpClient(),
		Header:     http.Header{"User-Agent": {"fullsend"}},
		Cache:      auth.NewCache(),
		Credential: c.credential,
	}
	return c, nil
}

// Name is the repository, HOST[:PORT]/PATH, for messages.
func (c *Cache) Name() string { return c.o.Repository }

// dialHostPort is the lower-case host:port a transport dials for the
// registry host as written (default port by scheme).
func dialHostPort(registry string, plain bool) string {
	h, p, err := net.SplitHostPort(registry)
	if err != nil {
		h, p = strings.Trim(registry, "[]"), "443"
		if plain {
			p = "80"
		}
	}
	return net.JoinHostPort(strings.ToLower(h), p)
}

// isRegistry reports whether the dial address or URL host hp (host:port,
// or host alone with scheme's default port) is the registry host.
func (c *Cache) isRegistry(hp, scheme string) bool {
	if _, _, err := net.SplitHostPort(hp); err != nil {
		hp = dialHostPort(hp, scheme == "http")
	} else {
		h, p, _ := net.SplitHostPort(hp)
		hp = net.JoinHostPort(strings.ToLower(h), p)
	}
	return hp == c.hostport
}

// everywhere exempts every range from the private-network rule (cloud
// metadata stays refused): the registry host is the org's own choice.
var everywhere = []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}

// httpClient builds the client every request of the Cache goes through
// (see the package doc, Network).
func (c *Cache) httpClient() *http.Client {
	own := fetch.New(fetch.Options{AllowedPrivateNetworks: everywhere, Resolver: c.o.Resolver, Timeout: c.o.Timeout})
	other := fetch.New(fetch.Options{AllowedPrivateNetworks: c.o.AllowedPrivateNetworks, Resolver: c.o.Resolver, Timeout: c.o.Timeout})
	tr := &http.Transport{
		Proxy: nil, // never a proxy from the environment
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if c.isRegistry(addr, "") {
				return own.DialContext(ctx, network, addr)
			}
			return other.DialContext(ctx, network, addr)
		},
		TLSClientConfig:        &tls.Config{RootCAs: c.o.RootCAs, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:      true,
		MaxResponseHeaderBytes: fetch.MaxHeaderBytes,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    64,
		IdleConnTimeout:        60 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
	}
	return &http.Client{
		Transport:     &schemeGuard{c: c, next: tr},
		Timeout:       c.o.Timeout,
		CheckRedirect: c.checkRedirect,
	}
}

// schemeGuard refuses every request but https, and plain http to the
// registry host when plain_http is set.
type schemeGuard struct {
	c    *Cache
	next http.RoundTripper
}

func (g *schemeGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.URL.Scheme {
	case "https":
	case "http":
		if !g.c.o.PlainHTTP || !g.c.isRegistry(req.URL.Host, "http") {
			closeBody(req)
			return nil, fmt.Errorf("plain http to %s refused: only the registry itself, with plain_http set, is spoken to without TLS", req.URL.Host)
		}
	default:
		closeBody(req)
		return nil, fmt.Errorf("scheme %q refused", req.URL.Scheme)
	}
	return g.next.RoundTrip(req)
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// checkRedirect lets a blob GET or HEAD follow at most MaxRedirects
// redirects (object storage); every other request fails on a redirect.
// Authorization never goes to another host.
func (c *Cache) checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	if first.Method != http.MethodGet && first.Method != http.MethodHead || !strings.Contains(first.URL.Path, "/blobs/sha256:") {
		return fmt.Errorf("%s %s redirected to %s: only blob downloads may be redirected", first.Method, first.URL.Redacted(), req.URL.Redacted())
	}
	if len(via) > MaxRedirects {
		return fmt.Errorf("%s %s: more than %d redirects", first.Method, first.URL.Redacted(), MaxRedirects)
	}
	if !strings.EqualFold(req.URL.Host, first.URL.Host) {
		req.Header.Del("Authorization")
	}
	return nil
}

// credential is the auth.CredentialFunc: the environment, else the Docker
// credential store, and only for the registry host.
func (c *Cache) credential(ctx context.Context, hostport string) (auth.Credential, error) {
	if !strings.EqualFold(hostport, c.registry) {
		return auth.EmptyCredential, nil
	}
	if g := c.o.Getenv; g != nil {
		if tok := g(EnvToken); tok != "" {
			return auth.Credential{AccessToken: tok}, nil
		}
		if u, p := g(EnvUsername), g(EnvPassword); u != "" || p != "" {
			return auth.Credential{Username: u, Password: p}, nil
		}
	}
	c.storeOnce.Do(func() {
		if c.o.DockerConfig != "" {
			c.store, c.storeErr = credentials.NewStore(c.o.DockerConfig, credentials.StoreOptions{})
		} else {
			c.store, c.storeErr = credentials.NewStoreFromDocker(credentials.StoreOptions{})
		}
	})
	if c.storeErr != nil {
		return auth.EmptyCredential, fmt.Errorf("docker credential store: %w", c.storeErr)
	}
	return credentials.Credential(c.store)(ctx, hostport)
}

// fail wraps err for entry d, classifying it; an unavailability trips the
// breaker.
func (c *Cache) fail(what string, d ref.Digest, sentinel error, err error) error {
	msg := fetch.Redact(oneLine(err.Error()))
	e := &Error{Registry: c.o.Repository, Digest: d, What: what, Err: fmt.Errorf("%w: %s", sentinel, msg)}
	if sentinel == ErrUnavailable {
		c.down.CompareAndSwap(nil, &Error{Registry: c.o.Repository, What: "earlier failure", Err: fmt.Errorf("%w: %s", ErrUnavailable, msg)})
	}
	return e
}

// check returns the breaker's error when the registry was found
// unavailable before.
func (c *Cache) check() error {
	if e := c.down.Load(); e != nil {
		return e
	}
	return nil
}

// checkPush is check for pushes: a registry that refused a push (no push
// rights, say) is not pushed to again, but may still be read.
func (c *Cache) checkPush() error {
	if err := c.check(); err != nil {
		return err
	}
	if e := c.pushDown.Load(); e != nil {
		return e
	}
	return nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
