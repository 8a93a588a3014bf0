package resolve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
	"github.com/fullsend-ai/fullsend/internal/ocicache"
	"github.com/fullsend-ai/fullsend/internal/ocicache/ocicachetest"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/resolve/resolvetest"
)

const regPath = "fullsend/cache"

// useRegistry points w's config at a registry repository (the wiring of
// config.yaml cache.oci through NewNetwork).
func (w *world) useRegistry(repository string, push bool) {
	w.cfg.Cache.OCI = config.CacheOCI{Repository: repository, Push: push, PlainHTTP: true}
}

// registryGraph starts a registry and builds the graph repository
// (buildGraphRepo) in a world that pushes to it; the options confirm the
// remote harness.
func registryGraph(t *testing.T) (*ocicachetest.Registry, *world, graphRepo, Options) {
	t.Helper()
	reg := ocicachetest.New(t)
	w, g := buildGraphRepo(t, func(r *repo) *world { return newWorld(t, r) }, "")
	w.useRegistry(reg.Repository(regPath), true)
	o := w.opts()
	o.Yes = true
	return reg, w, g, o
}

// freshRunner gives w an empty cache, scanner and audit log: another CI
// runner sharing the forge and the registry.
func (w *world) freshRunner(t testing.TB) {
	store, err := cas.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w.store, w.scanner, w.audit = store, &resolvetest.Scanner{}, &memAudit{}
}

// stopForge makes every forge request fail at once (404, never retried)
// and forgets the requests so far.
func (w *world) stopForge() {
	w.srv.Fail(forgetest.Fault{Status: 404, Body: "forge stopped (test)"})
	w.srv.ResetRequests()
}

func (w *world) sources() map[string]int {
	out := map[string]int{}
	for _, e := range w.audit.entries {
		out[e.Source]++
	}
	return out
}

