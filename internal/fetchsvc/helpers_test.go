package fetchsvc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/fetchsvc"
	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/resolve"
	"github.com/fullsend-ai/fullsend/internal/resolve/resolvetest"
	"github.com/fullsend-ai/fullsend/internal/runtime/runtimetest"
	"github.com/fullsend-ai/fullsend/internal/syncbuf"
)

// repo is a forge repository of skills.
type repo struct{ *resolvetest.Repo }

func newRepo() *repo { return &repo{resolvetest.NewRepo()} }

// skill adds dir with a SKILL.md (name, deps) and extra files; it returns
// the tree hash.
func (r *repo) skill(t testing.TB, dir, name string, deps []string, extra map[string]string) ref.Digest {
	t.Helper()
	return r.Skill(t, dir, name, deps, extra)
}

var pin = resolvetest.Pin

// world is a fake forge, a cache, an audit log and a fake sandbox.
type world struct {
	t         testing.TB
	srv       *forgetest.Server
	key       string
	cfg       *config.Config
	cacheDir  string
	store     *cas.Store
	scanner   *resolvetest.Scanner
	auditPath string
	sess      *runtimetest.Session
	log       syncbuf.Buffer
	netCalls  atomic.Int64
	traceID   string
}

func newWorld(t testing.TB, r *repo) *world {
	t.Helper()
	srv := forgetest.NewGitHub(t, forgetest.Repos{"o/r@main": r.Files, "evil/r@main": r.Files})
	dir := t.TempDir()
	store, err := cas.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &world{t: t, srv: srv, key: "o/r@main", cfg: srv.OrgConfig("https://"+srv.WebHost()+"/", "https://example.test/lib/"),
		cacheDir: dir, store: store, scanner: &resolvetest.Scanner{RequireRemote: true},
		auditPath: audit.Path(dir), sess: runtimetest.NewSession(t), traceID: "trace-" + strings.ReplaceAll(t.Name(), "/", "-")}
}

func (w *world) tree(path string) string { return w.srv.TreeURL(w.key, path) }
func (w *world) prefix() string          { return "https://" + w.srv.WebHost() + "/o/r/" }

func (w *world) options() fetchsvc.Options {
	return fetchsvc.Options{
		Config:  w.cfg,
		Allowed: []string{w.prefix(), "https://example.test/lib/"},
		Store:   w.store,
		Scanner: w.scanner,
		Audit:   audit.Open(w.auditPath),
		TraceID: w.traceID,
		Log:     &w.log,
		Network: func() (*resolve.Network, error) {
			w.netCalls.Add(1)
			return resolve.NewNetwork(w.cfg, w.srv.Getenv(""), w.srv.Reach), nil
		},
	}
}

// lintService is the usual start of a test: a world whose repository
// holds one skill, skills/lint, named name with extra files, and a service
// started with the world's options; it returns the skill's tree hash too.
func lintService(t testing.TB, name string, extra map[string]string) (*world, *fetchsvc.Server, ref.Digest) {
	t.Helper()
	r := newRepo()
	d := r.skill(t, "skills/lint", name, nil, extra)
	w := newWorld(t, r)
	return w, w.start(w.options()), d
}

// start starts a service with o, attached to the world's session.
func (w *world) start(o fetchsvc.Options) *fetchsvc.Server {
	w.t.Helper()
	return w.attach(fetchsvc.Start(context.Background(), o))
}

// startAllowed starts a service through StartIfAllowed for a harness with
// the extra lines, attached to the world's session.
func (w *world) startAllowed(extra string) *fetchsvc.Server {
	w.t.Helper()
	return w.attach(fetchsvc.StartIfAllowed(context.Background(), w.harness(extra), w.options()))
}

// attach fails the test on err, or attaches s to the world's session and
// closes it when the test ends.
func (w *world) attach(s *fetchsvc.Server, err error) *fetchsvc.Server {
	w.t.Helper()
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { s.Close() })
	s.Attach(w.sess, nil)
	return s
}

// harness parses a harness with the world's allowlist and extra lines;
// the service reads only its settings, never a reference, so it stands
// for a resolved one as is.
func (w *world) harness(extra string) *harness.Materialized {
	w.t.Helper()
	y := fmt.Sprintf("agent: agents/a.md\nallowed_remote_resources:\n  - %s\n  - https://example.test/lib/\n%s", w.prefix(), extra)
	h, err := harness.Parse("h.yaml", []byte(y))
	if err != nil {
		w.t.Fatal(err)
	}
	return harness.Materialize(h)
}

