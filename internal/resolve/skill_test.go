package resolve

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// skillChain is a repository where skills/top depends on ../mid, which
// depends on ../leaf (two levels of dependencies below the skill).
type skillChain struct {
	w              *world
	top, mid, leaf ref.Digest
}

func newSkillChain(t *testing.T) skillChain {
	r := newRepo()
	var c skillChain
	c.leaf = r.skill(t, "skills/leaf", nil, map[string]string{"notes.md": "leaf notes"})
	c.mid = r.skill(t, "skills/mid", []string{"../leaf#sha256=" + string(c.leaf)}, nil)
	c.top = r.skill(t, "skills/top", []string{"../mid#sha256=" + string(c.mid)}, map[string]string{"scripts/run.sh": "echo top"})
	c.w = newWorld(t, r)
	return c
}

func (c skillChain) req(fetchType string) SkillRequest {
	return SkillRequest{Ref: pin(c.w.tree("skills/top"), c.top), Allowed: []string{c.w.prefix()}, FetchType: fetchType}
}

func TestResolveSkillTwoLevels(t *testing.T) {
	c := newSkillChain(t)
	w := c.w
	o := w.opts()
	o.TraceID = "trace-skill"
	res, err := ResolveSkill(context.Background(), c.req(FetchRuntime), o)
	if err != nil {
		t.Fatal(err)
	}
	root := res.Graph.Root
	if root.URL != w.tree("skills/top") || root.Kind != "skill" || root.Type != cas.TypeDirectory || root.Depth != 0 || root.SHA256 != c.top {
		t.Fatalf("root = %+v", root)
	}
	if b, err := os.ReadFile(filepath.Join(root.LocalPath, "scripts", "run.sh")); err != nil || string(b) != "echo top" {
		t.Errorf("skill not in the cache at %s: %q %v", root.LocalPath, b, err)
	}
	var got []string
	for _, n := range res.Dependencies() {
		got = append(got, n.Field+" "+n.URL)
		if !n.Remote || n.CacheHit || n.FetchType != FetchRuntime {
			t.Errorf("%s: remote %v hit %v fetch type %q", n.URL, n.Remote, n.CacheHit, n.FetchType)
		}
		if _, err := os.Stat(filepath.Join(n.LocalPath, "SKILL.md")); err != nil {
			t.Errorf("%s: local path: %v", n.URL, err)
		}
	}
	want := []string{"dependencies[0] " + w.tree("skills/mid"), "dependencies[0] " + w.tree("skills/leaf")}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("dependencies %q, want %q", got, want)
	}
	if leaf := nodeByURL(res.Graph, w.tree("skills/leaf")); leaf.Depth != 2 || leaf.Parent.URL != w.tree("skills/mid") {
		t.Errorf("leaf depth %d parent %s", leaf.Depth, leaf.Parent.URL)
	}
	// Scanned before caching: every file of all three trees.
	if len(w.scanner.Scanned()) != 5 {
		t.Errorf("scanned %v", w.scanner.Scanned())
	}
	// Audit: one fetch per tree, with the given fetch type and trace id.
	if len(w.audit.entries) != 3 {
		t.Fatalf("audit %+v", w.audit.entries)
	}
	for _, e := range w.audit.entries {
		if e.FetchType != "runtime" || e.TraceID != "trace-skill" || e.CacheHit || e.AllowedBy != "allowed_remote_resources[0]" {
			t.Errorf("audit entry %+v", e)
		}
	}
	if res.TraceID != "trace-skill" {
		t.Errorf("trace id %q", res.TraceID)
	}
}

// Without a fetch type the entries are static, as in Resolve.
func TestResolveSkillDefaultFetchType(t *testing.T) {
	c := newSkillChain(t)
	if _, err := ResolveSkill(context.Background(), c.req(""), c.w.opts()); err != nil {
		t.Fatal(err)
	}
	for _, e := range c.w.audit.entries {
		if e.FetchType != FetchStatic {
			t.Errorf("audit entry %+v", e)
		}
	}
}

// Audited: the caller's own audit of the skill is not repeated for a cache
// hit, but a fetch of it is still audited, and so is every dependency.
func TestResolveSkillAudited(t *testing.T) {
	c := newSkillChain(t)
	w := c.w
	req := c.req(FetchRuntime)
	req.Audited = true
	if _, err := ResolveSkill(context.Background(), req, w.opts()); err != nil {
		t.Fatal(err)
	}
	if len(w.audit.entries) != 3 || w.audit.entries[0].URL != w.tree("skills/top") || w.audit.entries[0].CacheHit {
		t.Fatalf("cold: audit %+v", w.audit.entries)
	}
	w.audit.entries = nil
	if _, err := ResolveSkill(context.Background(), req, w.opts()); err != nil {
		t.Fatal(err)
	}
	urls := map[string]bool{}
	for _, e := range w.audit.entries {
		urls[e.URL] = e.CacheHit
	}
	if len(w.audit.entries) != 2 || !urls[w.tree("skills/mid")] || !urls[w.tree("skills/leaf")] {
		t.Errorf("warm: audit %+v, want the two dependencies only", w.audit.entries)
	}
}