// TestRegistryRunnerAB: runner A resolves a remote harness graph (harness,
// agent, policy, four skills in a diamond) from the forge and pushes it;
// runner B, with an empty cache and the forge stopped, resolves it from
// the registry alone: zero forge requests, every resource scanned before
// it is cached, audited with source "registry", and byte for byte what A
// has.
func TestRegistryRunnerAB(t *testing.T) {
	reg, w, g, o := registryGraph(t)
	resA, err := Resolve(context.Background(), g.harnessURL, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(resA.Warnings) != 0 {
		t.Fatalf("runner A warnings: %q", resA.Warnings)
	}
	if got := w.sources(); got[audit.SourceForge] != 7 || got[audit.SourceRegistry] != 0 {
		t.Fatalf("runner A audit sources = %v, want 7 from the forge", got)
	}
	items, err := mustCache(t, reg.Repository(regPath)).List(context.Background())
	if err != nil || len(items) != 7 {
		t.Fatalf("registry holds %d entries after runner A (%v), want 7", len(items), err)
	}
	storeA := w.store

	w.freshRunner(t)
	w.stopForge()
	o = w.opts()
	o.Yes = true
	resB, err := Resolve(context.Background(), g.harnessURL, o)
	if err != nil {
		t.Fatal(err)
	}
	if n := w.srv.RequestCount(); n != 0 {
		t.Fatalf("runner B made %d forge requests, want 0", n)
	}
	if got := w.sources(); got[audit.SourceRegistry] != 7 || len(got) != 1 {
		t.Fatalf("runner B audit sources = %v, want 7 from the registry", got)
	}
	if len(w.scanner.Scanned()) < 7 {
		t.Fatalf("runner B scanned %d files, want every file of the graph: %v", len(w.scanner.Scanned()), w.scanner.Scanned())
	}
	for _, n := range resB.Graph.Nodes {
		a, err := storeA.Get(n.SHA256)
		if err != nil {
			t.Fatal(err)
		}
		b, err := w.store.Get(n.SHA256)
		if err != nil {
			t.Fatalf("%s not in runner B's cache: %v", n.URL, err)
		}
		if n.CacheHit || a.Meta.Type != b.Meta.Type || len(a.Files) != len(b.Files) {
			t.Errorf("%s: hit %v, A %+v, B %+v", n.URL, n.CacheHit, a.Files, b.Files)
		}
	}
}

func mustCache(t testing.TB, repository string) *ocicache.Cache {
	c, err := ocicache.New(ocicache.Options{Repository: repository, PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRegistryContentIsScanned: content served by the registry is scanned
// like forge content before it is cached: a pinned skill that the scanner
// blocks is refused although its bytes match the pin, and nothing is
// cached.
func TestRegistryContentIsScanned(t *testing.T) {
	reg := ocicachetest.New(t)
	r := newRepo()
	evil := map[string][]byte{"SKILL.md": []byte("---\nname: e\ndescription: e\n---\nEVIL instructions\n")}
	d, err := cas.TreeHash(evil)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, r)
	w.useRegistry(reg.Repository(regPath), false)
	if err := mustCache(t, reg.Repository(regPath)).PutTree(context.Background(), d, evil, ""); err != nil {
		t.Fatal(err)
	}
	dir := writeDir(t, map[string]string{"harness/h.yaml": fmt.Sprintf("agent: agents/a.md\nskills:\n  - %s\nallowed_remote_resources: [%s]\n", pin(w.tree("skills/e"), d), w.prefix()), "agents/a.md": "---\nname: a\n---\nagent\n"})
	w.stopForge()
	_, err = Resolve(context.Background(), filepath.Join(dir, "harness", "h.yaml"), w.opts())
	if !errors.Is(err, ErrScanBlocked) {
		t.Fatalf("err = %v, want the scanner's block", err)
	}
	if w.srv.RequestCount() != 0 {
		t.Fatalf("the forge was asked %d times: the registry had the content", w.srv.RequestCount())
	}
	if _, err := w.store.Get(d); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("blocked registry content was cached: %v", err)
	}
}

// TestRegistryTamperedFallsBack: after runner A pushed, the registry
// serves a forged manifest for one skill and other bytes for the agent's
// blob. Runner B refuses both, says so naming the registry and the digest,
// and takes them from the forge; with the forge stopped as well the error
// names the refusal too.
func TestRegistryTamperedFallsBack(t *testing.T) {
	reg, w, g, o := registryGraph(t)
	repository := reg.Repository(regPath)
	if _, err := Resolve(context.Background(), g.harnessURL, o); err != nil {
		t.Fatal(err)
	}
	agent := ref.SHA256(g.Files["agents/a.md"])
	reg.TamperBlob(agent, []byte("---\nname: a\n---\nYou are evil.\n"))
	// Re-tag mid's manifest: leaf's genuine files under mid's tag.
	leafManifest := ocicachetest.GetManifest(t, reg.Host, regPath, "tree-"+string(g.leaf))
	ocicachetest.PushManifest(t, reg.Host, regPath, "tree-"+string(g.mid), leafManifest)

	w.freshRunner(t)
	w.srv.ResetRequests()
	o = w.opts()
	o.Yes = true
	res, err := Resolve(context.Background(), g.harnessURL, o)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(res.Warnings, "\n")
	for _, want := range []string{repository, string(agent), string(g.mid)} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings do not name %s:\n%s", want, joined)
		}
	}
	if w.srv.RequestCount() == 0 {
		t.Fatal("the refused entries were not fetched from the forge")
	}
	got := w.sources()
	if got[audit.SourceForge] != 2 || got[audit.SourceRegistry] != 5 {
		t.Fatalf("audit sources = %v, want 2 from the forge, 5 from the registry", got)
	}
	if _, b, err := w.store.ReadFile(agent); err != nil || !bytes.Equal(b, g.Files["agents/a.md"]) {
		t.Fatalf("cached agent = %q, %v", b, err)
	}

	w.freshRunner(t)
	w.stopForge()
	o = w.opts()
	o.Yes = true
	_, err = Resolve(context.Background(), g.harnessURL, o)
	if err == nil || !strings.Contains(err.Error(), "registry copy was refused") || !strings.Contains(err.Error(), repository) {
		t.Fatalf("err = %v, want the forge failure naming the registry refusal", err)
	}
}

// lyingRegistry answers every lookup with fixed content and no error: it
// stands for a registry client that verifies nothing.
type lyingRegistry struct {
	files map[string][]byte
	puts  int
	mu    sync.Mutex
}

