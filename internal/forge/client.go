package forge

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/fetch"
)

// Limits. Each is enforced with an error, never by truncating.
const (
	DefaultConcurrency = 32               // blob downloads in flight per FetchTree (GitHub allows 100)
	DefaultMaxInFlight = 64               // requests in flight on one Client, every fetch together
	DefaultRetries     = 3                // retries after a rate-limit or 5xx answer
	MaxRetryWait       = 60 * time.Second // longest Retry-After honoured
	MaxTreeFiles       = 1000             // files in one directory tree
	MaxListPages       = 50               // GitLab tree pages (100 entries each)
	MaxListRequests    = 200              // GitHub contents-API directory listings
)

// Client lists and downloads forge content through a fetch.Client, so every
// request obeys the fetch SSRF rules. It is safe for concurrent use.
type Client struct {
	fc          *fetch.Client
	forges      []config.Forge
	getenv      func(string) string
	sleep       func(context.Context, time.Duration) error
	now         func() time.Time
	retries     int
	concurrency int
	// inflight holds one token per request on the wire: every FetchTree
	// and file of a resolution shares one Client, so this bounds what one
	// resolution asks of the forges at once, however many trees it
	// fetches in parallel (retry waits hold no token).
	inflight chan struct{}

	treeMu sync.Mutex
	trees  map[string]*treeCall // GitHub tree listings by API URL (github.go)
}

// Option adjusts a Client.
type Option func(*Client)

// WithSleep replaces the wait between retries (tests make it instant or
// record the durations). f must return ctx.Err() if ctx ends first.
func WithSleep(f func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Client) { c.sleep = f }
}

// WithClock replaces time.Now for X-RateLimit-Reset and Retry-After dates.
func WithClock(now func() time.Time) Option { return func(c *Client) { c.now = now } }

// WithConcurrency bounds parallel blob downloads (minimum 1).
func WithConcurrency(n int) Option {
	return func(c *Client) { c.concurrency = max(1, n) }
}

// WithMaxInFlight bounds the requests in flight on the client, all
// fetches together (minimum 1).
func WithMaxInFlight(n int) Option {
	return func(c *Client) { c.inflight = make(chan struct{}, max(1, n)) }
}

// WithRetries sets how many times a rate-limited or 5xx request is retried
// (0 = never).
func WithRetries(n int) Option { return func(c *Client) { c.retries = max(0, n) } }

