package resolve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"golang.org/x/sync/errgroup"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/forge"
	"github.com/fullsend-ai/fullsend/internal/frontmatter"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/limit"
	"github.com/fullsend-ai/fullsend/internal/lock"
	"github.com/fullsend-ai/fullsend/internal/progress"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/trace"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// DefaultConcurrency bounds concurrent network fetches (nodes) when
// Options.Concurrency is zero. What reaches a forge at once is bounded
// by the forge client: forge.DefaultMaxInFlight requests for the whole
// resolution. Every node fetch has at least one request on the wire, so a
// node bound of the same size never holds a wave of requests below that
// bound (at 16, twenty three-file skills of one commit were fetched 48
// blobs first, the last 12 one round trip later); plain https files have
// no forge client and are bounded by this alone.
const DefaultConcurrency = forge.DefaultMaxInFlight

// Fetch types recorded in the audit log.
const (
	FetchStatic       = "static"
	FetchBaseResource = audit.FetchBaseResource
	FetchBaseSkill    = audit.FetchBaseSkill
	FetchBaseScript   = audit.FetchBaseScript
	FetchRuntime      = audit.FetchRuntime // ResolveSkill for package fetchsvc
)

// Options configures Resolve. Store is required; everything else has a
// safe default (no network, no audit, no progress, no prompt).
type Options struct {
	// Config is the org configuration (nil: config.Default()).
	Config *config.Config
	// Root is the fullsend dir a local harness's references resolve
	// against (default harness.FindRoot of the harness path); Layers are
	// further overlay dirs, least specific first.
	Root   string
	Layers []string
	// HarnessCheck is harness.LoadOptions.Check for a local harness (the
	// trust rule of a repository layer); nil: none.
	HarnessCheck func(*harness.Harness) error
	// Forge applies that forge overlay; "" resolves every overlay's
	// references as well (fields "forge.NAME.…"). With ForgeOptional it
	// is applied only when the harness has it (harness.LoadOptions).
	Forge         string
	ForgeOptional bool
	// Store is the cache.
	Store Store
	// Network builds the fetchers on the first cache miss (called at most
	// once). With Offline it is never called.
	Network func() (*Network, error)
	// Offline forbids the network: a cache miss is an error naming the URL.
	Offline bool
	// Scanner scans remote content before it is cached. Required when
	// anything is fetched (ErrNoScanner otherwise).
	Scanner Scanner
	// Audit receives one entry per fetch and cache hit (nil: none).
	Audit Auditor
	// Progress receives one line per fetch (nil: silent).
	Progress io.Writer
	// Events receives the resolution's progress events (nil: none): a
	// ResourceAdded per node of the graph, a ResourceDone when it is
	// materialised (CacheHit for the cache), and a FetchStart and a
	// FetchEnd around each network fetch.
	Events progress.Sink
	// Lock holds pinned entries to check the resolution against (nil:
	// none). Frozen turns a stale or missing entry into an error.
	Lock   *lock.File
	Frozen bool
	// LockCommand, when set, is the command the lock messages suggest to
	// write (update false) or refresh (true) this harness's entry, spelled
	// so it works from where the user stands; nil = "fullsend lock
	// [--update] <Source>".
	LockCommand func(update bool) string
	// Yes confirms an untrusted top-level harness URL; otherwise Confirm
	// is asked (nil: fail).
	Yes     bool
	Confirm func(prompt string) (bool, error)
	// ResolveCommits resolves every forge URL naming a branch or tag to
	// the commit it names now, checks that commit serves the pin and sets
	// Node.Commit (`fullsend lock`; commits.go). Online only.
	ResolveCommits bool
	// Concurrency bounds concurrent fetches (default DefaultConcurrency).
	// Registry lookups have their own bound (RegistryConcurrency).
	Concurrency int
	// TraceID tags audit entries (default: random).
	TraceID string
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Result is a resolved harness.
type Result struct {
	// Harness is the loaded harness with every reference replaced by a
	// local path: cache paths for remote resources, resolved paths for
	// local ones (${VAR} host files and missing optional ones as written).
	Harness *harness.Materialized
	// Loaded is the harness as loaded (references as written).
	Loaded *harness.Harness
	// Graph is the dependency graph.
	Graph *Graph
	// Source identifies the harness in lock files: its path relative to
	// the fullsend dir (or absolute), or its pinned URL.
	Source string
	// SHA256 is the hash of the harness file itself.
	SHA256 ref.Digest
	// Root is the fullsend dir of a local harness ("" for a URL).
	Root string
	// Remote is true for a harness given as a URL.
	Remote  bool
	TraceID string
	// Warnings are stale-lock warnings (errors with Frozen), then the
	// registry tier's: refused registry content, an unreachable registry,
	// failed pushes (never errors: the forge was used instead).
	Warnings []string
	// Notices are harness and scanner notices.
	Notices []string
	// MovableRefs are the remote URLs naming a forge branch or tag rather
	// than a commit id, sorted (commits.go).
	MovableRefs []string
	// Anomalies are the remote resources that differ from the lock
	// entry of the harness: a new host, a new repository prefix, a
	// changed pin (anomaly.go). Each is audited and is one line of
	// Warnings; with Frozen the first is the error.
	Anomalies []Anomaly
}

// SkillDir is a skill directory of a result.
type SkillDir struct {
	Name string // basename of the reference
	Path string // local directory
	Node *Node
}

// Skills lists every skill directory of the graph (harness skills, agent
// skills and transitive dependencies), in graph order, one per name (the
// first wins).
func (r *Result) Skills() []SkillDir {
	var out []SkillDir
	seen := map[string]bool{}
	for _, n := range r.Graph.Nodes {
		if n.Kind != "skill" || n.Type != cas.TypeDirectory {
			continue
		}
		name := harness.SkillName(n.ID())
		if seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, SkillDir{Name: name, Path: n.LocalPath, Node: n})
	}
	return out
}

