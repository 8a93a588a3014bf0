package fetchsvc

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/forge"
	"github.com/fullsend-ai/fullsend/internal/frontmatter"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/limit"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/resolve"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// Protocol constants.
const (
	// Path is the one endpoint: POST {"url": "…"}.
	Path = "/v1/fetch-skill"
	// EnvURL and EnvToken are the sandbox environment variables naming the
	// service ("http://IP:PORT") and carrying the bearer token.
	EnvURL   = "FULLSEND_FETCH_URL"
	EnvToken = "FULLSEND_FETCH_TOKEN"
	// FetchType is the audit fetch_type of every runtime fetch.
	FetchType = audit.FetchRuntime
)

// Limits.
const (
	TokenBytes            = 32       // random bytes in a bearer token
	MaxRequestBytes       = 16 << 10 // request body bound
	MaxSkillMDBytes       = 1 << 20  // SKILL.md bound when reading its frontmatter
	DefaultRequestTimeout = 5 * time.Minute
	maxLogLine            = 2048
)

// Uploader puts a host directory tree into the sandbox, replacing what is
// at sandboxPath; sandbox.Session implements it.
type Uploader interface {
	Upload(ctx context.Context, hostPath, sandboxPath string) error
}

// Store is the content-addressed cache; *cas.Store implements it.
type Store interface {
	Get(d ref.Digest) (cas.Entry, error)
	PutFile(want ref.Digest, meta cas.Metadata, content []byte) (cas.Entry, error)
	PutTree(want ref.Digest, meta cas.Metadata, files map[string][]byte) (cas.Entry, error)
}

// treeFileGetter is implemented by *cas.Store: Get that also returns the
// bytes of named tree files as its verification read them.
type treeFileGetter interface {
	GetTreeFiles(d ref.Digest, paths ...string) (cas.Entry, map[string][]byte, error)
}

// Scanner scans fetched content before it is cached; *scan.Pipeline
// implements it.
type Scanner interface {
	ScanFiles(ctx context.Context, files map[string][]byte, m scan.Meta) (*scan.Result, error)
}

// Auditor records fetches; *audit.Log implements it.
type Auditor interface {
	Append(e audit.Entry) error
}

// Options configure a Service. Store, Scanner and Audit are required;
// Allowed must not be empty.
type Options struct {
	// Config is the org configuration: forges, remote_resources limits
	// (nil: config.Default()).
	Config *config.Config
	// Allowed is the harness's effective allowed_remote_resources.
	Allowed []string
	// MaxFetches is max_runtime_fetches (0: harness.DefaultMaxRuntimeFetches).
	MaxFetches int
	// Store is the cache; Scanner scans what is fetched (remote policy);
	// Audit receives one entry per fetched or cache-hit skill.
	Store   Store
	Scanner Scanner
	Audit   Auditor
	// Network builds the fetch and forge clients on the first cache miss
	// (nil: resolve.NewNetwork(Config, Getenv, nil)).
	Network func() (*resolve.Network, error)
	// Offline (fullsend run --offline) serves cache hits only: a miss is
	// refused (503 offline) without touching the network.
	Offline bool
	// Getenv reads forge tokens when Network is nil (nil: os.Getenv).
	Getenv func(string) string
	// TraceID tags audit entries: the run's trace id (default: random).
	TraceID string
	// SkillsDir is the sandbox directory skills go to (default
	// /sandbox/claude-config/skills).
	SkillsDir string
	// Dependencies resolves a fetched skill's dependencies: (nil: the
	// resolver of package resolve, see ResolveDependencies).
	Dependencies DependencyResolver
	// Log receives one line per request (never the token); may be nil.
	Log io.Writer
	// RequestTimeout bounds one request (default DefaultRequestTimeout).
	RequestTimeout time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Request is the body of POST Path.
type Request struct {
	URL string `json:"url"`
}

// Placed is a skill directory put into the sandbox.
type Placed struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	URL    string `json:"url"`
	SHA256 string `json:"sha256"`
}

// Response is the answer to a successful request. Path is the
// sandbox-local skill directory.
type Response struct {
	Path         string   `json:"path"`
	Name         string   `json:"name"`
	URL          string   `json:"url"`
	SHA256       string   `json:"sha256"`
	CacheHit     bool     `json:"cache_hit"`
	Dependencies []Placed `json:"dependencies,omitempty"`
	// Remaining is how many runtime fetches the run has left.
	Remaining int `json:"remaining"`
}

