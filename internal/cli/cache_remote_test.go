package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
	"github.com/fullsend-ai/fullsend/internal/ocicache/ocicachetest"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// TestCachePushAndRemote: `cache push --from-lock` fills the shared cache
// named by config.yaml cache.oci with what the lock pins, `cache ls
// --remote` lists it, and a runner with an empty workspace then resolves
// the harness from the registry without one forge request (audited with
// source "registry").
func TestCachePushAndRemote(t *testing.T) {
	reg := ocicachetest.New(t)
	repository := reg.Repository("fullsend/cache")
	srv := forgetest.NewGitHub(t, nil)
	prefix := "https://" + srv.WebHost() + "/o/r/"
	agent := "---\nname: a\n---\nagent\n"
	skill := map[string][]byte{"SKILL.md": []byte("---\nname: s\ndescription: s\n---\nskill\n"), "run.sh": []byte("echo s\n")}
	skillHash, err := cas.TreeHash(skill)
	if err != nil {
		t.Fatal(err)
	}
	srv.AddRepo("o/r@main", map[string][]byte{"agents/a.md": []byte(agent), "skills/s/SKILL.md": skill["SKILL.md"], "skills/s/run.sh": skill["run.sh"]})
	dir := t.TempDir()
	writeConfig := func(cache string) {
		if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(forgeConfigYAML(srv, prefix, cache)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeConfig(fmt.Sprintf("cache:\n  oci: {repository: %s, plain_http: true}\n", repository))
	h := fmt.Sprintf("agent: %s#sha256=%s\nskills:\n  - %s#sha256=%s\nallowed_remote_resources: [%s]\n",
		srv.BlobURL("o/r@main", "agents/a.md"), ref.SHA256([]byte(agent)), srv.TreeURL("o/r@main", "skills/s"), skillHash, prefix)
	if err := os.MkdirAll(filepath.Join(dir, "harness"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "harness", "h.yaml"), []byte(h), 0o644); err != nil {
		t.Fatal(err)
	}
	testOnlyFetchOptions = srv.Reach
	defer func() { testOnlyFetchOptions = nil }()
	ws := t.TempDir()
	cli := func(ws string, args ...string) (int, string, string) {
		return runCacheCLI(t, ws, "", append([]string{"--fullsend-dir", dir}, args...)...)
	}

	if code, _, stderr := cli(ws, "cache", "push", "harness/h.yaml"); code != ExitUsage || !strings.Contains(stderr, "--from-lock") {
		t.Fatalf("push without --from-lock: exit %d %s", code, stderr)
	}
	if code, _, stderr := cli(ws, "cache", "push", "--from-lock", "harness/h.yaml"); code != 1 || !strings.Contains(stderr, "no lock file") || !strings.Contains(stderr, "fullsend") {
		t.Fatalf("push without a lock: exit %d %s", code, stderr)
	}
	if code, _, stderr := cli(ws, "lock", "harness/h.yaml"); code != 0 {
		t.Fatalf("lock: exit %d %s", code, stderr)
	}
	// A harness changed since its lock entry: nothing is pushed.
	hp := filepath.Join(dir, "harness", "h.yaml")
	if err := os.WriteFile(hp, []byte(h+"# edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg.ResetRequests()
	if code, stdout, stderr := cli(ws, "cache", "push", "--from-lock", "harness/h.yaml"); code != 1 || !strings.Contains(stderr, "lock") || reg.RequestCount() != 0 {
		t.Fatalf("push with a stale lock: exit %d, %d registry requests\n%s%s", code, reg.RequestCount(), stdout, stderr)
	}
	if err := os.WriteFile(hp, []byte(h), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cli(ws, "cache", "push", "--from-lock", "harness/h.yaml")
	if code != 0 || !strings.Contains(stdout, "2 pushed, 0 already there, 0 failed") {
		t.Fatalf("push: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = cli(ws, "cache", "push", "--from-lock", "harness/h.yaml")
	if code != 0 || !strings.Contains(stdout, "0 pushed, 2 already there") {
		t.Fatalf("second push: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = cli(ws, "cache", "ls", "--remote", "--json")
	var listed []remoteEntryJSON
	if code != 0 || json.Unmarshal([]byte(stdout), &listed) != nil || len(listed) != 2 || listed[0].SHA256 != string(skillHash) || listed[0].Tag != "tree-"+string(skillHash) || listed[1].Type != "file" {
		t.Fatalf("ls --remote: exit %d %s %s", code, stdout, stderr)
	}

	// Another runner: empty workspace, forge stopped.
	srv.Fail(forgetest.Fault{Status: 404})
	srv.ResetRequests()
	ws2 := t.TempDir()
	code, stdout, stderr = cli(ws2, "resolve", "--json", "harness/h.yaml")
	if code != 0 || srv.RequestCount() != 0 || strings.Contains(stdout, `"cache_hit": true`) {
		t.Fatalf("runner B: exit %d, %d forge requests\n%s%s", code, srv.RequestCount(), stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(cas.DefaultDir(ws2, nil), "audit.jsonl"))
	if err != nil || bytes.Count(b, []byte(`"source":"registry"`)) != 2 {
		t.Fatalf("runner B audit: %v\n%s", err, b)
	}

	// A re-tagged manifest is replaced by the next push.
	other := ocicachetest.GetManifest(t, reg.Host, "fullsend/cache", "file-"+string(ref.SHA256([]byte(agent))))
	ocicachetest.PushManifest(t, reg.Host, "fullsend/cache", "tree-"+string(skillHash), other)
	srv.ClearFaults()
	code, stdout, stderr = cli(ws, "cache", "push", "--from-lock", "harness/h.yaml")
	if code != 0 || !strings.Contains(stdout, "replaced") || !strings.Contains(stdout, "1 pushed, 1 already there") {
		t.Fatalf("push over a forged entry: exit %d\n%s%s", code, stdout, stderr)
	}

	// No cache.oci: a one-line error naming the key.
	writeConfig("")
	if code, _, stderr := cli(ws, "cache", "ls", "--remote"); code != 1 || !strings.Contains(stderr, "cache.oci.repository") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("ls --remote without cache.oci: exit %d %q", code, stderr)
	}
}