func TestResolveSkillOffline(t *testing.T) {
	c := newSkillChain(t)
	w := c.w
	o := w.opts()
	o.Offline = true
	_, err := ResolveSkill(context.Background(), c.req(FetchRuntime), o)
	if !errors.Is(err, ErrOffline) || !strings.Contains(err.Error(), w.tree("skills/top")) {
		t.Fatalf("cold offline: err = %v", err)
	}
	if w.netUsed != 0 || w.srv.RequestCount() != 0 {
		t.Fatalf("offline used the network: %d clients, %d requests", w.netUsed, w.srv.RequestCount())
	}
	o.Offline = false
	if _, err := ResolveSkill(context.Background(), c.req(FetchRuntime), o); err != nil {
		t.Fatal(err)
	}
	// Warm: everything from the cache, no network.
	w.srv.ResetRequests()
	o.Offline = true
	o.Network = func() (*Network, error) { t.Error("network built offline"); return nil, errors.New("no") }
	res, err := ResolveSkill(context.Background(), c.req(FetchRuntime), o)
	if err != nil {
		t.Fatalf("warm offline: %v", err)
	}
	if !res.Graph.Root.CacheHit || len(res.Graph.Nodes) != 2 || w.srv.RequestCount() != 0 {
		t.Fatalf("warm offline: root hit %v, %d nodes, %d requests", res.Graph.Root.CacheHit, len(res.Graph.Nodes), w.srv.RequestCount())
	}
	for _, n := range res.Graph.Nodes {
		if !n.CacheHit {
			t.Errorf("%s not a cache hit", n.URL)
		}
	}
	// A miss deep down names that dependency and its chain.
	leaf, _ := w.store.Get(c.leaf)
	if err := os.RemoveAll(leaf.Dir); err != nil {
		t.Fatal(err)
	}
	_, err = ResolveSkill(context.Background(), c.req(FetchRuntime), o)
	chain := w.tree("skills/top") + " -> dependencies[0] " + w.tree("skills/mid") + " -> dependencies[0] " + w.tree("skills/leaf")
	if !errors.Is(err, ErrOffline) || !strings.Contains(err.Error(), chain) {
		t.Fatalf("offline miss: err = %v", err)
	}
}

// A dependency outside the allowlist (after dot segments are removed) is
// refused before any request for it; so is the skill itself.
func TestResolveSkillOutsideAllowlist(t *testing.T) {
	r := newRepo()
	other := r.skill(t, "skills/x", nil, nil)
	out := r.skill(t, "skills/out", []string{"../../../../../../evil/r/tree/main/skills/x#sha256=" + string(other)}, nil)
	w := newWorld(t, r)
	_, err := ResolveSkill(context.Background(), SkillRequest{Ref: pin(w.tree("skills/out"), out), Allowed: []string{w.prefix()}}, w.opts())
	if !errors.Is(err, ref.ErrNotAllowed) {
		t.Fatalf("err = %v, want not allowed", err)
	}
	target := "https://" + w.srv.WebHost() + "/evil/r/tree/main/skills/x"
	if !strings.HasPrefix(err.Error(), w.tree("skills/out")+" -> dependencies[0] ") || !strings.Contains(err.Error(), target) {
		t.Errorf("error %q lacks the chain or the normalised target", err)
	}
	if c := w.srv.CountRequests("evil"); c != 0 {
		t.Errorf("%d requests to the disallowed path", c)
	}
	// The skill itself is checked too.
	w.srv.ResetRequests()
	_, err = ResolveSkill(context.Background(), SkillRequest{Ref: pin(w.tree("skills/x"), other), Allowed: []string{w.prefix() + "tree/main/other/"}}, w.opts())
	if !errors.Is(err, ref.ErrNotAllowed) || w.srv.RequestCount() != 0 {
		t.Fatalf("skill outside: err = %v, %d requests", err, w.srv.RequestCount())
	}
}

