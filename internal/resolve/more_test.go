package resolve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/forge"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// TestRealFullsendPinForms: raw.githubusercontent-style file URLs and
// tree skill URLs, as real fullsend writes them, resolve unchanged.
func TestRealFullsendPinForms(t *testing.T) {
	w, s, agent := rustWorld(t)
	raw := w.srv.RawURL(w.key, "agents/a.md")
	rawPrefix := "https://" + w.srv.RawHost() + "/o/r/"
	w.cfg.AllowedRemoteResources = append(w.cfg.AllowedRemoteResources, rawPrefix)
	dir := writeDir(t, map[string]string{"harness/h.yaml": fmt.Sprintf("agent: %s\nskills:\n  - %s\nallowed_remote_resources: [%s, %s]\n",
		pin(raw, agent), pin(w.tree("skills/rust"), s), w.prefix(), rawPrefix)})
	res, err := Resolve(context.Background(), filepath.Join(dir, "harness/h.yaml"), w.opts())
	if err != nil {
		t.Fatal(err)
	}
	if n := nodeByURL(res.Graph, raw); n == nil || n.Type != cas.TypeFile || n.AllowedBy != "allowed_remote_resources[1]" {
		t.Fatalf("raw agent node: %+v", n)
	}
	if w.srv.CountRequests("/o/r/main/agents/a.md") != 1 {
		t.Errorf("raw file not fetched from the raw host: %+v", w.srv.Requests())
	}
	if n := nodeByURL(res.Graph, w.tree("skills/rust")); n == nil || len(n.Files) != 2 {
		t.Fatalf("tree skill node: %+v", n)
	}
}

// TestSameContentFetchedOnce: two skill URLs serving identical trees share
// one cache entry, but each URL is fetched once: that one URL serves a hash
// says nothing about the other (vouch.go).
func TestSameContentFetchedOnce(t *testing.T) {
	r := newRepo()
	w := newWorld(t, r)
	x := r.skill(t, "skills/x", nil, nil)
	// Same content at another path.
	for k, v := range r.Files {
		if strings.HasPrefix(k, "skills/x/") {
			r.Files["skills/y/"+strings.TrimPrefix(k, "skills/x/")] = v
		}
	}
	agent := r.file("agents/a.md", "agent\n")
	w.srv.AddRepo(w.key, r.Files)
	dir := writeDir(t, map[string]string{"harness/h.yaml": fmt.Sprintf("agent: %s\nskills:\n  - %s\n  - %s\nallowed_remote_resources: [%s]\n",
		pin(w.blob("agents/a.md"), agent), pin(w.tree("skills/x"), x), pin(w.tree("skills/y"), x), w.prefix())})
	w.srv.SetLatency(20 * time.Millisecond)
	res, err := Resolve(context.Background(), filepath.Join(dir, "harness/h.yaml"), w.opts())
	if err != nil {
		t.Fatal(err)
	}
	if c := w.srv.CountRequests("/git/trees/"); c != 2 {
		t.Errorf("%d tree listings for two URLs of one tree hash, want 2", c)
	}
	var paths []string
	for _, n := range res.Graph.Nodes {
		if n.Type == cas.TypeDirectory {
			paths = append(paths, n.LocalPath)
		}
	}
	if len(paths) != 2 || paths[0] != paths[1] || len(res.Graph.Nodes) != 3 {
		t.Errorf("%d nodes, directory paths %q: want one cache entry for both", len(res.Graph.Nodes), paths)
	}
	// Warm, both URLs are confirmed: no forge traffic.
	before := len(w.srv.Requests())
	if _, err := Resolve(context.Background(), filepath.Join(dir, "harness/h.yaml"), w.opts()); err != nil {
		t.Fatal(err)
	}
	if after := len(w.srv.Requests()); after != before {
		t.Errorf("warm resolution sent %d forge requests", after-before)
	}
}

// countingForge serves trees from memory and records the highest number of
// concurrent fetches.
type countingForge struct {
	trees     map[string]map[string][]byte
	cur, peak atomic.Int32
	mu        sync.Mutex
	calls     int
}

func (c *countingForge) FetchTree(_ context.Context, loc forge.Location) (map[string][]byte, error) {
	n := c.cur.Add(1)
	defer c.cur.Add(-1)
	for {
		p := c.peak.Load()
		if n <= p || c.peak.CompareAndSwap(p, n) {
			break
		}
	}
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	return c.trees[loc.Path], nil
}