type resolver struct {
	o        Options
	cfg      *config.Config
	traceID  string
	sem      chan struct{}
	maxDepth int
	maxRes   int

	h     *harness.Harness
	allow []string

	netOnce sync.Once
	net     *Network
	netErr  error

	progressMu sync.Mutex

	mu         sync.Mutex
	nodes      map[string]*Node
	count      int
	flights    map[ref.Digest]*flight
	auditErr   error
	notices    []string
	noticeSeen map[string]bool
	// URL→pin pairs confirmed by a fetch in this resolution (key URL NUL
	// hash), and URLs used from the cache unconfirmed (vouch.go).
	confirmed  map[string]bool
	unverified map[string]bool
	movable    []string // URLs at a branch or tag (commits.go)

	// registry tier (registry.go)
	ctx          context.Context // the caller's: background pushes use it
	regSem       chan struct{}
	pushSem      chan struct{}
	pushWG       sync.WaitGroup
	warnings     []string
	warnedKinds  map[string]bool
	prefetches   map[ref.Digest]*prefetch
	prefetchCtx  context.Context
	stopPrefetch context.CancelFunc
	prefetchWG   sync.WaitGroup

	// remote bases met while loading
	bases    map[string]*Node
	baseRefs map[string]bool
	// vendored copies standing in for a remote base's scripts, by path
	// (vendorBaseScripts)
	baseScripts map[string]lock.Vendored
}

func (r *resolver) now() time.Time { return r.o.Now() }

// Resolve resolves the harness at target (a local path or a pinned https
// URL) and its whole dependency graph. See the package documentation for
// the rules; the first error stops everything and is returned (an *Error
// carrying the chain of references when it concerns a dependency).
func Resolve(ctx context.Context, target string, o Options) (*Result, error) {
	ctx, span := trace.Start(ctx, "resolve", attribute.String("fullsend.resolve.target", target))
	res, err := resolveHarness(ctx, target, o)
	endResolve(span, res, err)
	return res, err
}

