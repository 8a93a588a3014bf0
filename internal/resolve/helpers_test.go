package resolve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// fakeScanner records what it scanned and blocks content containing
// "EVIL".
type fakeScanner struct {
	mu      sync.Mutex
	scanned []string
}

func (f *fakeScanner) ScanFiles(_ context.Context, files map[string][]byte, m scan.Meta) (*scan.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	res := &scan.Result{}
	for name, b := range files {
		p := m.Path + "/" + name
		f.scanned = append(f.scanned, p)
		if strings.Contains(string(b), "EVIL") {
			res.Findings = append(res.Findings, scan.Finding{Scanner: "fake", Rule: "fake/evil", Severity: scan.Critical, Path: p, Message: "evil content"})
			res.Blocked = true
		}
	}
	return res, nil
}

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
type repo struct {
	files map[string][]byte
}

func newRepo() *repo { return &repo{files: map[string][]byte{}} }

func (r *repo) file(path, content string) ref.Digest {
	r.files[path] = []byte(content)
	return ref.SHA256([]byte(content))
}

// skill adds a skill directory with a SKILL.md listing deps and extra
// files, and returns its tree hash.
func (r *repo) skill(t testing.TB, dir string, deps []string, extra map[string]string) ref.Digest {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: %s\ndescription: skill %s\n", filepath.Base(dir), dir)
	if len(deps) > 0 {
		b.WriteString("dependencies:\n")
		for _, d := range deps {
			fmt.Fprintf(&b, "  - %q\n", d)
		}
	}
	fmt.Fprintf(&b, "---\n# %s\nDo the %s thing.\n", dir, dir)
	tree := map[string][]byte{"SKILL.md": []byte(b.String())}
	for k, v := range extra {
		tree[k] = []byte(v)
	}
	for k, v := range tree {
		r.files[dir+"/"+k] = v
	}
	d, err := cas.TreeHash(tree)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func pin(u string, d ref.Digest) string { return u + "#sha256=" + string(d) }

// world is a fake forge, a cache and options reaching them.
type world struct {
	t       testing.TB
	srv     *forgetest.Server
	key     string
	cfg     *config.Config
	store   *cas.Store
	scanner *fakeScanner
	audit   *memAudit
	netUsed int
}

func newWorld(t testing.TB, r *repo) *world {
	t.Helper()
	srv := forgetest.NewGitHub(t, forgetest.Repos{"o/r@main": r.files})
	cfg := config.Default()
	cfg.AllowedRemoteResources = []string{"https://" + srv.WebHost() + "/o/"}
	cfg.Forges = []config.Forge{srv.Forge()}
	fo := srv.FetchOptions()
	cfg.Security.RemoteResources.AllowedDomains = fo.AllowedDomains
	cfg.Security.RemoteResources.AllowedPrivateNetworks = fo.AllowedPrivateNetworks
	store, err := cas.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &world{t: t, srv: srv, key: "o/r@main", cfg: cfg, store: store, scanner: &fakeScanner{}, audit: &memAudit{}}
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
			return NewNetwork(w.cfg, w.srv.Getenv(""), func(o *fetch.Options) {
				fo := w.srv.FetchOptions()
				o.Resolver, o.RootCAs = fo.Resolver, fo.RootCAs
			}), nil
		},
	}
}

// requests counts the server's requests whose path contains sub.
func (w *world) requests(sub string) int {
	n := 0
	for _, r := range w.srv.Requests() {
		if strings.Contains(r.Path, sub) {
			n++
		}
	}
	return n
}

// writeDir writes files under a fresh temp dir and returns it.
func writeDir(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
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
	return dir
}

func nodeByURL(g *Graph, u string) *Node {
	for _, n := range g.Nodes {
		if n.URL == u {
			return n
		}
	}
	return nil
}