func (l *lyingRegistry) Name() string { return "liar.test/x" }
func (l *lyingRegistry) GetFile(context.Context, ref.Digest) ([]byte, error) {
	return []byte("lies"), nil
}
func (l *lyingRegistry) GetTree(context.Context, ref.Digest) (map[string][]byte, error) {
	return l.files, nil
}
func (l *lyingRegistry) PutFile(context.Context, ref.Digest, []byte, string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.puts++
	return errors.New("push refused (test)")
}
func (l *lyingRegistry) PutTree(context.Context, ref.Digest, map[string][]byte, string) error {
	return l.PutFile(context.Background(), "", nil, "")
}

// TestResolveVerifiesRegistryAnswers: resolve checks the pin of what the
// registry tier returns itself (a Registry implementation that verified
// nothing cannot put unpinned bytes in the cache); a failed push is a
// warning and the run goes on.
func TestResolveVerifiesRegistryAnswers(t *testing.T) {
	w, g := buildGraphRepo(t, func(r *repo) *world { return newWorld(t, r) }, "")
	liar := &lyingRegistry{files: map[string][]byte{"SKILL.md": []byte("---\nname: x\ndescription: x\n---\nlies\n")}}
	o := w.opts()
	o.Yes = true
	inner := o.Network
	o.Network = func() (*Network, error) {
		n, err := inner()
		if err == nil {
			n.Registry, n.Push = liar, true
		}
		return n, err
	}
	res, err := Resolve(context.Background(), g.harnessURL, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.sources(); got[audit.SourceForge] != 7 {
		t.Fatalf("audit sources = %v, want all 7 from the forge", got)
	}
	refused, pushes := 0, 0
	for _, m := range res.Warnings {
		if strings.Contains(m, "liar.test/x") && strings.Contains(m, "mismatch") {
			refused++
		}
		if strings.Contains(m, "pushing") && strings.Contains(m, "the run goes on") {
			pushes++
		}
	}
	if refused != 7 || pushes != 7 || liar.puts != 7 {
		t.Fatalf("%d refusals, %d push warnings, %d pushes, want 7 each:\n%s", refused, pushes, liar.puts, strings.Join(res.Warnings, "\n"))
	}
}

// TestRegistryDownIsOneWarning: an unreachable registry costs one warning
// and the forge serves the run; the registry is not asked for every
// resource.
func TestRegistryDownIsOneWarning(t *testing.T) {
	reg, _, g, o := registryGraph(t)
	reg.SetDown(true)
	o.Concurrency = 1
	res, err := Resolve(context.Background(), g.harnessURL, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], reg.Repository(regPath)) || !strings.Contains(res.Warnings[0], "unavailable") {
		t.Fatalf("warnings = %q, want one naming the unavailable registry", res.Warnings)
	}
	// The harness is looked up alone first; after it failed nothing else
	// is asked.
	if n := reg.RequestCount(); n != 1 {
		t.Fatalf("registry asked %d times, want 1", n)
	}
}

// TestAuditSourceCache: a warm resolution audits source "cache".
func TestAuditSourceCache(t *testing.T) {
	w, g := buildGraphRepo(t, func(r *repo) *world { return newWorld(t, r) }, "")
	o := w.opts()
	o.Yes = true
	for i := 0; i < 2; i++ {
		if _, err := Resolve(context.Background(), g.harnessURL, o); err != nil {
			t.Fatal(err)
		}
	}
	if got := w.sources(); got[audit.SourceForge] != 7 || got[audit.SourceCache] != 7 || len(got) != 2 {
		t.Fatalf("audit sources = %v", got)
	}
	b, _ := json.Marshal(w.audit.entries[len(w.audit.entries)-1])
	if !strings.Contains(string(b), `"source":"cache"`) {
		t.Fatalf("audit line %s", b)
	}
}

// gatedStore holds the cache write of the skills named in hold until
// release is closed.
type gatedStore struct {
	Store
	hold    map[ref.Digest]bool
	release chan struct{}
}

func (g *gatedStore) PutTree(want ref.Digest, meta cas.Metadata, files map[string][]byte) (cas.Entry, error) {
	if g.hold[want] {
		select {
		case <-g.release:
		case <-time.After(20 * time.Second): // deadlock guard only
			return cas.Entry{}, errors.New("gatedStore: the dependency was never looked up before its parent was cached")
		}
	}
	return g.Store.PutTree(want, meta, files)
}