func resolveHarness(ctx context.Context, target string, o Options) (*Result, error) {
	r, err := newResolver(o)
	if err != nil {
		return nil, err
	}
	r.start(ctx)
	k, err := ref.Classify(target)
	if err != nil {
		return nil, fmt.Errorf("harness %w", err)
	}
	var res *Result
	if k == ref.URL {
		res, err = r.resolveRemote(ctx, target)
	} else {
		res, err = r.resolveLocal(ctx, target)
	}
	warnings := r.finish() // background pushes end here
	if err != nil {
		return nil, withWarnings(err, warnings)
	}
	if r.auditErr != nil {
		return nil, withWarnings(fmt.Errorf("audit log: %w", r.auditErr), warnings)
	}
	res.TraceID = r.traceID
	res.Notices = append(res.Notices, r.notices...)
	res.MovableRefs = r.movableRefs()
	res.Anomalies = r.anomalies(res)
	r.recordAnomalies(res)
	if r.auditErr != nil {
		return nil, withWarnings(fmt.Errorf("audit log: %w", r.auditErr), warnings)
	}
	if r.o.Frozen && len(res.Anomalies) > 0 {
		return nil, withWarnings(fmt.Errorf("harness %s: %w (--frozen): %w: %s: %s; if the change is intended, run `%s`", res.Source, ErrStale, ErrAnomalousFetch, res.Anomalies[0].Kind, res.Anomalies[0].Detail, r.lockCommand(res, true)), warnings)
	}
	if err := r.checkLock(res); err != nil {
		return nil, withWarnings(err, warnings)
	}
	res.Warnings = append(res.Warnings, warnings...)
	return res, nil
}

// newResolver applies o's defaults and returns a resolver for one
// resolution.
func newResolver(o Options) (*resolver, error) {
	if o.Store == nil {
		return nil, errors.New("resolve: no cache store")
	}
	if o.Config == nil {
		o.Config = config.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.TraceID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		o.TraceID = hex.EncodeToString(b[:])
	}
	rr := o.Config.Security.RemoteResources
	r := &resolver{
		o: o, cfg: o.Config, traceID: o.TraceID, sem: make(chan struct{}, o.Concurrency),
		maxDepth: rr.MaxDepth, maxRes: rr.MaxResources,
		nodes: map[string]*Node{}, flights: map[ref.Digest]*flight{}, noticeSeen: map[string]bool{},
		confirmed: map[string]bool{}, unverified: map[string]bool{},
		bases: map[string]*Node{}, baseRefs: map[string]bool{}, baseScripts: map[string]lock.Vendored{},
		regSem: make(chan struct{}, RegistryConcurrency), pushSem: make(chan struct{}, pushConcurrency),
		warnedKinds: map[string]bool{}, ctx: context.Background(), prefetches: map[ref.Digest]*prefetch{},
	}
	if r.maxDepth <= 0 {
		r.maxDepth = config.DefaultMaxDepth
	}
	if r.maxRes <= 0 {
		r.maxRes = config.DefaultMaxResources
	}
	return r, nil
}