func (c *countingForge) FetchFile(_ context.Context, loc forge.Location) ([]byte, error) {
	return []byte("agent\n"), nil
}

func TestBoundedConcurrencyAndProgress(t *testing.T) {
	r := newRepo()
	w := newWorld(t, r)
	cf := &countingForge{trees: map[string]map[string][]byte{}}
	var skills []string
	for i := 0; i < 8; i++ {
		tree := map[string][]byte{"SKILL.md": []byte(fmt.Sprintf("---\nname: k%d\n---\nbody %d\n", i, i))}
		d, _ := cas.TreeHash(tree)
		cf.trees[fmt.Sprintf("skills/k%d", i)] = tree
		skills = append(skills, "  - "+pin(w.tree(fmt.Sprintf("skills/k%d", i)), d))
	}
	dir := writeDir(t, map[string]string{"harness/h.yaml": fmt.Sprintf("agent: %s\nskills:\n%s\nallowed_remote_resources: [%s]\n",
		pin(w.blob("agents/a.md"), ref.SHA256([]byte("agent\n"))), strings.Join(skills, "\n"), w.prefix())})
	o := w.opts()
	o.Concurrency = 3
	o.Network = func() (*Network, error) { return &Network{Forge: cf}, nil }
	var progress bytes.Buffer
	o.Progress = &progress
	if _, err := Resolve(context.Background(), filepath.Join(dir, "harness/h.yaml"), o); err != nil {
		t.Fatal(err)
	}
	if p := cf.peak.Load(); p > 3 || p < 2 {
		t.Errorf("peak concurrent fetches %d, want 2..3", p)
	}
	if lines := strings.Count(progress.String(), "fullsend: fetched "); lines != 9 {
		t.Errorf("%d progress lines, want 9:\n%s", lines, progress.String())
	}
}

// TestDependencyRules: every remote edge deep in the graph needs a pin and
// an allowed prefix; directories need a forge; fetched content needs a
// scanner.
func TestDependencyRules(t *testing.T) {
	for name, tc := range map[string]struct {
		dep       string
		noScanner bool
		want      string
	}{
		"unpinned":           {dep: "../other", want: "sha256"},
		"outside allowlist":  {dep: "https://elsewhere.test/skills/x#sha256=" + strings.Repeat("1", 64), want: "does not match any allowed_remote_resources"},
		"absolute in remote": {dep: "/etc/passwd", want: "local"},
		"no scanner":         {noScanner: true, want: "no scanner configured"},
	} {
		t.Run(name, func(t *testing.T) {
			r := newRepo()
			w := newWorld(t, r)
			var deps []string
			if tc.dep != "" {
				deps = []string{tc.dep}
			}
			s := r.skill(t, "skills/s", deps, nil)
			r.skill(t, "skills/other", nil, nil)
			agent := r.file("agents/a.md", "agent\n")
			w.srv.AddRepo(w.key, r.Files)
			dir := writeDir(t, map[string]string{"harness/h.yaml": fmt.Sprintf("agent: %s\nskills:\n  - %s\nallowed_remote_resources: [%s]\n",
				pin(w.blob("agents/a.md"), agent), pin(w.tree("skills/s"), s), w.prefix())})
			o := w.opts()
			if tc.noScanner {
				o.Scanner = nil
			}
			_, err := Resolve(context.Background(), filepath.Join(dir, "harness/h.yaml"), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSkillDirectoryNeedsForge(t *testing.T) {
	w := newWorld(t, newRepo())
	w.cfg.AllowedRemoteResources = append(w.cfg.AllowedRemoteResources, "https://elsewhere.test/")
	dir := writeDir(t, map[string]string{"agents/a.md": "a\n", "harness/h.yaml": "agent: agents/a.md\nskills:\n  - https://elsewhere.test/skills/x#sha256=" + strings.Repeat("1", 64) + "\nallowed_remote_resources: [https://elsewhere.test/]\n"})
	_, err := Resolve(context.Background(), filepath.Join(dir, "harness/h.yaml"), w.opts())
	if !errors.Is(err, ErrNotForge) || w.netUsed != 0 {
		t.Fatalf("err = %v (network built %d times)", err, w.netUsed)
	}
}
