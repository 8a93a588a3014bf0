package resolve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// graphRepo is a repository with a remote harness at harness/h.yaml whose
// agent, policy and skills are remote: s1 and s2 both depend on mid (a
// diamond), mid depends on leaf (transitive deps two levels deep below the
// skills).
type graphRepo struct {
	*repo
	harnessURL string
	leaf, mid  ref.Digest
}

func buildGraphRepo(t testing.TB, w func(*repo) *world, leafPin string) (*world, graphRepo) {
	r := newRepo()
	g := graphRepo{repo: r}
	g.leaf = r.skill(t, "skills/leaf", nil, map[string]string{"notes.md": "leaf notes"})
	lp := leafPin
	if lp == "" {
		lp = string(g.leaf)
	}
	g.mid = r.skill(t, "skills/mid", []string{"../leaf#sha256=" + lp}, nil)
	s1 := r.skill(t, "skills/s1", []string{"../mid#sha256=" + string(g.mid)}, map[string]string{"scripts/run.sh": "echo s1"})
	s2 := r.skill(t, "skills/s2", []string{"../mid#sha256=" + string(g.mid)}, nil)
	agent := r.file("agents/a.md", "---\nname: a\nskills:\n  - code-implementation\n---\nYou are agent a.\n")
	policy := r.file("policies/p.yaml", "version: 1\n")
	wd := w(r)
	harness := fmt.Sprintf(`agent: ../agents/a.md#sha256=%s
policy: ../policies/p.yaml#sha256=%s
skills:
  - ../skills/s1#sha256=%s
  - %s
allowed_remote_resources:
  - %s
`, agent, policy, s1, pin(wd.tree("skills/s2"), s2), wd.prefix())
	hd := r.file("harness/h.yaml", harness)
	wd.srv.AddRepo(wd.key, r.Files)
	g.harnessURL = pin(wd.blob("harness/h.yaml"), hd)
	return wd, g
}

func TestRemoteHarnessGraph(t *testing.T) {
	w, g := buildGraphRepo(t, func(r *repo) *world { return newWorld(t, r) }, "")
	o := w.opts()
	o.Yes = true
	res, err := Resolve(context.Background(), g.harnessURL, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Remote || res.Graph.Root.URL != w.blob("harness/h.yaml") {
		t.Fatalf("root = %+v", res.Graph.Root)
	}
	want := map[string]struct {
		field string
		depth int
		typ   cas.Type
	}{
		w.blob("agents/a.md"):     {"agent", 1, cas.TypeFile},
		w.blob("policies/p.yaml"): {"policy", 1, cas.TypeFile},
		w.tree("skills/s1"):       {"skills[0]", 1, cas.TypeDirectory},
		w.tree("skills/s2"):       {"skills[1]", 1, cas.TypeDirectory},
		w.tree("skills/mid"):      {"dependencies[0]", 2, cas.TypeDirectory},
		w.tree("skills/leaf"):     {"dependencies[0]", 3, cas.TypeDirectory},
	}
	if len(res.Graph.Nodes) != len(want) {
		for _, n := range res.Graph.Nodes {
			t.Logf("node %s %s", n.Field, n.URL)
		}
		t.Fatalf("%d nodes, want %d", len(res.Graph.Nodes), len(want))
	}
	for u, wn := range want {
		n := nodeByURL(res.Graph, u)
		if n == nil {
			t.Fatalf("no node %s", u)
		}
		if n.Field != wn.field || n.Depth != wn.depth || n.Type != wn.typ || !n.Remote || n.CacheHit {
			t.Errorf("%s: field %q depth %d type %s remote %v hit %v", u, n.Field, n.Depth, n.Type, n.Remote, n.CacheHit)
		}
		if _, err := os.Stat(n.LocalPath); err != nil {
			t.Errorf("%s: local path: %v", u, err)
		}
	}
	// s1 (a blob URL relative to the harness) was fetched as a tree.
	if n := nodeByURL(res.Graph, w.tree("skills/s1")); len(n.Files) != 2 {
		t.Errorf("s1 files = %+v", n.Files)
	}
	// The diamond's shared dependency is fetched once: one download of its
	// SKILL.md blob although two skills depend on it.
	midSkill := forgetest.GitBlobSHA1(g.Files["skills/mid/SKILL.md"])
	if c := w.srv.CountRequests("/git/blobs/" + midSkill); c != 1 {
		t.Errorf("mid SKILL.md downloaded %d times, want 1", c)
	}
	// The harness is rewritten to cache paths.
	if !strings.HasPrefix(res.Harness.Agent, w.store.Dir()) || !strings.HasPrefix(res.Harness.Skills[1], w.store.Dir()) {
		t.Errorf("harness not rewritten: agent %q skills %q", res.Harness.Agent, res.Harness.Skills)
	}
	// Every remote content was scanned before caching; audit has every fetch.
	if len(w.scanner.Scanned()) < 7 {
		t.Errorf("scanned %d files: %v", len(w.scanner.Scanned()), w.scanner.Scanned())
	}
	fetched := 0
	for _, e := range w.audit.entries {
		if e.TraceID != res.TraceID || e.FetchType != FetchStatic || e.AllowedBy == "" {
			t.Errorf("audit entry %+v", e)
		}
		if !e.CacheHit {
			fetched++
		}
	}
	if fetched != 7 { // harness + 6 resources
		t.Errorf("%d audited fetches, want 7", fetched)
	}

	// Warm: zero requests, every node a cache hit.
	w.srv.ResetRequests()
	w.srv.Fail(forgetest.Fault{Status: 500})
	res2, err := Resolve(context.Background(), g.harnessURL, o)
	if err != nil {
		t.Fatal(err)
	}
	if c := w.srv.RequestCount(); c != 0 {
		t.Errorf("warm resolution made %d requests", c)
	}
	for _, n := range res2.Graph.Nodes {
		if !n.CacheHit {
			t.Errorf("%s not a cache hit", n.URL)
		}
	}
}

func TestHashMismatchDeepShowsChain(t *testing.T) {
	wrong := strings.Repeat("ab", 32)
	w, g := buildGraphRepo(t, func(r *repo) *world { return newWorld(t, r) }, wrong)
	o := w.opts()
	o.Yes = true
	_, err := Resolve(context.Background(), g.harnessURL, o)
	if !errors.Is(err, fetch.ErrHashMismatch) {
		t.Fatalf("err = %v, want hash mismatch", err)
	}
	msg := err.Error()
	for _, part := range []string{w.blob("harness/h.yaml") + " -> skills[", " -> dependencies[0] " + w.tree("skills/mid") + " -> dependencies[0] " + w.tree("skills/leaf")} {
		if !strings.Contains(msg, part) {
			t.Errorf("error %q lacks %q", msg, part)
		}
	}
	// Nothing of the bad tree was cached.
	if _, err := w.store.Get(ref.Digest(wrong)); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("bad tree cached: %v", err)
	}
}

