package forgetest

import (
	"crypto/sha1"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/fetch/fetchtest"
)

// Repos maps "owner/repo@ref" (GitLab: "group/sub/project@ref") to the
// files of that ref, path -> content.
type Repos map[string]map[string][]byte

// Request is one request the server received.
type Request struct {
	Method        string
	Host          string // as sent, with port
	Path          string // escaped path
	RawQuery      string
	Accept        string
	Authorization string
	PrivateToken  string
	Time          time.Time
}

// Token returns the credential the request carried (the Bearer value or
// PRIVATE-TOKEN), or "".
func (r Request) Token() string {
	if r.PrivateToken != "" {
		return r.PrivateToken
	}
	if v, ok := strings.CutPrefix(r.Authorization, "Bearer "); ok {
		return v
	}
	return r.Authorization
}

// Fault makes the server misbehave on matching requests.
type Fault struct {
	// Path is a substring of the escaped request path; "" matches every
	// request.
	Path string
	// Times is how many matching requests get the fault; 0 means all.
	Times int
	// Status, Header and Body form the answer (e.g. 302 with a Location,
	// 429 with Retry-After, 503).
	Status int
	Header http.Header
	Body   string
	// Oversize, when > 0, answers 200 with that many bytes instead.
	Oversize int64
	// Stall answers 200, sends a few bytes and hangs until the client
	// gives up or the test ends.
	Stall bool
}

type fault struct {
	Fault
	left int // remaining; -1 = unlimited
}

type entry struct {
	path, typ, mode, sha string // typ: blob, tree, commit
	size                 int64
}

type snapshot struct {
	commit  string
	entries map[string]*entry
}

type settings struct {
	host, tokenEnv string
	enterprise     bool
}

// Option configures a server at creation.
type Option func(*settings)

// WithHost sets the web host name (no port) instead of github.test,
// ghe.test or gitlab.test.
func WithHost(host string) Option { return func(s *settings) { s.host = host } }

// WithTokenEnv sets the forge's token_env (default FORGETEST_GITHUB_TOKEN
// or FORGETEST_GITLAB_TOKEN).
func WithTokenEnv(name string) Option { return func(s *settings) { s.tokenEnv = name } }

// Enterprise makes a GitHub server look like GitHub Enterprise Server: API
// under https://HOST/api/v3 on the web host, raw files on raw.HOST.
func Enterprise() Option { return func(s *settings) { s.enterprise = true } }

// Server is a fake forge. Its methods are safe for concurrent use.
type Server struct {
	t         testing.TB
	typ       string
	srv       *httptest.Server
	port      string
	webHost   string // host names, no port
	apiHost   string
	rawHost   string
	apiPrefix string
	tokenEnv  string
	resolver  *fetchtest.Resolver
	done      chan struct{}

	fetchtest.RequestLog[Request] // SetLatency, Requests, RequestCount, ResetRequests
	truncated                     atomic.Bool
	blobJSON                      atomic.Bool
	pageSize                      atomic.Int64
	token                         atomic.Pointer[string]

	mu       sync.Mutex
	repos    map[string]map[string]*snapshot // "owner/repo" -> ref or commit -> snapshot
	blobs    map[string][]byte
	tampered map[string][]byte
	faults   []*fault
}

// NewGitHub starts a fake GitHub serving repos (nil for none yet).
func NewGitHub(t testing.TB, repos Repos, opts ...Option) *Server {
	t.Helper()
	st := settings{host: "github.test", tokenEnv: "FORGETEST_GITHUB_TOKEN"}
	for _, o := range opts {
		o(&st)
	}
	if st.enterprise && st.host == "github.test" {
		st.host = "ghe.test"
	}
	s := &Server{typ: "github", webHost: st.host, tokenEnv: st.tokenEnv, rawHost: "raw." + st.host}
	if st.enterprise {
		s.apiHost, s.apiPrefix = st.host, "/api/v3"
	} else {
		s.apiHost = "api." + st.host
	}
	s.start(t, repos)
	return s
}

// NewGitLab starts a fake GitLab serving repos (nil for none yet).
func NewGitLab(t testing.TB, repos Repos, opts ...Option) *Server {
	t.Helper()
	st := settings{host: "gitlab.test", tokenEnv: "FORGETEST_GITLAB_TOKEN"}
	for _, o := range opts {
		o(&st)
	}
	s := &Server{typ: "gitlab", webHost: st.host, apiHost: st.host, apiPrefix: "/api/v4", tokenEnv: st.tokenEnv}
	s.start(t, repos)
	return s
}