// The skill reference must be a pinned forge directory.
func TestResolveSkillRefRules(t *testing.T) {
	r := newRepo()
	d := r.skill(t, "skills/x", nil, nil)
	doc := r.file("docs/x.md", "doc\n")
	w := newWorld(t, r)
	for name, tc := range map[string]struct {
		ref   string
		allow string
		want  error
	}{
		"unpinned":  {ref: w.tree("skills/x"), want: ref.ErrMissingDigest},
		"a file":    {ref: pin(w.blob("docs/x.md"), doc), want: ErrWrongType},
		"local":     {ref: "skills/x", want: ErrWrongType},
		"not forge": {ref: "https://elsewhere.test/skills/x#sha256=" + string(d), allow: "https://elsewhere.test/", want: ErrNotForge},
	} {
		t.Run(name, func(t *testing.T) {
			allow := []string{w.prefix()}
			if tc.allow != "" {
				allow = []string{tc.allow}
			}
			_, err := ResolveSkill(context.Background(), SkillRequest{Ref: tc.ref, Allowed: allow}, w.opts())
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if w.netUsed != 0 {
		t.Errorf("network built %d times", w.netUsed)
	}
	// A blob URL of the directory is the same skill, as in a harness.
	res, err := ResolveSkill(context.Background(), SkillRequest{Ref: pin(w.blob("skills/x"), d), Allowed: []string{w.prefix()}}, w.opts())
	if err != nil || res.Graph.Root.URL != w.tree("skills/x") {
		t.Fatalf("blob form: %v", err)
	}
}

// max_depth and max_resources count from the skill: it is at depth 0 and
// is the first resource.
func TestResolveSkillLimits(t *testing.T) {
	for _, tc := range []struct {
		depth, res int
		want       error
	}{
		{2, 3, nil},
		{1, 3, ErrTooDeep},
		{2, 2, ErrTooMany},
	} {
		c := newSkillChain(t)
		c.w.cfg.Security.RemoteResources.MaxDepth = tc.depth
		c.w.cfg.Security.RemoteResources.MaxResources = tc.res
		_, err := ResolveSkill(context.Background(), c.req(FetchRuntime), c.w.opts())
		if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
			t.Errorf("max_depth %d max_resources %d: err = %v, want %v", tc.depth, tc.res, err, tc.want)
		}
	}
}

// A dependency the scanner blocks is an error and is not cached.
func TestResolveSkillBlockedDependency(t *testing.T) {
	r := newRepo()
	bad := r.skill(t, "skills/bad", nil, map[string]string{"x.md": "EVIL"})
	top := r.skill(t, "skills/top", []string{"../bad#sha256=" + string(bad)}, nil)
	w := newWorld(t, r)
	_, err := ResolveSkill(context.Background(), SkillRequest{Ref: pin(w.tree("skills/top"), top), Allowed: []string{w.prefix()}}, w.opts())
	if !errors.Is(err, ErrScanBlocked) {
		t.Fatalf("err = %v", err)
	}
	if _, err := w.store.Get(bad); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("blocked dependency cached: %v", err)
	}
}

// cycleStore serves fixed directories for made-up digests: with real tree
// hashes two skills cannot pin each other, so only a store that does not
// verify can present a cycle to the walker.
type cycleStore map[ref.Digest]string

func (s cycleStore) Get(d ref.Digest) (cas.Entry, error) {
	dir, ok := s[d]
	if !ok {
		return cas.Entry{}, cas.ErrNotFound
	}
	return cas.Entry{Digest: d, Meta: cas.Metadata{Type: cas.TypeDirectory, SHA256: string(d)}, Dir: dir, TreePath: dir}, nil
}

func (s cycleStore) PutFile(ref.Digest, cas.Metadata, []byte) (cas.Entry, error) {
	return cas.Entry{}, errors.New("read-only")
}

func (s cycleStore) PutTree(ref.Digest, cas.Metadata, map[string][]byte) (cas.Entry, error) {
	return cas.Entry{}, errors.New("read-only")
}

func TestResolveSkillCycle(t *testing.T) {
	w := newWorld(t, newRepo())
	a, b := ref.Digest(strings.Repeat("a", 64)), ref.Digest(strings.Repeat("b", 64))
	st := cycleStore{
		a: writeDir(t, map[string]string{"SKILL.md": skillMD("../b#sha256=" + string(b))}),
		b: writeDir(t, map[string]string{"SKILL.md": skillMD("../a#sha256=" + string(a))}),
	}
	o := w.opts()
	o.Store, o.Offline = st, true
	_, err := ResolveSkill(context.Background(), SkillRequest{Ref: pin(w.tree("skills/a"), a), Allowed: []string{w.prefix()}}, o)
	cyc := w.tree("skills/a") + " -> " + w.tree("skills/b") + " -> " + w.tree("skills/a")
	if !errors.Is(err, ErrCycle) || !strings.Contains(err.Error(), cyc) {
		t.Fatalf("err = %v, want cycle %s", err, cyc)
	}
}