func TestPrefixTraversalRejected(t *testing.T) {
	r := newRepo()
	w := newWorld(t, r)
	evil := "../../../../../../attacker-org/evil-repo/policy.yaml#sha256=" + strings.Repeat("0", 64)
	s := r.skill(t, "skills/s", []string{evil}, nil)
	agent := r.file("agents/a.md", "agent\n")
	h := writeDir(t, map[string]string{"harness/h.yaml": fmt.Sprintf("agent: %s\nskills:\n  - %s\nallowed_remote_resources: [%s]\n",
		pin(w.blob("agents/a.md"), agent), pin(w.tree("skills/s"), s), w.prefix())})
	w.srv.AddRepo(w.key, r.Files)
	_, err := Resolve(context.Background(), h+"/harness/h.yaml", w.opts())
	if !errors.Is(err, ref.ErrNotAllowed) {
		t.Fatalf("err = %v, want not allowed", err)
	}
	target := "https://" + w.srv.WebHost() + "/attacker-org/evil-repo/policy.yaml"
	if !strings.Contains(err.Error(), target) || !strings.Contains(err.Error(), "skills[0] "+w.tree("skills/s")+" -> dependencies[0]") {
		t.Errorf("error %q lacks the normalised target or the chain", err)
	}
	if c := w.srv.CountRequests("attacker"); c != 0 {
		t.Errorf("%d requests to the attacker path", c)
	}
}

func TestOffline(t *testing.T) {
	w, g := buildGraphRepo(t, func(r *repo) *world { return newWorld(t, r) }, "")
	o := w.opts()
	o.Yes = true
	o.Offline = true
	_, err := Resolve(context.Background(), g.harnessURL, o)
	if !errors.Is(err, ErrOffline) || !strings.Contains(err.Error(), w.blob("harness/h.yaml")) {
		t.Fatalf("cold offline: err = %v", err)
	}
	if w.netUsed != 0 || w.srv.RequestCount() != 0 {
		t.Fatalf("offline used the network: %d clients, %d requests", w.netUsed, w.srv.RequestCount())
	}
	// Warm the cache, then drop one entry: offline names exactly that URL.
	o.Offline = false
	if _, err := Resolve(context.Background(), g.harnessURL, o); err != nil {
		t.Fatal(err)
	}
	w.srv.ResetRequests()
	o.Offline = true
	o.Network = func() (*Network, error) { t.Error("network built offline"); return nil, errors.New("no") }
	res, err := Resolve(context.Background(), g.harnessURL, o)
	if err != nil {
		t.Fatalf("warm offline: %v", err)
	}
	if len(res.Graph.Nodes) != 6 || w.srv.RequestCount() != 0 {
		t.Fatalf("warm offline: %d nodes, %d requests", len(res.Graph.Nodes), w.srv.RequestCount())
	}
	leaf, _ := w.store.Get(g.leaf)
	if err := os.RemoveAll(leaf.Dir); err != nil {
		t.Fatal(err)
	}
	_, err = Resolve(context.Background(), g.harnessURL, o)
	if !errors.Is(err, ErrOffline) || !strings.Contains(err.Error(), w.tree("skills/leaf")) {
		t.Fatalf("offline miss: err = %v", err)
	}
}

