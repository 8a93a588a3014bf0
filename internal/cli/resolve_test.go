package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/corpustest"
	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// copyLibrary copies an agents library into a temp fullsend dir (lock
// tests write lock.yaml there).
func copyLibrary(t *testing.T, src string) string {
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, fi.Mode())
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// libraryCLI returns a runner of fullsend with the workspace ws and the
// fullsend dir dir.
func libraryCLI(t *testing.T, ws, dir string) func(args ...string) (int, string, string) {
	return func(args ...string) (int, string, string) {
		t.Helper()
		return runCacheCLI(t, ws, "", append([]string{"--fullsend-dir", dir}, args...)...)
	}
}

type resolveJSON struct {
	Harness   map[string]any   `json:"harness"`
	Resources []map[string]any `json:"resources"`
}

func TestResolveJSONShape(t *testing.T) {
	corpustest.Each(t, testResolveJSONShape)
}

func testResolveJSONShape(t *testing.T, lib corpustest.Library) {
	main := "harness/" + lib.Main + ".yaml"
	fullsend := libraryCLI(t, t.TempDir(), copyLibrary(t, lib.Dir))
	code, stdout, stderr := fullsend("resolve", "--json", "--forge", "github", main)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var v resolveJSON
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	if v.Harness["source"] != main || !strings.HasSuffix(v.Harness["agent"].(string), "/agents/"+lib.Main+".md") {
		t.Errorf("harness = %v", v.Harness)
	}
	keys := []string{"field", "ref", "url", "local_path", "sha256", "type", "remote", "cache_hit", "depth", "parent"}
	if len(v.Resources) < 10 {
		t.Fatalf("%d resources", len(v.Resources))
	}
	for _, r := range v.Resources {
		if len(r) != len(keys) {
			t.Fatalf("resource keys %v, want exactly %v", r, keys)
		}
		for _, k := range keys {
			if _, ok := r[k]; !ok {
				t.Fatalf("resource lacks %q: %v", k, r)
			}
		}
	}
	// Human tree view by default.
	code, stdout, _ = fullsend("resolve", main)
	if code != 0 || !strings.Contains(stdout, "├── agent: agents/"+lib.Main+".md  file sha256:") {
		t.Fatalf("tree view (exit %d):\n%s", code, stdout)
	}
}

func TestGraphFormats(t *testing.T) {
	corpustest.Each(t, testGraphFormats)
}

func testGraphFormats(t *testing.T, lib corpustest.Library) {
	h := "harness/" + lib.AllForges + ".yaml"
	fullsend := libraryCLI(t, t.TempDir(), copyLibrary(t, lib.Dir))
	code, stdout, stderr := fullsend("graph", h)
	if code != 0 || !strings.HasPrefix(stdout, "digraph fullsend {") || !strings.Contains(stdout, `[label="agent"]`) || !strings.Contains(stdout, "fillcolor=palegreen") {
		t.Fatalf("dot (exit %d, %s):\n%s", code, stderr, stdout)
	}
	code, stdout, _ = fullsend("graph", "--format", "mermaid", h)
	if code != 0 || !strings.HasPrefix(stdout, "flowchart LR") || !strings.Contains(stdout, `-->|"policy"|`) {
		t.Fatalf("mermaid (exit %d):\n%s", code, stdout)
	}
	if code, _, _ := fullsend("graph", "--format", "png", h); code != ExitUsage {
		t.Fatalf("bad format: exit %d", code)
	}
}

func TestLockCommand(t *testing.T) {
	corpustest.Each(t, testLockCommand)
}

