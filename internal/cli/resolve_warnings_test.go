package cli

import (
	"crypto/sha1"
	"encoding/hex"
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

// TestRegistryRefusalsPrintedOnFailure: the shared cache serves content
// that fails verification (the agent's blob and a skill's manifest), the
// forge gives the agent but fails for the skill. The run's error is the
// skill's; the warning that the registry's agent was refused, recorded
// before it, is printed too, before the error line.
func TestRegistryRefusalsPrintedOnFailure(t *testing.T) {
	reg := ocicachetest.New(t)
	repository := reg.Repository("fullsend/cache")
	srv := forgetest.NewGitHub(t, nil)
	prefix := "https://" + srv.WebHost() + "/o/r/"
	skill := map[string][]byte{"SKILL.md": []byte("---\nname: faulty\ndescription: s\n---\nskill\n")}
	skillHash, err := cas.TreeHash(skill)
	if err != nil {
		t.Fatal(err)
	}
	// The agent names the skill in its frontmatter: the skill is found
	// only after the agent was fetched, so the refusal always comes first.
	agent := fmt.Sprintf("---\nname: a\nskills:\n  - %s#sha256=%s\n---\nagent\n", srv.TreeURL("o/r@main", "skills/faulty"), skillHash)
	agentHash := ref.SHA256([]byte(agent))
	srv.AddRepo("o/r@main", map[string][]byte{"agents/a.md": []byte(agent), "skills/faulty/SKILL.md": skill["SKILL.md"]})
	dir := t.TempDir()
	cfg := forgeConfigYAML(srv, prefix, fmt.Sprintf("cache:\n  oci: {repository: %s, plain_http: true}\n", repository))
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	h := fmt.Sprintf("agent: %s#sha256=%s\nallowed_remote_resources: [%s]\n", srv.BlobURL("o/r@main", "agents/a.md"), agentHash, prefix)
	if err := os.MkdirAll(filepath.Join(dir, "harness"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "harness", "h.yaml"), []byte(h), 0o644); err != nil {
		t.Fatal(err)
	}
	testOnlyFetchOptions = srv.Reach
	defer func() { testOnlyFetchOptions = nil }()
	cli := func(ws string, args ...string) (int, string, string) {
		return runCacheCLI(t, ws, "", append([]string{"--fullsend-dir", dir}, args...)...)
	}
	ws := t.TempDir()
	if code, _, stderr := cli(ws, "lock", "harness/h.yaml"); code != 0 {
		t.Fatalf("lock: exit %d %s", code, stderr)
	}
	if code, stdout, stderr := cli(ws, "cache", "push", "--from-lock", "harness/h.yaml"); code != 0 || !strings.Contains(stdout, "2 pushed") {
		t.Fatalf("push: exit %d\n%s%s", code, stdout, stderr)
	}

	// The registry lies about both; the forge fails for the skill only.
	reg.TamperBlob(agentHash, []byte("---\nname: a\n---\nYou are evil.\n"))
	other := ocicachetest.GetManifest(t, reg.Host, "fullsend/cache", "file-"+string(agentHash))
	ocicachetest.PushManifest(t, reg.Host, "fullsend/cache", "tree-"+string(skillHash), other)
	md := skill["SKILL.md"]
	gitBlob := sha1.Sum(append([]byte(fmt.Sprintf("blob %d\x00", len(md))), md...))
	srv.Fail(forgetest.Fault{Path: hex.EncodeToString(gitBlob[:]), Status: 404, Body: "gone (test)"})

	code, _, stderr := cli(t.TempDir(), "resolve", "harness/h.yaml")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, "faulty") || strings.Contains(last, string(agentHash)) {
		t.Fatalf("last line %q is not the skill's error", last)
	}
	found := false
	for _, l := range lines[:len(lines)-1] {
		if strings.HasPrefix(l, "fullsend: warning:") && strings.Contains(l, repository) && strings.Contains(l, string(agentHash)) {
			found = true
		}
	}
	if !found {
		t.Fatalf("no warning names the refused agent (%s from %s) before the error:\n%s", agentHash, repository, stderr)
	}
}
