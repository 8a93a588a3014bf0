package resolve

import (
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/resolve/resolvetest"
)

type memAudit struct {
	mu      sync.Mutex
	entries []audit.Entry
}

func (m *memAudit) Append(e audit.Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries = append(m.entries, e)
	return nil
}

// repo builds a forge repository whose skills pin each other.
type repo struct{ *resolvetest.Repo }

func newRepo() *repo { return &repo{resolvetest.NewRepo()} }

// skill adds a skill directory named after its last element with a
// SKILL.md listing deps and extra files, and returns its tree hash.
func (r *repo) skill(t testing.TB, dir string, deps []string, extra map[string]string) ref.Digest {
	t.Helper()
	return r.Skill(t, dir, "", deps, extra)
}

func (r *repo) file(path, content string) ref.Digest { return r.File(path, content) }

var pin = resolvetest.Pin

// world is a fake forge, a cache and options reaching them.
type world struct {
	t       testing.TB
	srv     *forgetest.Server
	key     string
	cfg     *config.Config
	store   *cas.Store
	scanner *resolvetest.Scanner
	audit   *memAudit
	netUsed int
}

func newWorld(t testing.TB, r *repo) *world {
	t.Helper()
	srv := forgetest.NewGitHub(t, forgetest.Repos{"o/r@main": r.Files})
	store, err := cas.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &world{t: t, srv: srv, key: "o/r@main", cfg: srv.OrgConfig("https://" + srv.WebHost() + "/o/"), store: store, scanner: &resolvetest.Scanner{}, audit: &memAudit{}}
}

func (w *world) blob(path string) string { return w.srv.BlobURL(w.key, path) }
func (w *world) tree(path string) string { return w.srv.TreeURL(w.key, path) }
func (w *world) prefix() string          { return "https://" + w.srv.WebHost() + "/o/r/" }

func (w *world) opts() Options {
	return Options{
		Config:  w.cfg,
		Store:   w.store,
		Scanner: w.scanner,
		Audit:   w.audit,
		Network: func() (*Network, error) {
			w.netUsed++
			return NewNetwork(w.cfg, w.srv.Getenv(""), w.srv.Reach), nil
		},
	}
}

// rustWorld is a world whose repository holds the skill skills/rust (with
// a script) and the agent agents/a.md; it returns their digests.
func rustWorld(t testing.TB) (w *world, skill, agent ref.Digest) {
	t.Helper()
	r := newRepo()
	w = newWorld(t, r)
	skill = r.skill(t, "skills/rust", nil, map[string]string{"scripts/check.sh": "cargo check"})
	agent = r.file("agents/a.md", "agent\n")
	w.srv.AddRepo(w.key, r.Files)
	return w, skill, agent
}

// writeDir writes files under a fresh temp dir and returns it.
func writeDir(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	return dir
}

// writeFiles writes files (slash-separated paths relative to dir, parent
// directories made as needed) under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := filepath.Join(dir, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(files[k]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func nodeByURL(g *Graph, u string) *Node {
	for _, n := range g.Nodes {
		if n.URL == u {
			return n
		}
	}
	return nil
}