func testLockCommand(t *testing.T, lib corpustest.Library) {
	dir := copyLibrary(t, lib.Dir)
	main, other := "harness/"+lib.Main+".yaml", "harness/"+lib.AllForges+".yaml"
	fullsend := libraryCLI(t, t.TempDir(), dir)
	lockPath := filepath.Join(dir, "lock.yaml")
	testOnlyNow = func() time.Time { return time.Date(2026, 5, 12, 14, 30, 0, 0, time.UTC) }
	defer func() { testOnlyNow = time.Now }()
	// --frozen on a harness that is not locked yet fails and writes nothing.
	if code, _, stderr := fullsend("lock", "--frozen", main); code != 1 || !strings.Contains(stderr, "--frozen") {
		t.Fatalf("frozen unlocked: exit %d %s", code, stderr)
	}
	if _, err := os.Stat(lockPath); !os.IsNotExist(err) {
		t.Fatalf("lock written by a failed --frozen: %v", err)
	}
	for _, h := range []string{main, other} {
		if code, _, stderr := fullsend("lock", h); code != 0 {
			t.Fatalf("lock %s: exit %d %s", h, code, stderr)
		}
	}
	first, _ := os.ReadFile(lockPath)
	if !bytes.Contains(first, []byte("  "+lib.Main+":\n    source: "+main+"\n")) || !bytes.Contains(first, []byte("forge.github.skills:")) {
		t.Fatalf("lock.yaml:\n%s", first)
	}
	// Again, later: byte-identical.
	testOnlyNow = func() time.Time { return time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC) }
	for _, args := range [][]string{{"lock", main}, {"lock", "--update", main}, {"lock", "--frozen", other}} {
		if code, _, stderr := fullsend(args...); code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, stderr)
		}
		again, _ := os.ReadFile(lockPath)
		if !bytes.Equal(first, again) {
			t.Fatalf("%v changed an up-to-date lock:\n%s\n---\n%s", args, first, again)
		}
	}
	// resolve uses the lock: clean, then a stale warning naming the fix.
	if code, _, stderr := fullsend("resolve", main); code != 0 || strings.Contains(stderr, "warning") {
		t.Fatalf("resolve with lock: exit %d %s", code, stderr)
	}
	h := filepath.Join(dir, main)
	b, _ := os.ReadFile(h)
	if err := os.WriteFile(h, append(b, []byte("\n# edited\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := fullsend("resolve", main)
	// The fix names --fullsend-dir: without it the command would not find
	// the harness from the current directory.
	if code != 0 || !strings.Contains(stderr, "fullsend: warning: "+main+" has changed since lock.yaml was written; run `fullsend --fullsend-dir "+dir+" lock --update "+main+"`") {
		t.Fatalf("stale: exit %d %s", code, stderr)
	}
	code, _, stderr = fullsend("resolve", "--frozen", main)
	if code != 1 || !strings.Contains(oneStderrLine(t, stderr), "fullsend --fullsend-dir "+dir+" lock --update "+main) {
		t.Fatalf("frozen stale: exit %d %s", code, stderr)
	}
	// lock without --update refuses to move pins; the file is untouched.
	if code, _, stderr := fullsend("lock", main); code != 1 || !strings.Contains(stderr, "--update") {
		t.Fatalf("lock stale: exit %d %s", code, stderr)
	}
	if again, _ := os.ReadFile(lockPath); !bytes.Equal(first, again) {
		t.Fatal("failed lock changed the file")
	}
	if code, _, stderr := fullsend("lock", "--update", main); code != 0 {
		t.Fatalf("lock --update: exit %d %s", code, stderr)
	}
	if code, _, stderr := fullsend("resolve", "--frozen", main); code != 0 {
		t.Fatalf("frozen after update: exit %d %s", code, stderr)
	}
}

// TestResolveRemoteCLI resolves a harness URL served by the fake forge:
// no terminal and no --yes is an error; --yes works; --offline then needs
// no network and a cold --offline names the missing URL.
func TestResolveRemoteCLI(t *testing.T) {
	agent := "---\nname: a\n---\nagent\n"
	srv := forgetest.NewGitHub(t, nil)
	prefix := "https://" + srv.WebHost() + "/o/r/"
	harness := fmt.Sprintf("agent: agents/a.md#sha256=%s\nallowed_remote_resources: [%s]\n", ref.SHA256([]byte(agent)), prefix)
	srv.AddRepo("o/r@main", map[string][]byte{"agents/a.md": []byte(agent), "h.yaml": []byte(harness)})
	u := srv.BlobURL("o/r@main", "h.yaml") + "#sha256=" + string(ref.SHA256([]byte(harness)))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(forgeConfigYAML(srv, prefix, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	testOnlyFetchOptions = srv.Reach
	defer func() { testOnlyFetchOptions = nil }()
	ws := t.TempDir()
	fullsend := libraryCLI(t, ws, dir)
	code, _, stderr := fullsend("resolve", "--offline", "--yes", u)
	if code != 1 || !strings.Contains(stderr, srv.BlobURL("o/r@main", "h.yaml")) || !strings.Contains(stderr, "offline") || srv.RequestCount() != 0 {
		t.Fatalf("cold offline: exit %d %s (%d requests)", code, stderr, srv.RequestCount())
	}
	code, _, stderr = fullsend("resolve", u)
	if code != 1 || !strings.Contains(oneStderrLine(t, stderr), "--yes") {
		t.Fatalf("no terminal, no --yes: exit %d %s", code, stderr)
	}
	code, stdout, stderr := fullsend("resolve", "--json", "--yes", u)
	if code != 0 {
		t.Fatalf("--yes: exit %d %s", code, stderr)
	}
	var v resolveJSON
	if err := json.Unmarshal([]byte(stdout), &v); err != nil || len(v.Resources) != 1 || v.Resources[0]["remote"] != true || v.Resources[0]["cache_hit"] != false {
		t.Fatalf("json: %v %s", err, stdout)
	}
	// Audit log beside the cache.
	if b, err := os.ReadFile(filepath.Join(cas.DefaultDir(ws, nil), "audit.jsonl")); err != nil || !bytes.Contains(b, []byte(`"fetch_type":"static"`)) {
		t.Fatalf("audit: %v %s", err, b)
	}
	srv.ResetRequests()
	code, stdout, stderr = fullsend("resolve", "--json", "--offline", "--yes", u)
	if code != 0 || srv.RequestCount() != 0 || !strings.Contains(stdout, `"cache_hit": true`) {
		t.Fatalf("warm offline: exit %d %s %d requests", code, stderr, srv.RequestCount())
	}
}

// forgeConfigYAML is an org config.yaml reaching the fake forge srv as a
// user would write it: prefix allowed, srv's host names in allowed_domains,
// loopback in allowed_private_networks, srv as a GitHub forge whose token
// is in X_TOKEN; extra is appended (further top-level keys).
func forgeConfigYAML(srv *forgetest.Server, prefix, extra string) string {
	f := srv.Forge()
	return fmt.Sprintf(`version: "1"
allowed_remote_resources: [%s]
security:
  remote_resources:
    allowed_domains: [%s]
    allowed_private_networks: [127.0.0.0/8]
forges:
  - {host: %q, type: github, api_url: %q, token_env: X_TOKEN}
%s`, prefix, strings.Join(srv.FetchOptions().AllowedDomains, ", "), f.Host, f.APIURL, extra)
}
