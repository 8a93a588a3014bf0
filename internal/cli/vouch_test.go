package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
)

// TestLockRefusesUnconfirmedURL: a skill pin cached through its right URL
// and then named by a misspelled one. Online, resolve and lock fail as
// they would in CI with an empty cache; offline, resolve marks the
// resource unverified (one warning line, "unverified" in --json) and
// `lock --update` refuses to record the pair and leaves lock.yaml alone.
func TestLockRefusesUnconfirmedURL(t *testing.T) {
	skill := map[string][]byte{"skills/x/SKILL.md": []byte("---\nname: x\ndescription: x\n---\nbody\n")}
	d, err := cas.TreeHash(map[string][]byte{"SKILL.md": skill["skills/x/SKILL.md"]})
	if err != nil {
		t.Fatal(err)
	}
	srv := forgetest.NewGitHub(t, nil)
	srv.AddRepo("o/r@main", skill)
	prefix := "https://" + srv.WebHost() + "/o/r/"
	dir := t.TempDir()
	good, bad := srv.TreeURL("o/r@main", "skills/x"), srv.TreeURL("o/r@main", "skills/x-typo")
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("config.yaml", forgeConfigYAML(srv, prefix, ""))
	write("agents/a.md", "agent\n")
	harness := func(u string) string {
		return fmt.Sprintf("agent: agents/a.md\nskills:\n  - %s#sha256=%s\nallowed_remote_resources: [%s]\n", u, d, prefix)
	}
	write("harness/good.yaml", harness(good))
	write("harness/typo.yaml", harness(bad))
	testOnlyFetchOptions = srv.Reach
	defer func() { testOnlyFetchOptions = nil }()
	fullsend := libraryCLI(t, t.TempDir(), dir)
	if code, _, stderr := fullsend("lock", "harness/good.yaml"); code != 0 {
		t.Fatalf("lock good: exit %d %s", code, stderr)
	}
	lockPath := filepath.Join(dir, "lock.yaml")
	before, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}

	online := fmt.Sprintf("fullsend: harness/typo.yaml -> skills[0] %s: sha256 %s is cached, but this URL does not serve it: forge %s: not found: no directory \"skills/x-typo\" at main", bad, d, bad)
	offline := fmt.Sprintf("fullsend: warning: %s: unverified: sha256 %s is cached, but no fetch has confirmed that this URL serves it (--offline); run online to confirm", bad, d)
	refused := fmt.Sprintf("fullsend: %s: not recording %s: sha256 %s is cached, but no fetch has confirmed that this URL serves it; run `fullsend --fullsend-dir %s lock --update harness/typo.yaml` without --offline to confirm it", lockPath, bad, d, dir)
	for _, c := range []struct {
		args []string
		code int
		line string // the whole of stderr's line
	}{
		{[]string{"resolve", "harness/typo.yaml"}, 1, online},
		{[]string{"lock", "--update", "harness/typo.yaml"}, 1, online},
		{[]string{"resolve", "--offline", "harness/typo.yaml"}, 0, offline},
		{[]string{"lock", "--update", "--offline", "harness/typo.yaml"}, 1, refused},
	} {
		code, stdout, stderr := fullsend(c.args...)
		if code != c.code || !strings.Contains(stderr, c.line+"\n") {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant exit %d and the line\n%s", strings.Join(c.args, " "), code, stderr, c.code, c.line)
		}
		if c.code == 0 && !strings.Contains(stdout, bad) {
			t.Errorf("%s: stdout does not name %s:\n%s", strings.Join(c.args, " "), bad, stdout)
		}
	}
	code, stdout, stderr := fullsend("resolve", "--offline", "--json", "harness/typo.yaml")
	var v resolveJSON
	if code != 0 || json.Unmarshal([]byte(stdout), &v) != nil {
		t.Fatalf("resolve --offline --json: exit %d %s %s", code, stdout, stderr)
	}
	for _, r := range v.Resources {
		if want := r["url"] == bad; (r["unverified"] == true) != want {
			t.Errorf("resolve --json resource %v: unverified should be %v", r, want)
		}
	}
	if after, _ := os.ReadFile(lockPath); string(after) != string(before) {
		t.Fatalf("lock.yaml changed:\n%s", after)
	}
}