func (r *resolver) resolveLocal(ctx context.Context, path string) (*Result, error) {
	root := r.o.Root
	if root == "" {
		root = harness.FindRoot(path)
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	data, err := harness.ReadFile(path)
	if err != nil {
		return nil, err
	}
	h, err := harness.Load(path, harness.LoadOptions{
		Root: root, Layers: r.o.Layers, Config: r.cfg, Forge: r.o.Forge, ForgeOptional: r.o.ForgeOptional,
		FetchBase: r.fetchBase, Context: ctx, Check: r.o.HarnessCheck,
	})
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(path)
	rootNode := &Node{Kind: "harness", Type: cas.TypeFile, LocalPath: abs, SHA256: ref.SHA256(data), key: "file:" + abs}
	rootNode.container = displayPath(abs, root)
	rootNode.Ref = rootNode.container
	res := &Result{Loaded: h, Source: filepath.ToSlash(displayPath(abs, root)), SHA256: rootNode.SHA256, Root: root}
	if err := r.walk(ctx, h, rootNode, res); err != nil {
		return nil, err
	}
	return res, nil
}

func displayPath(p, root string) string {
	if rel, err := filepath.Rel(root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel
	}
	return p
}

// walk validates the loaded harness, builds the graph below root and fills
// res.
func (r *resolver) walk(ctx context.Context, h *harness.Harness, root *Node, res *Result) error {
	r.h = h
	r.vendorBaseScripts(h)
	checked, err := h.Check(r.cfg)
	if err != nil {
		return err
	}
	for _, p := range h.AllowedRemoteResources {
		if c, err := ref.CanonicalPrefix(p); err == nil {
			r.allow = append(r.allow, c)
		}
	}
	res.Notices = append(res.Notices, h.Notices...)
	r.nodes[root.key] = root
	if err := r.addBases(h, root); err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	chain := []*Node{root}
	for _, c := range checked {
		if c.EnvExpanded() {
			continue
		}
		fetchType := FetchStatic
		if _, ok := r.baseScripts[c.Value]; ok || r.baseRefs[c.Value] {
			fetchType = baseFetchType(c.Kind.String())
		}
		if c.Ref.Kind != ref.URL && c.Local == "" {
			continue // optional host file that does not exist
		}
		l := link{field: c.Field, raw: c.Value, kind: c.Kind.String(), fetchType: fetchType, checked: true, ref: c.Ref, local: c.Local}
		if err := r.link(gctx, g, chain, l); err != nil {
			g.Wait()
			return err
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	graph := &Graph{Root: root}
	if cyc, longest := graph.cycle(); cyc != "" {
		return &Error{Chain: []string{root.container}, Err: fmt.Errorf("%w: %s", ErrCycle, cyc)}
	} else if longest > max(r.maxDepth, len(h.Chain)-1) {
		return &Error{Chain: []string{root.container}, Err: fmt.Errorf("%w: a path of %d references exceeds max_depth %d", ErrTooDeep, longest, r.maxDepth)}
	}
	graph.order()
	res.Graph = graph
	res.Harness = replaced(h, root)
	return nil
}

// addBases adds the base: chain of h below root (field "base"), not
// counted against max_resources.
func (r *resolver) addBases(h *harness.Harness, root *Node) error {
	prev := root
	for _, f := range h.Chain[1:] {
		var n *Node
		if b, ok := r.bases[f]; ok {
			n = b
		} else {
			p := f
			if !filepath.IsAbs(p) {
				p = filepath.Join(h.Root, filepath.FromSlash(p))
			}
			d, err := hashBase(h, f)
			if err != nil {
				return fmt.Errorf("base %s: %w", f, err)
			}
			n = &Node{Kind: "base", Type: cas.TypeFile, LocalPath: p, SHA256: d, Ref: f, key: "file:" + p, container: f}
		}
		n.Ref = f
		r.nodes[n.key] = n
		prev.Edges = append(prev.Edges, Edge{Field: "base", Ref: f, To: n})
		prev = n
	}
	return nil
}

// hashBase hashes the local base harness f (as h.Chain names it) through
// harness.OpenLocal, like every other local resource.
func hashBase(h *harness.Harness, f string) (ref.Digest, error) {
	l, err := h.OpenLocal(f)
	if err != nil {
		return "", err
	}
	defer l.Close()
	b, err := l.ReadAll()
	if err != nil {
		return "", err
	}
	return ref.SHA256(b), nil
}

// fetchBase is harness.LoadOptions.FetchBase: it fetches remote bases
// through the cache.
func (r *resolver) fetchBase(ctx context.Context, rf ref.Ref) ([]byte, error) {
	allowedBy := "confirmed harness"
	if i, ok := ref.MatchPrefix(rf.URL, r.cfg.AllowedRemoteResources); ok {
		allowedBy = fmt.Sprintf("config allowed_remote_resources[%d]", i)
	}
	w := want{url: rf.URL, digest: rf.Digest, typ: cas.TypeFile, kind: "base", allowedBy: allowedBy, fetchType: FetchBaseResource}
	var err error
	if w.loc, err = r.fileLoc(rf.URL); err != nil {
		return nil, err
	}
	e, hit, err := r.obtain(ctx, w)
	if err != nil {
		return nil, err
	}
	b, bh, err := r.readHarness(e, rf, rf.URL)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	unverified := r.unverified[rf.URL]
	r.mu.Unlock()
	n := &Node{
		Kind: "base", Type: cas.TypeFile, URL: rf.URL, LocalPath: e.ContentPath, SHA256: rf.Digest,
		Remote: true, CacheHit: hit, Unverified: unverified, AllowedBy: allowedBy, FetchType: FetchBaseResource,
		key: rf.String(), base: rf.URL, container: rf.URL,
	}
	// A base named by a branch or tag moves like any other reference:
	// warned about, and its commit recorded by lock.
	if err := r.pinCommit(ctx, w, n); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, fr := range bh.Refs() {
		if fr.EnvExpanded() {
			continue
		}
		if abs, err := ref.ResolveRef(rf.URL, fr.Value); err == nil {
			r.baseRefs[abs.String()] = true
		}
	}
	r.bases[rf.URL] = n
	return b, nil
}

// link is one reference found in a node: the field holding it, its text,
// the kind of resource it names and how it is fetched. checked marks a
// harness field package harness already checked: ref is then its parsed
// reference and local its resolved path ("" for a remote one).
type link struct {
	field, raw, kind, fetchType string
	checked                     bool
	ref                         ref.Ref
	local                       string
}

// link resolves the reference l found in the last node of chain and
// schedules the node it names.
func (r *resolver) link(ctx context.Context, g *errgroup.Group, chain []*Node, l link) error {
	parent := chain[len(chain)-1]
	fail := func(err error) error {
		return &Error{Chain: append(labels(chain), l.field+" "+l.raw), Err: err}
	}
	rf := l.ref
	if !l.checked {
		var err error
		if parent.Remote {
			rf, err = ref.ResolveRef(parent.base, l.raw)
		} else {
			rf, err = ref.Parse(l.raw)
		}
		if err != nil {
			return fail(err)
		}
	}
	n := &Node{Kind: l.kind, Field: l.field, Ref: l.raw, FetchType: l.fetchType}
	if rf.Kind == ref.URL {
		if err := r.remoteNode(n, rf); err != nil {
			return fail(err)
		}
		n.container = l.field + " " + n.URL
	} else if err := r.localNode(n, rf, l); err != nil {
		return fail(err)
	}
	if isBaseFetch(n.FetchType) {
		// What a remote base brings in is told apart by kind, its own
		// references included (a base skill's dependencies are base
		// skills, its policy a base resource).
		n.FetchType = baseFetchType(n.Kind)
	}
	r.mu.Lock()
	if ex, ok := r.nodes[n.key]; ok {
		parent.Edges = append(parent.Edges, Edge{Field: l.field, Ref: l.raw, To: ex})
		r.mu.Unlock()
		for _, c := range chain {
			if c == ex {
				return fail(fmt.Errorf("%w: %s", ErrCycle, cyclePath(chain, ex)))
			}
		}
		return nil
	}
	if len(chain) > r.maxDepth {
		r.mu.Unlock()
		return fail(fmt.Errorf("%w: depth %d exceeds max_depth %d (security.remote_resources.max_depth)", ErrTooDeep, len(chain), r.maxDepth))
	}
	r.count++
	if r.count > r.maxRes {
		r.mu.Unlock()
		return fail(fmt.Errorf("%w: more than max_resources %d (security.remote_resources.max_resources)", ErrTooMany, r.maxRes))
	}
	r.nodes[n.key] = n
	parent.Edges = append(parent.Edges, Edge{Field: l.field, Ref: l.raw, To: n})
	r.mu.Unlock()
	progress.Emit(r.o.Events, progress.Event{Kind: progress.ResourceAdded, Name: n.label()})
	sub := append(slices.Clone(chain), n)
	g.Go(func() error { return r.process(ctx, g, sub) })
	return nil
}

// localNode fills n (Kind, Field, Ref and FetchType set) for the local
// reference l (parsed: rf): a file or directory opened through the
// fullsend dir, of the type its kind wants.
func (r *resolver) localNode(n *Node, rf ref.Ref, l link) error {
	if r.h == nil {
		return fmt.Errorf("%w: a local reference outside a harness", ErrWrongType)
	}
	// Opened through the fullsend dir (harness.OpenLocal), never by
	// name: see readLocal.
	f, err := r.h.OpenLocal(l.raw)
	if err != nil {
		return err
	}
	isDir := f.IsDir()
	f.Close()
	if l.local != "" && f.Path != l.local {
		return fmt.Errorf("%s: resolves to %s since it was checked", l.local, f.Path)
	}
	local := f.Path
	n.LocalPath = local
	n.key = "file:" + local
	n.container = l.field + " " + l.raw
	n.Type = cas.TypeFile
	if isDir {
		n.Type = cas.TypeDirectory
	}
	if n.Type == cas.TypeFile && l.kind == "skill" && isDep(l.field) {
		n.Kind = "doc"
	}
	if n.Type == cas.TypeFile && l.kind == "skill" && !isDep(l.field) {
		return fmt.Errorf("%s: %w: a file, want a skill directory", local, ErrWrongType)
	}
	if n.Type == cas.TypeDirectory && !isDirKind(l.kind) {
		return fmt.Errorf("%s: %w: a directory, want a file", local, ErrWrongType)
	}
	if rf.Digest != "" {
		n.SHA256 = rf.Digest
	}
	return nil
}

// remoteNode fills n (Kind, Field, Ref and FetchType set) for the remote
// reference rf: it needs a pin and a matching allowlist entry; a skill or
// plugin is a directory (identified by its forge tree URL, whatever form
// the reference took) unless the reference names a single file, and a
// skill that is a file is a "doc".
func (r *resolver) remoteNode(n *Node, rf ref.Ref) error {
	if err := rf.RequireDigest(); err != nil {
		return err
	}
	idx, ok := ref.MatchPrefix(rf.URL, r.allow)
	if !ok {
		return r.notAllowed(rf.URL)
	}
	n.Type = cas.TypeFile
	if isDirKind(n.Kind) && !looksLikeFile(rf.URL) && !(isDep(n.Field) && r.explicitFileURL(n.Ref)) {
		n.Type = cas.TypeDirectory
		// One identity per directory: the tree URL, whatever form
		// (blob, raw) the reference took.
		if t, ok := r.asTree(rf.URL); ok && t != rf.URL {
			if idx, ok = ref.MatchPrefix(t, r.allow); !ok {
				return r.notAllowed(t)
			}
			rf.URL = t
		}
	}
	n.Remote, n.URL, n.SHA256 = true, rf.URL, rf.Digest
	n.AllowedBy = fmt.Sprintf("allowed_remote_resources[%d]", idx)
	n.key = rf.String()
	if n.Type == cas.TypeFile && n.Kind == "skill" {
		n.Kind = "doc"
	}
	return nil
}

func (r *resolver) notAllowed(u string) error {
	if len(r.allow) == 0 {
		return fmt.Errorf("%s: %w (the harness's allowed_remote_resources is empty); %s", u, ref.ErrNotAllowed, ref.AllowHint(u))
	}
	return fmt.Errorf("%s: %w (allowed_remote_resources: %s); %s", u, ref.ErrNotAllowed, strings.Join(r.allow, ", "), ref.AllowHint(u))
}

func labels(chain []*Node) []string {
	out := make([]string, len(chain))
	for i, n := range chain {
		out[i] = n.container
	}
	return out
}

func cyclePath(chain []*Node, to *Node) string {
	var parts []string
	start := slices.Index(chain, to)
	for _, c := range chain[start:] {
		parts = append(parts, c.label())
	}
	return strings.Join(append(parts, to.label()), " -> ")
}

func isDep(field string) bool { return strings.HasPrefix(field, "dependencies[") }

// asTree returns the canonical forge tree URL of the same owner,
// repository, ref and path as the forge URL u.
func (r *resolver) asTree(u string) (string, bool) {
	loc, err := forge.Parse(u, r.cfg.Forges)
	if err != nil {
		return "", false
	}
	t, err := loc.As(forge.Tree)
	return t.URL, err == nil
}

// fileLoc returns the forge location of a single file named by u (a tree
// URL is taken as the blob at the same path), nil when u is on no forge
// or is not a usable forge URL (it is then fetched as plain https).
func (r *resolver) fileLoc(u string) (*forge.Location, error) {
	loc, err := forge.Parse(u, r.cfg.Forges)
	if err != nil {
		return nil, nil
	}
	if loc.Kind == forge.Tree {
		if loc, err = loc.As(forge.Blob); err != nil {
			return nil, err
		}
	}
	return &loc, nil
}

// explicitFileURL reports whether a dependency written as an absolute URL
// names a single file: a forge blob or raw URL, or a non-forge URL.
// Relative dependencies inherit the container's URL form, so only their
// extension tells (looksLikeFile).
func (r *resolver) explicitFileURL(raw string) bool {
	if k, err := ref.Classify(raw); err != nil || k != ref.URL {
		return false
	}
	rf, err := ref.Parse(raw)
	if err != nil {
		return false
	}
	loc, err := forge.Parse(rf.URL, r.cfg.Forges)
	return err != nil || loc.Kind != forge.Tree
}

func isDirKind(kind string) bool { return kind == "skill" || kind == "plugin" || kind == "agent_input" }

// looksLikeFile reports whether a dependency URL names a single file: a
// forge blob or raw URL is decided by the caller; here, a last segment
// with a known document extension.
func looksLikeFile(u string) bool {
	last := u[strings.LastIndexByte(u, '/')+1:]
	for _, ext := range []string{".md", ".yaml", ".yml", ".json"} {
		if strings.HasSuffix(strings.ToLower(last), ext) {
			return true
		}
	}
	return false
}

// process materialises the last node of chain and links its own
// references.
func (r *resolver) process(ctx context.Context, g *errgroup.Group, chain []*Node) error {
	n := chain[len(chain)-1]
	fail := func(err error) error {
		var re *Error
		if errors.As(err, &re) {
			return err
		}
		return &Error{Chain: labels(chain), Err: err}
	}
	if n.Remote {
		if err := r.fetchNode(ctx, n); err != nil {
			return fail(err)
		}
	}
	var content []byte
	if !n.Remote {
		var err error
		if content, err = r.readLocal(n); err != nil {
			return fail(err)
		}
		if n.FetchType == FetchBaseScript {
			r.auditBaseScript(n)
		}
	}
	progress.Emit(r.o.Events, progress.Event{Kind: progress.ResourceDone, Name: n.label(), CacheHit: n.CacheHit})
	refs, err := r.children(n, content)
	if err != nil {
		return fail(err)
	}
	for _, c := range refs {
		if err := r.link(ctx, g, chain, link{field: c.field, raw: c.raw, kind: c.kind, fetchType: n.FetchType}); err != nil {
			return err
		}
	}
	return nil
}

// testHookLocalRead, when set (tests only), runs after a local node has
// been checked and linked and before readLocal opens it.
var testHookLocalRead func(n *Node)

// readLocal hashes the local node n and returns what children parses: the
// file's content, or a directory's SKILL.md (nil when it has none). It
// opens n again through harness.OpenLocal, so every byte hashed and parsed
// is read through an os.Root on the dir the reference was found in: a path
// component swapped for a symlink leading out of it after the check makes
// the read fail (harness.ErrEscapes) instead of reading what it points to.
// A directory's symlinks are skipped, as the tree hash defines.
func (r *resolver) readLocal(n *Node) ([]byte, error) {
	if testHookLocalRead != nil {
		testHookLocalRead(n)
	}
	l, err := r.h.OpenLocal(n.Ref)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	if l.Path != n.LocalPath || l.IsDir() != (n.Type == cas.TypeDirectory) {
		return nil, fmt.Errorf("%s: changed since it was checked", n.LocalPath)
	}
	var d ref.Digest
	var content []byte
	if l.IsDir() {
		files, err := l.Files()
		if err != nil {
			return nil, err
		}
		if d, err = cas.TreeHash(files); err != nil {
			return nil, fmt.Errorf("%s: %w", n.LocalPath, err)
		}
		n.Files = n.Files[:0]
		for _, k := range slices.Sorted(maps.Keys(files)) {
			n.Files = append(n.Files, cas.TreeFile{Path: k, SHA256: ref.SHA256(files[k]), Size: int64(len(files[k]))})
		}
		content = files["SKILL.md"]
	} else {
		if content, err = l.ReadAll(); err != nil {
			return nil, err
		}
		d = ref.SHA256(content)
	}
	if n.SHA256 != "" && n.SHA256 != d {
		return nil, fmt.Errorf("%s: sha256 %s does not match the pinned %s", n.LocalPath, d, n.SHA256)
	}
	n.SHA256 = d
	return content, nil
}

// fetchNode fills a remote node from the cache or the network.
func (r *resolver) fetchNode(ctx context.Context, n *Node) error {
	w := want{url: n.URL, digest: n.SHA256, typ: n.Type, kind: n.Kind, allowedBy: n.AllowedBy, fetchType: n.FetchType, hitAudited: n.hitAudited}
	loc, err := forge.Parse(n.URL, r.cfg.Forges)
	switch {
	case err == nil:
		if n.Type == cas.TypeDirectory {
			loc, err = loc.As(forge.Tree)
		} else if loc.Kind == forge.Tree {
			loc, err = loc.As(forge.Blob)
		}
		if err != nil {
			return err
		}
		w.loc = &loc
	case errors.Is(err, forge.ErrNotForge):
		if n.Type == cas.TypeDirectory {
			return notForge(n.URL)
		}
	default:
		return err
	}
	e, hit, err := r.obtain(ctx, w)
	if err != nil {
		return err
	}
	n.CacheHit = hit
	n.Unverified = r.isUnverified(w.url)
	if err := r.pinCommit(ctx, w, n); err != nil {
		return err
	}
	n.Files = e.Files
	n.base = n.URL
	if n.Type == cas.TypeDirectory {
		n.LocalPath = e.TreePath
		if n.base, err = ref.DirURL(n.URL); err != nil {
			return err
		}
	} else {
		n.LocalPath = e.ContentPath
	}
	return nil
}

type childRef struct {
	field, raw, kind string
}

// children lists the references a resource makes (see the package doc).
// For a local node, local is what readLocal read (nothing is read again by
// name); a remote node's content is read from the cache entry.
func (r *resolver) children(n *Node, local []byte) ([]childRef, error) {
	read := func(p string) ([]byte, error) {
		if n.Remote {
			return readSmall(p)
		}
		if local == nil {
			return nil, fmt.Errorf("%s: %w", p, os.ErrNotExist)
		}
		if len(local) > yamlx.MaxFileSize {
			return nil, fmt.Errorf("%s: over %d bytes", p, yamlx.MaxFileSize)
		}
		return local, nil
	}
	readFrontmatter := func(p, name string) (*frontmatter.Frontmatter, error) {
		data, err := read(p)
		if err != nil {
			return nil, err
		}
		return frontmatter.Parse(name, data)
	}
	var out []childRef
	switch {
	case n.Kind == "skill" && n.Type == cas.TypeDirectory:
		fm, err := readFrontmatter(filepath.Join(n.LocalPath, "SKILL.md"), n.label()+"/SKILL.md")
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("skill directory without SKILL.md")
		}
		if err != nil {
			return nil, err
		}
		for i, d := range fm.Dependencies {
			out = append(out, childRef{field: fmt.Sprintf("dependencies[%d]", i), raw: d, kind: "skill"})
		}
		switch fm.Fields["policy"].(type) {
		case []any, map[string]any:
			return nil, fmt.Errorf("%s/SKILL.md: policy: want one reference (a path or a pinned https URL), not a list or mapping", n.label())
		}
		if p := strings.TrimSpace(fm.Policy); p != "" {
			// The skill's sandbox policy: an edge like a dependency
			// (same base, same path and allowlist rules), applied by
			// package run only to narrow the harness policy.
			out = append(out, childRef{field: SkillPolicyField, raw: p, kind: "policy"})
		}
	case n.Kind == "agent":
		fm, err := readFrontmatter(n.LocalPath, n.label())
		if err != nil {
			return nil, err
		}
		for i, s := range fm.Skills {
			if strings.Contains(s, "/") || strings.HasPrefix(strings.ToLower(s), "https://") {
				out = append(out, childRef{field: fmt.Sprintf("skills[%d]", i), raw: s, kind: "skill"})
			}
		}
	case n.Kind == "policy":
		data, err := read(n.LocalPath)
		if err != nil {
			return nil, err
		}
		root, err := yamlx.Parse(n.label(), data)
		if err != nil {
			return nil, err
		}
		pairs, err := yamlx.Pairs(n.label(), "", root)
		if err != nil {
			return nil, err
		}
		for _, kv := range pairs {
			switch kv[0].Value {
			case "schema":
				s, err := yamlx.String(n.label(), "schema", kv[1])
				if err != nil {
					return nil, err
				}
				if s != "" {
					out = append(out, childRef{field: "schema", raw: s, kind: "schema"})
				}
			case "schemas":
				l, err := yamlx.Strings(n.label(), "schemas", kv[1])
				if err != nil {
					return nil, err
				}
				for i, s := range l {
					out = append(out, childRef{field: "schemas[" + strconv.Itoa(i) + "]", raw: s, kind: "schema"})
				}
			}
		}
	}
	return out, nil
}

func readSmall(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := limit.ReadAll(f, yamlx.MaxFileSize)
	if tl := (*limit.TooLargeError)(nil); errors.As(err, &tl) {
		return nil, fmt.Errorf("%s: over %d bytes", p, yamlx.MaxFileSize)
	}
	return b, err
}