// ErrorBody is the answer to a refused or failed request.
type ErrorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Service answers runtime fetch requests for one run. It is an
// http.Handler and safe for concurrent use.
type Service struct {
	o          Options
	cfg        *config.Config
	allow      []string // canonical (ref.CanonicalPrefix), matched with ref.MatchCanonical
	allowedBy  []string // audit allowed_by of each allow entry
	max        int64
	token      string
	tokenHash  [sha256.Size]byte
	tokenBytes []byte // the token, for scrubbing log lines
	skillsDir  string
	deps       DependencyResolver

	used    atomic.Int64 // budget slots taken
	closing atomic.Bool
	// afterBudgetCheck, when set (tests only, before any request), runs
	// in reserve between reading the count and taking the slot.
	afterBudgetCheck func()

	netOnce sync.Once
	net     *resolve.Network
	netErr  error

	mu       sync.Mutex
	up       Uploader
	reserved map[string]bool
	names    map[string]*slot
	flights  map[ref.Digest]*flight
	skills   map[ref.Digest]skillMeta // SKILL.md facts of verified trees

	logMu sync.Mutex
}

// slot is a skill name claimed in the sandbox (for the rest of the run,
// even if an upload under it fails). mu serialises uploads to its
// directory; begun numbers them and lastOK is the number of the last one
// that succeeded, so a request can tell whether an upload that began after
// it arrived has already put the tree in place.
type slot struct {
	digest ref.Digest
	url    string
	mu     sync.Mutex
	begun  atomic.Uint64
	lastOK uint64 // guarded by mu
}

// flight is one in-flight acquisition of a tree.
type flight struct {
	done  chan struct{}
	entry cas.Entry
	hit   bool
	err   error
	// skillMD is the tree's verified SKILL.md when the acquisition had it
	// in hand (nil: read it from entry.TreePath).
	skillMD []byte
}