func TestUntrustedHarnessURL(t *testing.T) {
	w, g := buildGraphRepo(t, func(r *repo) *world { return newWorld(t, r) }, "")
	// No terminal (no Confirm) and no --yes: a clear error, nothing but the
	// harness itself fetched.
	_, err := Resolve(context.Background(), g.harnessURL, w.opts())
	if !errors.Is(err, ErrNotConfirmed) || !strings.Contains(err.Error(), "--yes") || !strings.Contains(err.Error(), "github.test") {
		t.Fatalf("err = %v", err)
	}
	if n := len(w.scanner.Scanned()); n != 1 {
		t.Errorf("fetched %d resources before confirmation, want only the harness", n)
	}
	// A prompt that says no.
	o := w.opts()
	var prompt string
	o.Confirm = func(p string) (bool, error) { prompt = p; return false, nil }
	if _, err := Resolve(context.Background(), g.harnessURL, o); !errors.Is(err, ErrNotConfirmed) {
		t.Fatalf("declined: err = %v", err)
	}
	if !strings.Contains(prompt, "Continue? [y/N]") || !strings.Contains(prompt, "references resources from: github.test") {
		t.Errorf("prompt = %q", prompt)
	}
	// Yes at the prompt.
	o.Confirm = func(string) (bool, error) { return true, nil }
	if _, err := Resolve(context.Background(), g.harnessURL, o); err != nil {
		t.Fatal(err)
	}
	// A trusted prefix needs no confirmation at all.
	o.Confirm = func(string) (bool, error) { t.Error("asked under a trusted prefix"); return false, nil }
	w.cfg.Security.RemoteResources.TrustedHarnessPrefixes = []string{w.prefix() + "blob/main/harness/"}
	if _, err := Resolve(context.Background(), g.harnessURL, o); err != nil {
		t.Fatal(err)
	}
	// Unpinned and disallowed-host harness URLs are refused up front.
	if _, err := Resolve(context.Background(), w.blob("harness/h.yaml"), o); !errors.Is(err, ref.ErrMissingDigest) {
		t.Errorf("unpinned: %v", err)
	}
	if _, err := Resolve(context.Background(), "https://evil.example/h.yaml#sha256="+strings.Repeat("1", 64), o); err == nil || !strings.Contains(err.Error(), "allowed_domains") {
		t.Errorf("other host: %v", err)
	}
}

func TestBlockedContentNotCached(t *testing.T) {
	r := newRepo()
	w := newWorld(t, r)
	s := r.skill(t, "skills/bad", nil, map[string]string{"x.md": "EVIL instructions"})
	agent := r.file("agents/a.md", "agent\n")
	h := writeDir(t, map[string]string{"harness/h.yaml": fmt.Sprintf("agent: %s\nskills:\n  - %s\nallowed_remote_resources: [%s]\n",
		pin(w.blob("agents/a.md"), agent), pin(w.tree("skills/bad"), s), w.prefix())})
	w.srv.AddRepo(w.key, r.Files)
	_, err := Resolve(context.Background(), h+"/harness/h.yaml", w.opts())
	if !errors.Is(err, ErrScanBlocked) {
		t.Fatalf("err = %v", err)
	}
	if _, err := w.store.Get(s); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("blocked skill was cached: %v", err)
	}
}

// TestRemoteBase: a local harness whose base is remote; the base's relative
// references resolve against its URL and are audited as base_resource
// (its skills as base_skill).
func TestRemoteBase(t *testing.T) {
	r := newRepo()
	w := newWorld(t, r)
	s := r.skill(t, "skills/b", nil, nil)
	agent := r.file("agents/a.md", "agent\n")
	base := r.file("bases/base.yaml", fmt.Sprintf("agent: ../agents/a.md#sha256=%s\nskills:\n  - ../skills/b#sha256=%s\n", agent, s))
	w.srv.AddRepo(w.key, r.Files)
	dir := writeDir(t, map[string]string{
		"harness/h.yaml":        fmt.Sprintf("base: %s\nallowed_remote_resources: [%s]\nskills: [skills/local]\n", pin(w.blob("bases/base.yaml"), base), w.prefix()),
		"skills/local/SKILL.md": skillMD(),
	})
	res, err := Resolve(context.Background(), dir+"/harness/h.yaml", w.opts())
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, e := range w.audit.entries {
		types[e.URL] = e.FetchType
	}
	want := map[string]string{w.blob("bases/base.yaml"): FetchBaseResource, w.blob("agents/a.md"): FetchBaseResource, w.tree("skills/b"): FetchBaseSkill}
	for u, ft := range want {
		if types[u] != ft {
			t.Errorf("%s audited as %q, want %q (all: %v)", u, types[u], ft, types)
		}
	}
	var fields []string
	for _, n := range res.Graph.Nodes {
		fields = append(fields, n.Field+"="+n.Kind)
	}
	if strings.Join(fields, " ") != "base=base agent=agent skills[0]=skill skills[1]=skill" {
		t.Errorf("nodes: %v", fields)
	}
}