// auditEntries reads the audit log (none when it does not exist).
func (w *world) auditEntries() []audit.Entry {
	w.t.Helper()
	data, err := os.ReadFile(w.auditPath)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		w.t.Fatal(err)
	}
	var out []audit.Entry
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e audit.Entry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			w.t.Fatalf("audit line %q: %v", l, err)
		}
		out = append(out, e)
	}
	return out
}

// answer is one HTTP exchange with the service.
type answer struct {
	status int
	ok     fetchsvc.Response
	err    fetchsvc.ErrorBody
	raw    string
}

// post sends POST Path with the given Authorization header value ("" =
// none) and body.
func post(t testing.TB, s *fetchsvc.Server, auth, body string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+s.Addr()+fetchsvc.Path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, raw: string(b)}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, &a.ok); err != nil {
			t.Fatalf("answer %s: %v", b, err)
		}
	} else if err := json.Unmarshal(b, &a.err); err != nil {
		t.Fatalf("error answer %s: %v", b, err)
	}
	return a
}

// fetchURL asks s for u with the right token.
func fetchURL(t testing.TB, s *fetchsvc.Server, u string) answer {
	t.Helper()
	body, _ := json.Marshal(fetchsvc.Request{URL: u})
	return post(t, s, "Bearer "+s.Token(), string(body))
}

func (a answer) want(t testing.TB, status int, code string) {
	t.Helper()
	if a.status != status || (code != "" && a.err.Error.Code != code) {
		t.Fatalf("answer %d %s, want %d %s", a.status, a.raw, status, code)
	}
	if a.status != http.StatusOK {
		t.Logf("%d %s: %s", a.status, a.err.Error.Code, a.err.Error.Message)
	}
}

// wantMessage checks that the error message names each of parts.
func (a answer) wantMessage(t testing.TB, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(a.err.Error.Message, p) {
			t.Errorf("message %q lacks %q", a.err.Error.Message, p)
		}
	}
}

// sandboxFile reads a file of the fake sandbox ("" when missing).
func (w *world) sandboxFile(p string) (string, bool) {
	b, err := os.ReadFile(w.sess.HostPath(p))
	if err != nil {
		return "", false
	}
	return string(b), true
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

var _ = filepath.Join

// cachedSkills puts n skills of four files (SKILL.md with 600 bytes of
// guidance, a script, a 2 KiB asset, a README) into the world's cache
// and returns their pinned tree URLs.
func (w *world) cachedSkills(tb testing.TB, n int) []string {
	tb.Helper()
	var urls []string
	for i := range n {
		dir := fmt.Sprintf("skills/s%03d", i)
		files := map[string][]byte{
			"SKILL.md":          fmt.Appendf(nil, "---\nname: s%03d\ndescription: skill %d\n---\n# s%03d\n%s", i, i, i, strings.Repeat("Some guidance.\n", 40)),
			"scripts/run.sh":    []byte("#!/bin/sh\necho run\n"),
			"assets/a/data.txt": []byte(strings.Repeat("x", 2048)),
			"README.md":         []byte("readme\n"),
		}
		d, err := cas.TreeHash(files)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.store.PutTree(d, cas.Metadata{URL: w.tree(dir)}, files); err != nil {
			tb.Fatal(err)
		}
		urls = append(urls, pin(w.tree(dir), d))
	}
	return urls
}

// concurrentStatuses sends count concurrent fetches of u to s and counts
// the answers by HTTP status.
func concurrentStatuses(t *testing.T, s *fetchsvc.Server, u string, count int) map[int]int {
	t.Helper()
	body, _ := json.Marshal(fetchsvc.Request{URL: u})
	var wg sync.WaitGroup
	codes := make(chan int, count)
	for range count {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, "http://"+s.Addr()+fetchsvc.Path, strings.NewReader(string(body)))
			req.Header.Set("Authorization", "Bearer "+s.Token())
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	wg.Wait()
	close(codes)
	got := map[int]int{}
	for c := range codes {
		got[c]++
	}
	return got
}