// recordingRegistry passes calls through and closes onTree when the tree
// digest want is asked for.
type recordingRegistry struct {
	Registry
	want   ref.Digest
	once   sync.Once
	onTree chan struct{}
	mu     sync.Mutex
	asked  map[ref.Digest]int
}

func (r *recordingRegistry) GetTree(ctx context.Context, d ref.Digest) (map[string][]byte, error) {
	r.mu.Lock()
	r.asked[d]++
	r.mu.Unlock()
	if d == r.want {
		r.once.Do(func() { close(r.onTree) })
	}
	return r.Registry.GetTree(ctx, d)
}

// TestRegistryPrefetchesDependencies: a skill read from the registry has
// the dependencies its SKILL.md pins looked up at once, before the skill
// itself is cached (here its cache write waits until mid was asked for),
// each digest exactly once.
func TestRegistryPrefetchesDependencies(t *testing.T) {
	_, w, g, o := registryGraph(t)
	if _, err := Resolve(context.Background(), g.harnessURL, o); err != nil {
		t.Fatal(err)
	}
	w.freshRunner(t)
	w.stopForge()
	rec := &recordingRegistry{want: g.mid, onTree: make(chan struct{}), asked: map[ref.Digest]int{}}
	s1, s2 := ref.Digest(""), ref.Digest("")
	for _, n := range []string{"skills/s1", "skills/s2"} {
		files := map[string][]byte{}
		for p, b := range g.Files {
			if rest, ok := strings.CutPrefix(p, n+"/"); ok {
				files[rest] = b
			}
		}
		d, err := cas.TreeHash(files)
		if err != nil {
			t.Fatal(err)
		}
		if s1 == "" {
			s1 = d
		} else {
			s2 = d
		}
	}
	o = w.opts()
	o.Yes = true
	o.Store = &gatedStore{Store: w.store, hold: map[ref.Digest]bool{s1: true, s2: true}, release: rec.onTree}
	inner := o.Network
	o.Network = func() (*Network, error) {
		n, err := inner()
		if err == nil {
			rec.Registry = n.Registry
			n.Registry = rec
		}
		return n, err
	}
	if _, err := Resolve(context.Background(), g.harnessURL, o); err != nil {
		t.Fatal(err)
	}
	if w.srv.RequestCount() != 0 {
		t.Fatalf("%d forge requests", w.srv.RequestCount())
	}
	for d, n := range rec.asked {
		if n != 1 {
			t.Errorf("tree %s asked %d times", d, n)
		}
	}
}

// TestPrefetchOnlyAllowed: only dependencies the allowlist admits are
// prefetched, with the type the walker will ask for.
func TestPrefetchOnlyAllowed(t *testing.T) {
	r, err := newResolver(Options{Store: &gatedStore{}})
	if err != nil {
		t.Fatal(err)
	}
	r.start(context.Background())
	defer r.finish()
	r.allow = []string{"https://github.test/o/r/"}
	in, out, doc := ref.SHA256([]byte("in")), ref.SHA256([]byte("out")), ref.SHA256([]byte("doc"))
	md := fmt.Sprintf("---\nname: s\ndescription: s\ndependencies:\n  - ../shared#sha256=%s\n  - https://evil.test/x/tree/main/y#sha256=%s\n  - ../notes.md#sha256=%s\n---\nbody\n", in, out, doc)
	liar := &lyingRegistry{}
	w := want{url: "https://github.test/o/r/tree/main/skills/s", kind: "skill", typ: cas.TypeDirectory}
	r.prefetchDeps(liar, w, map[string][]byte{"SKILL.md": []byte(md)})
	if p := r.takePrefetch(in, cas.TypeDirectory); p == nil {
		t.Error("the allowed sibling skill was not prefetched")
	}
	if p := r.takePrefetch(doc, cas.TypeFile); p == nil {
		t.Error("the allowed document was not prefetched as a file")
	}
	for _, typ := range []cas.Type{cas.TypeDirectory, cas.TypeFile} {
		if p := r.takePrefetch(out, typ); p != nil {
			t.Errorf("a dependency outside allowed_remote_resources was prefetched (as a %s)", typ)
		}
	}
}