// New returns a client for forges. Tokens are read with getenv (nil means
// no tokens) from each forge's TokenEnv, at request time, and sent only to
// the host of that forge's APIURL.
func New(fc *fetch.Client, forges []config.Forge, getenv func(string) string, opts ...Option) *Client {
	c := &Client{
		fc:          fc,
		forges:      append([]config.Forge(nil), forges...),
		getenv:      getenv,
		sleep:       sleepCtx,
		now:         time.Now,
		retries:     DefaultRetries,
		concurrency: DefaultConcurrency,
		inflight:    make(chan struct{}, DefaultMaxInFlight),
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// FetchTree downloads every regular file under a Tree location and returns
// them keyed by path relative to the location's directory. Every file is
// verified against its git blob SHA-1; paths pass cas.CheckTreePaths;
// symlinks and submodules are refused; the total size is bounded by the
// fetch client's MaxSize. On error nothing is returned.
func (c *Client) FetchTree(ctx context.Context, loc Location) (map[string][]byte, error) {
	loc, err := c.settle(loc)
	if err != nil {
		return nil, err
	}
	if loc.Kind != Tree {
		return nil, &Error{URL: loc.URL, Err: fmt.Errorf("%w: a %s URL names a file; skill directories need a tree URL", ErrKind, loc.Kind)}
	}
	var files map[string][]byte
	switch loc.Forge.Type {
	case "github":
		files, err = c.githubTree(ctx, loc)
	case "gitlab":
		files, err = c.gitlabTree(ctx, loc)
	}
	if err != nil {
		return nil, &Error{URL: loc.URL, Err: err}
	}
	return files, nil
}

// FetchFile downloads the file a Blob or Raw location names. GitHub and
// GitLab blobs and GitLab raw files come from the forge API (with the
// forge's token); GitHub raw URLs are fetched as they are, without a
// token. The caller verifies the sha256 pin.
func (c *Client) FetchFile(ctx context.Context, loc Location) ([]byte, error) {
	loc, err := c.settle(loc)
	if err != nil {
		return nil, err
	}
	if loc.Kind == Tree {
		return nil, &Error{URL: loc.URL, Err: fmt.Errorf("%w: a tree URL names a directory, not a file", ErrKind)}
	}
	var b []byte
	switch {
	case loc.Forge.Type == "github" && loc.Kind == Raw:
		b, err = c.get(ctx, loc.Forge, loc.URL, "", false)
	case loc.Forge.Type == "github":
		u := c.githubRepoAPI(loc) + "/contents/" + escapeSegs(loc.Path) + "?ref=" + queryEscape(loc.Ref)
		b, err = c.get(ctx, loc.Forge, u, "application/vnd.github.raw+json", true)
	default:
		b, err = c.get(ctx, loc.Forge, c.gitlabRawURL(loc, loc.Path), "", true)
	}
	if err != nil {
		return nil, &Error{URL: loc.URL, Err: err}
	}
	return b, nil
}

// settle replaces the location's forge by the configured one of the same
// host and re-validates every field, so a hand-built Location can neither
// route a token elsewhere nor smuggle an unchecked path.
func (c *Client) settle(loc Location) (Location, error) {
	h := canonicalHost(loc.Forge.Host)
	for _, f := range c.forges {
		if canonicalHost(f.Host) != h {
			continue
		}
		loc.Forge = f
		return reparse(loc, c.forges)
	}
	return Location{}, &Error{URL: loc.URL, Err: ErrNotForge}
}

// file is one regular file of a listing.
type file struct {
	rel  string // path relative to the requested directory
	full string // path in the repository
	sha  string // git blob SHA-1, lower-case hex
	size int64  // as listed (only used to fail early)
}

// addEntry applies the entry-kind rules of a recursive tree listing to one
// entry of type typ and mode below the requested directory (f.rel is its
// path there): a directory adds nothing, a regular or executable file is
// appended to files, and a submodule, a symbolic link, any other kind or a
// listing of more than MaxTreeFiles files refuses the whole listing.
func addEntry(files []file, typ, mode string, f file) ([]file, error) {
	switch {
	case typ == "tree":
	case typ == "commit" || mode == "160000":
		return nil, fmt.Errorf("%w: %s", ErrSubmodule, f.rel)
	case mode == "120000":
		return nil, fmt.Errorf("%w: %s", ErrSymlink, f.rel)
	case typ == "blob" && (mode == "100644" || mode == "100755"):
		files = append(files, f)
	default:
		return nil, fmt.Errorf("%s: unsupported tree entry (type %q, mode %q)", f.rel, typ, mode)
	}
	if len(files) > MaxTreeFiles {
		return nil, fmt.Errorf("%w: more than %d files", ErrTooMany, MaxTreeFiles)
	}
	return files, nil
}

// checkListing applies the path, count and size rules to a listing before
// anything is downloaded.
func (c *Client) checkListing(files []file) error {
	if len(files) == 0 {
		return fmt.Errorf("%w: the directory has no files", ErrNotFound)
	}
	if len(files) > MaxTreeFiles {
		return fmt.Errorf("%w: %d files (limit %d)", ErrTooMany, len(files), MaxTreeFiles)
	}
	paths := make([]string, len(files))
	var total int64
	for i, f := range files {
		paths[i] = f.rel
		if !isSHA1(f.sha) {
			return fmt.Errorf("%s: the listing gives no valid git blob id (%q)", f.rel, f.sha)
		}
		total += max(0, f.size)
	}
	if err := cas.CheckTreePaths(paths); err != nil {
		return err
	}
	if total > c.fc.MaxSize() {
		return fmt.Errorf("%w: files total %d bytes, limit %d", fetch.ErrTooLarge, total, c.fc.MaxSize())
	}
	return nil
}

// download fetches every file with at most c.concurrency requests in
// flight, verifying each against its git blob SHA-1. Identical blobs are
// fetched once. The first failure cancels the rest.
func (c *Client) download(ctx context.Context, files []file, fetchBlob func(ctx context.Context, f file) ([]byte, error)) (map[string][]byte, error) {
	bySHA := map[string][]byte{}
	var unique []file
	for _, f := range files {
		if _, ok := bySHA[f.sha]; !ok {
			bySHA[f.sha] = nil
			unique = append(unique, f)
		}
	}
	var mu sync.Mutex
	var total int64
	limit := c.fc.MaxSize()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.concurrency)
	for _, f := range unique {
		g.Go(func() error {
			b, err := fetchBlob(gctx, f)
			if err != nil {
				return fmt.Errorf("%s: %w", f.rel, err)
			}
			if got := gitBlobSHA1(b); got != f.sha {
				return fmt.Errorf("%s: %w (%w): the listing says %s, the content hashes to %s", f.rel, ErrBlobMismatch, fetch.ErrHashMismatch, f.sha, got)
			}
			mu.Lock()
			defer mu.Unlock()
			total += int64(len(b))
			if total > limit {
				return fmt.Errorf("%w: files exceed %d bytes in total", fetch.ErrTooLarge, limit)
			}
			bySHA[f.sha] = b
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(files))
	for _, f := range files {
		out[f.rel] = bySHA[f.sha]
	}
	return out, nil
}

// get performs one GET with retries and returns the body.
func (c *Client) get(ctx context.Context, f config.Forge, u, accept string, api bool) ([]byte, error) {
	resp, err := c.getResponse(ctx, f, u, accept, api)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// getResponse performs one GET with retries. api marks requests to the
// forge API, the only ones that may carry the token, and only when the
// URL's host is the host of the forge's APIURL.
func (c *Client) getResponse(ctx context.Context, f config.Forge, u, accept string, api bool) (*fetch.Response, error) {
	h := http.Header{}
	if accept != "" {
		h.Set("Accept", accept)
	}
	if f.Type == "github" && api {
		h.Set("X-GitHub-Api-Version", "2022-11-28")
	}
	token := ""
	if api && f.TokenEnv != "" && c.getenv != nil && sameHost(u, f.APIURL) {
		token = c.getenv(f.TokenEnv)
	}
	if token != "" {
		if f.Type == "gitlab" {
			h.Set("PRIVATE-TOKEN", token)
		} else {
			h.Set("Authorization", "Bearer "+token)
		}
	}
	for attempt := 0; ; attempt++ {
		resp, err := c.send(ctx, u, h)
		if err == nil {
			return resp, nil
		}
		scrub(err, token)
		var se *fetch.StatusError
		if !errors.As(err, &se) {
			return nil, err
		}
		wait, retry := c.retryDelay(se, attempt)
		if retry && wait > MaxRetryWait {
			return nil, fmt.Errorf("%w (%w: asked to wait %v, more than %v)", err, ErrRateLimited, wait.Round(time.Second), MaxRetryWait)
		}
		if !retry || attempt >= c.retries {
			switch {
			case retry && (se.StatusCode == http.StatusTooManyRequests || se.StatusCode == http.StatusForbidden):
				return nil, fmt.Errorf("%w (%w: gave up after %d retries)", err, ErrRateLimited, c.retries)
			case retry:
				return nil, fmt.Errorf("%w (gave up after %d retries)", err, c.retries)
			}
			return nil, describe(err, se, f, token != "", api)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// send performs one GET while holding an in-flight token.
func (c *Client) send(ctx context.Context, u string, h http.Header) (*fetch.Response, error) {
	select {
	case c.inflight <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.inflight }()
	return c.fc.Get(ctx, u, h)
}

// retryDelay decides whether an answer is worth retrying and after how
// long: 429, 403 with Retry-After or an exhausted X-RateLimit-Remaining,
// and 500/502/503/504.
func (c *Client) retryDelay(se *fetch.StatusError, attempt int) (time.Duration, bool) {
	backoff := (500 * time.Millisecond) << attempt
	ra := se.Header.Get("Retry-After")
	switch se.StatusCode {
	case http.StatusTooManyRequests, http.StatusForbidden:
		if d, ok := c.parseRetryAfter(ra); ok {
			return d, true
		}
		if se.Header.Get("X-RateLimit-Remaining") == "0" {
			if reset, err := strconv.ParseInt(se.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
				return max(0, time.Unix(reset, 0).Sub(c.now())) + time.Second, true
			}
			return backoff, true
		}
		if se.StatusCode == http.StatusTooManyRequests {
			return backoff, true
		}
		return 0, false
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if d, ok := c.parseRetryAfter(ra); ok {
			return d, true
		}
		return backoff, true
	}
	return 0, false
}

// parseRetryAfter reads delay-seconds or an HTTP date.
func (c *Client) parseRetryAfter(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		n = min(n, int64(10*MaxRetryWait/time.Second)) // no overflow; still "too long"
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, t.Sub(c.now())), true
	}
	return 0, false
}

// describe adds to a 401/403/404 whether a token was sent, and makes 404
// an ErrNotFound.
func describe(err error, se *fetch.StatusError, f config.Forge, tokenSent, api bool) error {
	var hint string
	switch {
	case !api:
		hint = "no token was sent (tokens only go to the forge API host)"
	case tokenSent:
		hint = "a token from $" + f.TokenEnv + " was sent; check that it can read this repository"
	case f.TokenEnv != "":
		hint = "no token was sent; set $" + f.TokenEnv + " if the repository is private"
	default:
		hint = "no token was sent; this forge has no token_env"
	}
	switch se.StatusCode {
	case http.StatusNotFound:
		return fmt.Errorf("%w (%w; %s)", err, ErrNotFound, hint)
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("%w (%s)", err, hint)
	}
	return err
}

// scrub removes the token from a status answer that echoes it, so it can
// appear neither in the message nor in the error's fields.
func scrub(err error, token string) {
	if len(token) < 4 {
		return
	}
	var se *fetch.StatusError
	if errors.As(err, &se) {
		se.Body = bytes.ReplaceAll(se.Body, []byte(token), []byte("REDACTED"))
		for _, vs := range se.Header {
			for i, v := range vs {
				vs[i] = strings.ReplaceAll(v, token, "REDACTED")
			}
		}
	}
}

// sameHost reports whether two canonical URLs share host and port.
func sameHost(a, b string) bool {
	ha, ok1 := urlHost(a)
	hb, ok2 := urlHost(b)
	return ok1 && ok2 && ha == hb
}

func urlHost(u string) (string, bool) {
	rest, ok := strings.CutPrefix(u, "https://")
	if !ok {
		return "", false
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return canonicalHost(rest), rest != ""
}

// gitBlobSHA1 is git's object id of a blob: sha1("blob <len>\x00" + content).
func gitBlobSHA1(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

func isSHA1(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// queryEscape encodes a query value: everything but unreserved characters
// and "/" is %XX (so "+", "&", "=" survive form decoding), which is also the
// form ref.Canonicalize keeps.
func queryEscape(s string) string { return percentEncode(s, "/-._~") }