func (s *Server) start(t testing.TB, repos Repos) {
	t.Helper()
	s.t = t
	s.done = make(chan struct{})
	s.repos = map[string]map[string]*snapshot{}
	s.blobs = map[string][]byte{}
	s.tampered = map[string][]byte{}
	s.resolver = fetchtest.NewResolver()
	names := s.Hosts()
	for _, h := range names {
		s.resolver.Set(h, fetchtest.LoopbackAddr)
	}
	s.srv = fetchtest.NewServer(t, http.HandlerFunc(s.serve), names...)
	t.Cleanup(func() {
		close(s.done)
		s.srv.Close()
	})
	_, s.port, _ = net.SplitHostPort(s.srv.Listener.Addr().String())
	keys := make([]string, 0, len(repos))
	for k := range repos {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s.AddRepo(k, repos[k])
	}
}

// Hosts returns the host names (without port) the server answers for.
func (s *Server) Hosts() []string {
	out := []string{s.webHost}
	for _, h := range []string{s.apiHost, s.rawHost} {
		if h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// Forge is the config.Forge entry for this server.
func (s *Server) Forge() config.Forge {
	return config.Forge{Host: s.webHost + ":" + s.port, Type: s.typ, APIURL: "https://" + s.apiHost + ":" + s.port + s.apiPrefix, TokenEnv: s.tokenEnv}
}

// APIHost is the API host with port, where tokens may go.
func (s *Server) APIHost() string { return s.apiHost + ":" + s.port }

// RawHost is the raw-file host with port ("" for GitLab).
func (s *Server) RawHost() string {
	if s.rawHost == "" {
		return ""
	}
	return s.rawHost + ":" + s.port
}

// WebHost is the web host with port, as it appears in tree and blob URLs.
func (s *Server) WebHost() string { return s.webHost + ":" + s.port }

// CertPool trusts the server's certificate.
func (s *Server) CertPool() *x509.CertPool { return fetchtest.CertPool() }

// Resolver maps the server's host names to 127.0.0.1 and counts lookups.
func (s *Server) Resolver() *fetchtest.Resolver { return s.resolver }

// Getenv returns a getenv that yields token for the forge's token_env.
func (s *Server) Getenv(token string) func(string) string {
	return func(k string) string {
		if k == s.tokenEnv {
			return token
		}
		return ""
	}
}

// Options returns fetch options reaching every server given: their host
// names allowed, loopback allowed as a private network, the test CA and a
// resolver knowing all their names.
func Options(servers ...*Server) fetch.Options {
	r := fetchtest.NewResolver()
	var domains []string
	for _, s := range servers {
		for _, h := range s.Hosts() {
			r.Set(h, fetchtest.LoopbackAddr)
			domains = append(domains, h)
		}
	}
	return fetch.Options{
		AllowedDomains:         domains,
		AllowedPrivateNetworks: []netip.Prefix{fetchtest.Loopback},
		Resolver:               r,
		RootCAs:                fetchtest.CertPool(),
		Timeout:                10 * time.Second,
	}
}

// FetchOptions is Options(s) with the server's own resolver, so its
// lookup counts are visible through Resolver.
func (s *Server) FetchOptions() fetch.Options {
	o := Options(s)
	o.Resolver = s.resolver
	return o
}

// OrgConfig returns the default org config reaching s as a user would write
// it: s as its only forge, s's host names in allowed_domains, loopback in
// allowed_private_networks, and allowed as allowed_remote_resources. What a
// config cannot say (the fake resolver, the test CA) is Reach.
func (s *Server) OrgConfig(allowed ...string) *config.Config {
	cfg := config.Default()
	cfg.AllowedRemoteResources = allowed
	cfg.Forges = []config.Forge{s.Forge()}
	fo := s.FetchOptions()
	cfg.Security.RemoteResources.AllowedDomains = fo.AllowedDomains
	cfg.Security.RemoteResources.AllowedPrivateNetworks = fo.AllowedPrivateNetworks
	return cfg
}

// Reach sets s's resolver and the test CA on o, for fetch clients built
// from OrgConfig (the option function of resolve.NewNetwork).
func (s *Server) Reach(o *fetch.Options) {
	o.Resolver, o.RootCAs = s.resolver, fetchtest.CertPool()
}

// TreeURL is the web URL of a directory of key ("owner/repo@ref").
func (s *Server) TreeURL(key, path string) string { return s.webURL(key, "tree", path) }

// BlobURL is the web URL of a file of key.
func (s *Server) BlobURL(key, path string) string { return s.webURL(key, "blob", path) }

// RawURL is the raw URL of a file of key (GitHub: raw host; GitLab: /-/raw/).
func (s *Server) RawURL(key, path string) string {
	if s.typ == "gitlab" {
		return s.webURL(key, "raw", path)
	}
	repo, ref := splitKey(key)
	return "https://" + s.RawHost() + "/" + repo + "/" + ref + "/" + path
}

func (s *Server) webURL(key, kind, path string) string {
	repo, ref := splitKey(key)
	u := "https://" + s.WebHost() + "/" + repo
	if s.typ == "gitlab" {
		u += "/-"
	}
	u += "/" + kind + "/" + ref
	if path != "" {
		u += "/" + path
	}
	return u
}

func splitKey(key string) (repo, ref string) {
	i := strings.LastIndexByte(key, '@')
	if i < 0 {
		return key, "main"
	}
	return key[:i], key[i+1:]
}

// GitBlobSHA1 is git's blob id of b.
func GitBlobSHA1(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// AddRepo adds (or replaces) the files of key ("owner/repo@ref") and
// returns the fake commit id under which the same snapshot is also served.
func (s *Server) AddRepo(key string, files map[string][]byte) string {
	repo, ref := splitKey(key)
	snap := &snapshot{entries: map[string]*entry{}}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha1.New()
	fmt.Fprintf(h, "commit %s\n", key)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range paths {
		b := append([]byte(nil), files[p]...)
		sha := GitBlobSHA1(b)
		s.blobs[sha] = b
		snap.add(&entry{path: p, typ: "blob", mode: "100644", sha: sha, size: int64(len(b))})
		fmt.Fprintf(h, "%s %s\n", p, sha)
	}
	snap.commit = hex.EncodeToString(h.Sum(nil))
	if s.repos[repo] == nil {
		s.repos[repo] = map[string]*snapshot{}
	}
	s.repos[repo][ref] = snap
	s.repos[repo][snap.commit] = snap
	return snap.commit
}

// add inserts e and its parent directories.
func (sn *snapshot) add(e *entry) {
	sn.entries[e.path] = e
	for d := e.path; ; {
		i := strings.LastIndexByte(d, '/')
		if i < 0 {
			return
		}
		d = d[:i]
		if _, ok := sn.entries[d]; ok {
			return
		}
		ds := sha1.Sum([]byte("tree " + d))
		sn.entries[d] = &entry{path: d, typ: "tree", mode: "040000", sha: hex.EncodeToString(ds[:])}
	}
}

// Commit returns the commit id of key, or "" if unknown.
func (s *Server) Commit(key string) string {
	repo, ref := splitKey(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if sn := s.repos[repo][ref]; sn != nil {
		return sn.commit
	}
	return ""
}

func (s *Server) snapshot(key string) *snapshot {
	repo, ref := splitKey(key)
	sn := s.repos[repo][ref]
	if sn == nil {
		s.t.Errorf("forgetest: unknown repository %q", key)
	}
	return sn
}

// AddSymlink adds a symbolic link (mode 120000) at path in key.
func (s *Server) AddSymlink(key, path, target string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sn := s.snapshot(key); sn != nil {
		sha := GitBlobSHA1([]byte(target))
		s.blobs[sha] = []byte(target)
		sn.add(&entry{path: path, typ: "blob", mode: "120000", sha: sha, size: int64(len(target))})
	}
}

// AddSubmodule adds a submodule (type commit, mode 160000) at path in key.
func (s *Server) AddSubmodule(key, path, commit string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sn := s.snapshot(key); sn != nil {
		sn.add(&entry{path: path, typ: "commit", mode: "160000", sha: commit})
	}
}

// Tamper makes the server answer content for the file at path of key,
// while listings keep its original blob id.
func (s *Server) Tamper(key, path string, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sn := s.snapshot(key); sn != nil {
		if e := sn.entries[path]; e != nil && e.typ == "blob" {
			s.tampered[e.sha] = append([]byte(nil), content...)
			return
		}
		s.t.Errorf("forgetest: Tamper: no file %q in %q", path, key)
	}
}

// Fail adds a fault; faults are tried in the order added.
func (s *Server) Fail(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	left := f.Times
	if left <= 0 {
		left = -1
	}
	s.faults = append(s.faults, &fault{Fault: f, left: left})
}

// ClearFaults removes every fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// SetTruncated makes recursive tree listings drop half their entries and
// say "truncated": true (GitHub).
func (s *Server) SetTruncated(on bool) { s.truncated.Store(on) }

// SetBlobsAsJSON makes blob answers the base64 JSON envelope even when the
// raw media type is asked for (GitHub).
func (s *Server) SetBlobsAsJSON(on bool) { s.blobJSON.Store(on) }

// SetPageSize caps GitLab tree pages at n entries (0 = GitLab's 100).
func (s *Server) SetPageSize(n int) { s.pageSize.Store(int64(n)) }

// RequireToken makes API requests without this token answer 404, as for a
// private repository ("" = no token needed).
func (s *Server) RequireToken(token string) { s.token.Store(&token) }

// CountRequests counts the logged requests whose escaped path contains
// sub.
func (s *Server) CountRequests(sub string) int {
	n := 0
	for _, r := range s.Requests() {
		if strings.Contains(r.Path, sub) {
			n++
		}
	}
	return n
}

// ---- request handling ----

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	host := strings.ToLower(fetchtest.StripPort(r.Host))
	req := Request{
		Method: r.Method, Host: r.Host, Path: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery,
		Accept: r.Header.Get("Accept"), Authorization: r.Header.Get("Authorization"),
		PrivateToken: r.Header.Get("PRIVATE-TOKEN"), Time: time.Now(),
	}
	latency := s.Record(req)
	s.mu.Lock()
	var fl *fault
	for _, f := range s.faults {
		if f.left != 0 && strings.Contains(req.Path, f.Path) {
			if f.left > 0 {
				f.left--
			}
			fl = f
			break
		}
	}
	s.mu.Unlock()

	if latency > 0 {
		t := time.NewTimer(latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		case <-s.done:
			t.Stop()
			return
		}
	}
	if r.Method != http.MethodGet {
		s.t.Errorf("forgetest: %s %s: only GET is expected", r.Method, req.Path)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if host != s.apiHost && req.Token() != "" {
		s.t.Errorf("forgetest: a token was sent to %s (only %s may receive it)", r.Host, s.APIHost())
		http.Error(w, "token sent to a non-API host", http.StatusBadRequest)
		return
	}
	if fl != nil {
		s.applyFault(w, r, fl.Fault)
		return
	}
	switch {
	case host == s.apiHost && strings.HasPrefix(req.Path, s.apiPrefix+"/"):
		if token := s.token.Load(); token != nil && *token != "" && req.Token() != *token {
			s.notFound(w)
			return
		}
		segs, err := splitPath(strings.TrimPrefix(req.Path, s.apiPrefix))
		if err != nil {
			s.t.Errorf("forgetest: bad API path %q: %v", req.Path, err)
			http.Error(w, "bad path", http.StatusBadRequest)
			return
		}
		if s.typ == "github" {
			s.serveGitHubAPI(w, r, segs)
		} else {
			s.serveGitLabAPI(w, r, segs)
		}
	case host == s.rawHost:
		s.serveRaw(w, r)
	default:
		http.Error(w, "404: Not Found", http.StatusNotFound)
	}
}

func (s *Server) applyFault(w http.ResponseWriter, r *http.Request, f Fault) {
	for k, vs := range f.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	switch {
	case f.Stall:
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("partial"))
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
	case f.Oversize > 0:
		w.Header().Set("Content-Type", "application/octet-stream")
		chunk := []byte(strings.Repeat("x", 32<<10))
		for left := f.Oversize; left > 0; left -= int64(len(chunk)) {
			if left < int64(len(chunk)) {
				chunk = chunk[:left]
			}
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	default:
		status := f.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		w.WriteHeader(status)
		w.Write([]byte(f.Body))
	}
}

func splitPath(p string) ([]string, error) {
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, s := range segs {
		d, err := url.PathUnescape(s)
		if err != nil {
			return nil, err
		}
		segs[i] = d
	}
	return segs, nil
}

func (s *Server) notFound(w http.ResponseWriter) {
	msg := `{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`
	if s.typ == "gitlab" {
		msg = `{"message":"404 Project Not Found"}`
	}
	writeJSONStatus(w, http.StatusNotFound, msg)
}

func writeJSONStatus(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write([]byte(body))
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(b)
}

// lookup finds the snapshot of repo at ref.
func (s *Server) lookup(repo, ref string) *snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repos[repo][ref]
}

// content returns what the server serves for a blob (tampered or not).
func (s *Server) content(sha string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.tampered[sha]; ok {
		return b, true
	}
	b, ok := s.blobs[sha]
	return b, ok
}

// sortedEntries lists the entries under dir ("" = root); recursive or
// direct children only.
func (sn *snapshot) sortedEntries(dir string, recursive bool) []*entry {
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	var out []*entry
	for p, e := range sn.entries {
		rel, ok := strings.CutPrefix(p, prefix)
		if !ok || rel == "" || (!recursive && strings.Contains(rel, "/")) {
			continue
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

func (s *Server) serveRaw(w http.ResponseWriter, r *http.Request) {
	segs, err := splitPath(r.URL.EscapedPath())
	if err != nil || len(segs) < 4 {
		http.Error(w, "404: Not Found", http.StatusNotFound)
		return
	}
	sn := s.lookup(segs[0]+"/"+segs[1], segs[2])
	if sn == nil {
		http.Error(w, "404: Not Found", http.StatusNotFound)
		return
	}
	e := sn.entries[strings.Join(segs[3:], "/")]
	if e == nil || e.typ != "blob" {
		http.Error(w, "404: Not Found", http.StatusNotFound)
		return
	}
	b, _ := s.content(e.sha)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write(b)
}

func intQuery(r *http.Request, k string, def int) int {
	if n, err := strconv.Atoi(r.URL.Query().Get(k)); err == nil {
		return n
	}
	return def
}