// New validates o and returns a service with a fresh random token.
func New(o Options) (*Service, error) {
	if o.Store == nil || o.Scanner == nil || o.Audit == nil {
		return nil, errors.New("runtime fetch service: Store, Scanner and Audit are required")
	}
	if o.Config == nil {
		o.Config = config.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.MaxFetches <= 0 {
		o.MaxFetches = harness.DefaultMaxRuntimeFetches
	}
	if o.SkillsDir == "" {
		o.SkillsDir = path.Join(runtime.ClaudeConfigDir, "skills")
	}
	if !path.IsAbs(o.SkillsDir) || path.Clean(o.SkillsDir) != o.SkillsDir {
		return nil, fmt.Errorf("runtime fetch service: skills dir %q: want a clean absolute sandbox path", o.SkillsDir)
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.TraceID == "" {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		o.TraceID = hex.EncodeToString(b[:])
	}
	s := &Service{o: o, cfg: o.Config, max: int64(o.MaxFetches), skillsDir: o.SkillsDir,
		reserved: map[string]bool{}, names: map[string]*slot{}, flights: map[ref.Digest]*flight{},
		skills: map[ref.Digest]skillMeta{}}
	for i, p := range o.Allowed {
		c, err := ref.CanonicalPrefix(p)
		if err != nil {
			return nil, fmt.Errorf("runtime fetch service: allowed_remote_resources[%d]: %w", i, err)
		}
		s.allow = append(s.allow, c)
		s.allowedBy = append(s.allowedBy, fmt.Sprintf("allowed_remote_resources[%d]", i))
	}
	if len(s.allow) == 0 {
		return nil, fmt.Errorf("runtime fetch service: %w", harness.ErrRuntimeFetch)
	}
	var tok [TokenBytes]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return nil, fmt.Errorf("runtime fetch service: token: %w", err)
	}
	s.token = hex.EncodeToString(tok[:])
	s.tokenHash = sha256.Sum256([]byte(s.token))
	s.tokenBytes = []byte(s.token)
	s.deps = o.Dependencies
	if s.deps == nil {
		s.deps = &resolveDeps{s: s}
	}
	return s, nil
}

// Token is the run's bearer token. Hand it to the sandbox through the
// environment only (never argv, never a log).
func (s *Service) Token() string { return s.token }

// TraceID is the trace id audit entries carry.
func (s *Service) TraceID() string { return s.o.TraceID }

// Used is how many runtime fetches have taken a budget slot.
func (s *Service) Used() int { return int(s.used.Load()) }

// Max is the run's budget (max_runtime_fetches).
func (s *Service) Max() int { return int(s.max) }

// Attach names the sandbox fetched skills are uploaded into and the skill
// names already present there (the run's static skills), which a fetched
// skill may not replace. Requests before Attach are answered 503 and use
// no budget.
func (s *Service) Attach(u Uploader, reserved []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.up = u
	for _, n := range reserved {
		s.reserved[n] = true
	}
}

// authorized compares the bearer token in constant time (over hashes, so
// not even its length leaks).
func (s *Service) authorized(r *http.Request) bool {
	v := r.Header.Values("Authorization")
	if len(v) != 1 {
		return false
	}
	tok, ok := strings.CutPrefix(v[0], "Bearer ")
	if !ok {
		return false
	}
	h := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(h[:], s.tokenHash[:]) == 1
}

// ServeHTTP implements the protocol: the token is checked before anything
// else (a request without it reads no body, takes no budget, fetches and
// audits nothing).
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="fullsend-fetch"`)
		s.logf("runtime fetch: refused a request without a valid bearer token")
		writeError(w, newErr(http.StatusUnauthorized, CodeUnauthorized, nil, "missing or invalid bearer token"))
		return
	}
	if r.URL.Path != Path {
		writeError(w, newErr(http.StatusNotFound, CodeNotFound, nil, "no such endpoint %q (use POST %s)", r.URL.Path, Path))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, newErr(http.StatusMethodNotAllowed, CodeMethod, nil, "method %s not allowed (use POST %s)", r.Method, Path))
		return
	}
	req, err := decodeRequest(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.o.RequestTimeout)
	defer cancel()
	res, ferr := s.fetch(ctx, req.URL)
	if ferr != nil {
		s.logf("runtime fetch %s: refused (%s): %s", ref.Redact(req.URL), ferr.Code, ferr.Message)
		writeError(w, ferr)
		return
	}
	how := "fetched"
	if res.CacheHit {
		how = "cache hit"
	}
	s.logf("runtime fetch %s: %s, placed at %s (%d dependencies; %d of %d fetches used)", res.URL, how, res.Path, len(res.Dependencies), s.Used(), s.max)
	writeJSON(w, http.StatusOK, res)
}

// decodeRequest reads the body (at most MaxRequestBytes) and decodes it as
// exactly one {"url": "…"} object: unknown fields and trailing data are
// refused.
func decodeRequest(w http.ResponseWriter, r *http.Request) (Request, *Error) {
	var req Request
	bad := func(err error) (Request, *Error) {
		return req, newErr(http.StatusBadRequest, CodeBadRequest, err, "request body: want {\"url\": \"https://…#sha256=…\"}: %v", err)
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return bad(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return bad(err)
		}
		return req, newErr(http.StatusBadRequest, CodeBadRequest, nil, "request body: trailing data after the JSON object")
	}
	if req.URL == "" {
		return req, newErr(http.StatusBadRequest, CodeBadRequest, nil, "request body: url is required")
	}
	return req, nil
}

// Response headers, shared (net/http only reads them).
var (
	hdrJSON    = []string{"application/json"}
	hdrNoStore = []string{"no-store"}
)

// writeJSON sends v as the JSON body (json.Encoder: one value and a
// newline).
func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h["Content-Type"] = hdrJSON
	h["Cache-Control"] = hdrNoStore
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, e *Error) {
	writeJSON(w, e.Status, errorBody(e))
}

func errorBody(e *Error) ErrorBody {
	var body ErrorBody
	body.Error.Code, body.Error.Message = e.Code, e.Message
	return body
}

// logf writes one line to the run's fetch log: never the token, at most
// maxLogLine bytes of message (requests are agent-controlled), no line
// breaks.
func (s *Service) logf(format string, args ...any) {
	if s.o.Log == nil {
		return
	}
	line := fmt.Appendf(nil, format, args...)
	if bytes.Contains(line, s.tokenBytes) { // defence in depth
		line = bytes.ReplaceAll(line, s.tokenBytes, []byte("[token]"))
	}
	if len(line) > maxLogLine {
		line = append(line[:maxLogLine], "…"...)
	}
	for i, c := range line {
		if c == '\n' {
			line[i] = ' '
		}
	}
	b := make([]byte, 0, len("fullsend: ")+len(line)+1)
	b = append(append(append(b, "fullsend: "...), line...), '\n')
	s.logMu.Lock()
	s.o.Log.Write(b)
	s.logMu.Unlock()
}

// reserve takes one budget slot, atomically: under any number of
// concurrent requests exactly max succeed.
func (s *Service) reserve() bool {
	for {
		n := s.used.Load()
		if n >= s.max {
			return false
		}
		if s.afterBudgetCheck != nil {
			s.afterBudgetCheck()
		}
		if s.used.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// check applies the static rules to a requested URL, in the order of
// package resolve: https URL, pin, allowlist prefix (on the canonical URL),
// forge tree URL.
func (s *Service) check(raw string) (ref.Ref, forge.Location, int, *Error) {
	k, err := ref.Classify(raw)
	if err != nil {
		return ref.Ref{}, forge.Location{}, 0, newErr(http.StatusBadRequest, CodeBadURL, err, "%v", err)
	}
	if k != ref.URL {
		return ref.Ref{}, forge.Location{}, 0, newErr(http.StatusBadRequest, CodeBadURL, nil, "%q: a runtime fetch needs an https URL", raw)
	}
	rf, err := ref.Parse(raw)
	if err != nil {
		return ref.Ref{}, forge.Location{}, 0, newErr(http.StatusBadRequest, CodeBadURL, err, "%v", err)
	}
	if err := rf.RequireDigest(); err != nil {
		return rf, forge.Location{}, 0, newErr(http.StatusForbidden, CodeMissingHash, err, "%s: a runtime fetch needs the skill's tree hash (append #sha256=<64 hex>)", rf.URL)
	}
	idx, ok := ref.MatchCanonical(rf.URL, s.allow) // both canonical: rf by Parse, s.allow in New
	if !ok {
		return rf, forge.Location{}, 0, newErr(http.StatusForbidden, CodeNotAllowed, ref.ErrNotAllowed,
			"%s: %v (allowed_remote_resources: %s)", rf.URL, ref.ErrNotAllowed, strings.Join(s.allow, ", "))
	}
	loc, err := forge.ParseCanonical(rf.URL, s.cfg.Forges) // rf.URL is canonical (ref.Parse)
	if errors.Is(err, forge.ErrNotForge) {
		return rf, loc, idx, newErr(http.StatusForbidden, CodeNotForge, err,
			"%s: not a forge URL: skills are directories and can only be fetched from a configured forge (a GitHub or GitLab tree URL, or forges: in config.yaml); plain HTTPS has no directory listing", rf.URL)
	}
	if err != nil {
		return rf, loc, idx, newErr(http.StatusBadRequest, CodeBadURL, err, "%v", err)
	}
	if loc.Kind != forge.Tree {
		return rf, loc, idx, newErr(http.StatusBadRequest, CodeNotDirectory, nil, "%s: a %s URL names a file; a skill is a directory: use its tree URL", rf.URL, loc.Kind)
	}
	return rf, loc, idx, nil
}

// item is one skill directory to place in the sandbox.
type item struct {
	name, url, dir string
	digest         ref.Digest
}

func (s *Service) fetch(ctx context.Context, raw string) (*Response, *Error) {
	if s.closing.Load() {
		return nil, newErr(http.StatusServiceUnavailable, CodeShuttingDown, nil, "the run is ending; no more runtime fetches")
	}
	rf, loc, idx, e := s.check(raw)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	up := s.up
	s.mu.Unlock()
	if up == nil {
		return nil, newErr(http.StatusServiceUnavailable, CodeNotReady, nil, "%s: the sandbox is not ready yet", rf.URL)
	}
	if !s.reserve() {
		return nil, newErr(http.StatusTooManyRequests, CodeBudget, nil,
			"%s: max_runtime_fetches (%d) reached for this run", rf.URL, s.max)
	}
	f, err := s.obtain(ctx, rf, loc)
	if err != nil {
		return nil, classify(rf.URL, err)
	}
	entry, hit := f.entry, f.hit
	if err := s.o.Audit.Append(audit.Entry{
		TraceID: s.o.TraceID, FetchTime: s.o.Now().UTC(), URL: rf.URL, SHA256: string(rf.Digest),
		FetchType: FetchType, AllowedBy: s.allowedBy[idx], CacheHit: hit,
	}); err != nil {
		return nil, newErr(http.StatusInternalServerError, CodeInternal, err, "%s: audit log: %v (not delivered)", rf.URL, err)
	}
	fm, e := s.skillMeta(rf.URL, rf.Digest, entry.TreePath, f.skillMD)
	if e != nil {
		return nil, e
	}
	top := item{url: rf.URL, dir: entry.TreePath, digest: rf.Digest, name: skillName(fm.name, path.Base("/"+loc.Path), loc.Repo)}
	if err := runtime.CheckName("skill", top.name); err != nil {
		return nil, newErr(http.StatusUnprocessableEntity, CodeBadSkill, err, "%s: %v", rf.URL, err)
	}
	items := []item{top}
	if fm.hasDeps {
		deps, err := s.deps.ResolveDependencies(ctx, SkillRef{URL: rf.URL, Digest: rf.Digest, Dir: entry.TreePath})
		if err != nil {
			return nil, classify("dependencies", err)
		}
		for _, d := range deps {
			dfm, e := s.skillMeta(d.URL, d.Digest, d.Dir, nil)
			if e != nil {
				return nil, e
			}
			it := item{url: d.URL, dir: d.Dir, digest: d.Digest, name: skillName(dfm.name, path.Base(d.URL), "")}
			if err := runtime.CheckName("skill", it.name); err != nil {
				return nil, newErr(http.StatusUnprocessableEntity, CodeBadSkill, err, "%s: dependency %s: %v", rf.URL, d.URL, err)
			}
			items = append(items, it)
		}
	}
	if e := s.place(ctx, up, items); e != nil {
		return nil, e
	}
	res := &Response{Path: path.Join(s.skillsDir, top.name), Name: top.name, URL: rf.URL, SHA256: string(rf.Digest),
		CacheHit: hit, Remaining: max(0, int(s.max-s.used.Load()))}
	for _, it := range items[1:] {
		res.Dependencies = append(res.Dependencies, Placed{Name: it.name, Path: path.Join(s.skillsDir, it.name), URL: it.url, SHA256: string(it.digest)})
	}
	return res, nil
}

// network returns the fetchers, building them once.
func (s *Service) network() (*resolve.Network, error) {
	s.netOnce.Do(func() {
		if s.o.Network != nil {
			s.net, s.netErr = s.o.Network()
			return
		}
		s.net = resolve.NewNetwork(s.cfg, s.o.Getenv, nil)
	})
	return s.net, s.netErr
}

// obtain returns the verified cache entry of the pinned tree: from the
// cache (cas re-verifies every read), else fetched through the forge
// client, checked against the pin, scanned with the remote policy and
// cached. Concurrent requests for one hash share one acquisition.
// The returned flight is done and read-only; a request that joined
// another's acquisition reports a cache hit.
func (s *Service) obtain(ctx context.Context, rf ref.Ref, loc forge.Location) (*flight, error) {
	s.mu.Lock()
	if f, ok := s.flights[rf.Digest]; ok {
		s.mu.Unlock()
		select {
		case <-f.done:
			if f.err != nil {
				return nil, f.err
			}
			return &flight{entry: f.entry, hit: true, skillMD: f.skillMD}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &flight{done: make(chan struct{})}
	s.flights[rf.Digest] = f
	s.mu.Unlock()
	f.entry, f.hit, f.skillMD, f.err = s.acquire(ctx, rf, loc)
	s.mu.Lock()
	delete(s.flights, rf.Digest)
	s.mu.Unlock()
	close(f.done)
	if f.err != nil {
		return nil, f.err
	}
	return f, nil
}

// get is Store.Get, with the tree's SKILL.md as verified by the same read
// when the store can return it (*cas.Store can).
func (s *Service) get(d ref.Digest) (cas.Entry, []byte, error) {
	if g, ok := s.o.Store.(treeFileGetter); ok {
		e, files, err := g.GetTreeFiles(d, "SKILL.md")
		return e, files["SKILL.md"], err
	}
	e, err := s.o.Store.Get(d)
	return e, nil, err
}

func (s *Service) acquire(ctx context.Context, rf ref.Ref, loc forge.Location) (cas.Entry, bool, []byte, error) {
	e, skillMD, err := s.get(rf.Digest)
	switch {
	case err == nil:
		if e.Meta.Type != cas.TypeDirectory {
			return cas.Entry{}, false, nil, newErr(http.StatusUnprocessableEntity, CodeBadSkill, resolve.ErrWrongType,
				"%s: sha256 %s is cached as a %s, not a skill directory", rf.URL, rf.Digest, e.Meta.Type)
		}
		// The cache answers only for a URL a fetch confirmed; offline it
		// is all there is (the resolver's warning covers the harness's).
		if s.o.Offline || resolve.StillConfirmed(e.Meta, rf.URL, &loc, s.o.Now()) {
			return e, true, skillMD, nil
		}
	case errors.Is(err, cas.ErrNotFound), errors.Is(err, cas.ErrCorrupt):
	default:
		return cas.Entry{}, false, nil, fmt.Errorf("cache: %w", err)
	}
	if s.o.Offline {
		return cas.Entry{}, false, nil, newErr(http.StatusServiceUnavailable, CodeOffline, resolve.ErrOffline, "%s: %v", rf.URL, resolve.ErrOffline)
	}
	n, err := s.network()
	if err != nil {
		return cas.Entry{}, false, nil, newErr(http.StatusInternalServerError, CodeInternal, err, "%s: network: %v", rf.URL, err)
	}
	files, err := n.Forge.FetchTree(ctx, loc)
	if err != nil {
		return cas.Entry{}, false, nil, err
	}
	got, err := cas.TreeHash(files)
	if err != nil {
		return cas.Entry{}, false, nil, err
	}
	if got != rf.Digest {
		return cas.Entry{}, false, nil, newErr(http.StatusUnprocessableEntity, CodeHashMismatch, nil,
			"%s: tree hash %s does not match the pinned %s", rf.URL, got, rf.Digest)
	}
	res, err := s.o.Scanner.ScanFiles(ctx, files, scan.Meta{Path: rf.URL, Origin: scan.Remote, Kind: "skill"})
	if err != nil {
		return cas.Entry{}, false, nil, newErr(http.StatusInternalServerError, CodeInternal, err, "%s: scanning: %v", rf.URL, err)
	}
	if err := res.Err(); err != nil {
		return cas.Entry{}, false, nil, newErr(http.StatusUnprocessableEntity, CodeScanBlocked, err, "%s: %v", rf.URL, err)
	}
	for _, n := range res.Notices {
		s.logf("runtime fetch %s: scan: %s", rf.URL, n)
	}
	now := s.o.Now().UTC()
	e, err = s.o.Store.PutTree(rf.Digest, cas.Metadata{URL: rf.URL, FetchTime: now, ConfirmedURLs: []cas.Confirmation{{URL: rf.URL, Time: now}}}, files)
	if err != nil {
		return cas.Entry{}, false, nil, err
	}
	if at, ok := e.Meta.Confirmed(rf.URL); !ok || at.Before(now) {
		// An entry that was already there: record that rf.URL serves it.
		if c, ok := s.o.Store.(interface {
			Confirm(ref.Digest, string, time.Time) (cas.Entry, error)
		}); ok {
			if ce, err := c.Confirm(rf.Digest, rf.URL, now); err == nil {
				e = ce
			}
		}
	}
	// files hashes to the pin (checked above): its SKILL.md is verified.
	return e, false, files["SKILL.md"], nil
}

// skillMeta is what placement needs from a SKILL.md.
type skillMeta struct {
	name    string
	hasDeps bool
}

// skillMeta reads the SKILL.md of the verified tree d at dir, once per run
// (a tree hash names immutable content). data, when not nil, is that
// SKILL.md as verified with the tree, and is used instead of reading dir.
func (s *Service) skillMeta(u string, d ref.Digest, dir string, data []byte) (skillMeta, *Error) {
	s.mu.Lock()
	m, ok := s.skills[d]
	s.mu.Unlock()
	if ok {
		return m, nil
	}
	var fm *frontmatter.Frontmatter
	var e *Error
	if data != nil {
		fm, e = parseSkill(u, data)
	} else {
		fm, e = readSkill(u, dir)
	}
	if e != nil {
		return skillMeta{}, e
	}
	m = skillMeta{name: fm.Name, hasDeps: len(fm.Dependencies) > 0}
	s.mu.Lock()
	s.skills[d] = m
	s.mu.Unlock()
	return m, nil
}

// readSkill reads the frontmatter of a skill directory's SKILL.md.
func readSkill(u, dir string) (*frontmatter.Frontmatter, *Error) {
	f, err := os.Open(filepath.Join(dir, "SKILL.md"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, newErr(http.StatusUnprocessableEntity, CodeBadSkill, err, "%s: not a skill: the directory has no SKILL.md", u)
	}
	if err != nil {
		return nil, newErr(http.StatusInternalServerError, CodeInternal, err, "%s: reading SKILL.md: %v", u, err)
	}
	defer f.Close()
	data, err := limit.ReadAll(f, MaxSkillMDBytes)
	if tl := (*limit.TooLargeError)(nil); errors.As(err, &tl) {
		return nil, newErr(http.StatusUnprocessableEntity, CodeBadSkill, nil, "%s: SKILL.md is larger than %d bytes", u, MaxSkillMDBytes)
	}
	if err != nil {
		return nil, newErr(http.StatusInternalServerError, CodeInternal, err, "%s: reading SKILL.md: %v", u, err)
	}
	return parseSkill(u, data)
}

// parseSkill parses the frontmatter of a skill's SKILL.md.
func parseSkill(u string, data []byte) (*frontmatter.Frontmatter, *Error) {
	if len(data) > MaxSkillMDBytes {
		return nil, newErr(http.StatusUnprocessableEntity, CodeBadSkill, nil, "%s: SKILL.md is larger than %d bytes", u, MaxSkillMDBytes)
	}
	fm, err := frontmatter.Parse(u+"/SKILL.md", data)
	if err != nil {
		return nil, newErr(http.StatusUnprocessableEntity, CodeBadSkill, err, "%v", err)
	}
	return fm, nil
}

// skillName is the SKILL.md frontmatter name when it is a valid name, else
// the directory's basename (else fallback), as the run names its skills.
func skillName(name, base, fallback string) string {
	if name != "" && runtime.CheckName("skill", name) == nil {
		return name
	}
	if base == "" || base == "/" || base == "." {
		return fallback
	}
	return base
}

// place uploads items under SkillsDir/NAME. A name belongs to the first
// tree placed under it for the rest of the run: the same tree is uploaded
// again, so that after every successful request the directory holds
// exactly the pinned tree, whatever the agent did to it since (concurrent
// requests share an upload that began after they arrived); another tree
// under a taken name — or a name of the run's static skills — is a
// conflict, never an overwrite. All names are claimed before any upload;
// uploads to one name are serialised.
func (s *Service) place(ctx context.Context, up Uploader, items []item) *Error {
	slots := make([]*slot, len(items))
	var fresh []string
	s.mu.Lock()
	for i, it := range items {
		var e *Error
		if s.reserved[it.name] {
			e = newErr(http.StatusConflict, CodeConflict, nil, "%s: a skill named %q is already in the sandbox at %s (from the harness)", it.url, it.name, path.Join(s.skillsDir, it.name))
		} else if sl, ok := s.names[it.name]; ok && sl.digest != it.digest {
			e = newErr(http.StatusConflict, CodeConflict, nil, "%s: a different skill named %q was already fetched in this run (%s)", it.url, it.name, sl.url)
		} else if ok {
			slots[i] = sl
			continue
		}
		if e != nil {
			for _, n := range fresh {
				delete(s.names, n)
			}
			s.mu.Unlock()
			return e
		}
		slots[i] = &slot{digest: it.digest, url: it.url}
		s.names[it.name] = slots[i]
		fresh = append(fresh, it.name)
	}
	s.mu.Unlock()
	arrived := make([]uint64, len(slots))
	for i, sl := range slots {
		arrived[i] = sl.begun.Load()
	}
	for i, it := range items {
		sl := slots[i]
		dst := path.Join(s.skillsDir, it.name)
		sl.mu.Lock()
		if sl.lastOK > arrived[i] {
			// An upload that began after this request arrived succeeded.
			sl.mu.Unlock()
			continue
		}
		n := sl.begun.Add(1)
		err := up.Upload(ctx, it.dir, dst)
		if err == nil {
			sl.lastOK = n
		}
		sl.mu.Unlock()
		if err != nil {
			return newErr(http.StatusInternalServerError, CodeInternal, err, "%s: uploading skill %q to %s: %v", it.url, it.name, dst, err)
		}
	}
	return nil
}
