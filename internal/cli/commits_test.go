package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// TestBranchRefsWarnAndLockRecordsCommit: a skill URL on a branch is
// accepted with one warning line naming it, and `fullsend lock` records
// the commit the branch names (commit:), after checking that commit serves
// the pin; a URL at a commit id gets neither.
func TestBranchRefsWarnAndLockRecordsCommit(t *testing.T) {
	skill := map[string][]byte{"skills/x/SKILL.md": []byte("---\nname: x\ndescription: x\n---\nbody\n")}
	d, err := cas.TreeHash(map[string][]byte{"SKILL.md": skill["skills/x/SKILL.md"]})
	if err != nil {
		t.Fatal(err)
	}
	srv := forgetest.NewGitHub(t, nil)
	base := "timeout_minutes: 5\n"
	repo := map[string][]byte{"skills/x/SKILL.md": skill["skills/x/SKILL.md"], "harness/base.yaml": []byte(base)}
	commit := srv.AddRepo("o/r@main", repo)
	prefix := "https://" + srv.WebHost() + "/o/r/"
	dir := t.TempDir()
	branch, atCommit := srv.TreeURL("o/r@main", "skills/x"), srv.TreeURL("o/r@"+commit, "skills/x")
	baseBranch := srv.BlobURL("o/r@main", "harness/base.yaml")
	files := map[string]string{
		"config.yaml":         forgeConfigYAML(srv, prefix, ""),
		"agents/a.md":         "agent\n",
		"harness/branch.yaml": fmt.Sprintf("agent: agents/a.md\nskills:\n  - %s#sha256=%s\nallowed_remote_resources: [%s]\n", branch, d, prefix),
		"harness/child.yaml":  fmt.Sprintf("agent: agents/a.md\nbase: %s#sha256=%s\nallowed_remote_resources: [%s]\n", baseBranch, ref.SHA256([]byte(base)), prefix),
		"harness/commit.yaml": fmt.Sprintf("agent: agents/a.md\nskills:\n  - %s#sha256=%s\nallowed_remote_resources: [%s]\n", atCommit, d, prefix),
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testOnlyFetchOptions = srv.Reach
	defer func() { testOnlyFetchOptions = nil }()
	fullsend := libraryCLI(t, t.TempDir(), dir)
	warning := "fullsend: warning: " + branch + ": a branch or tag, not a commit, so it can move; write a commit id in its place, or run `fullsend lock`, which records the commit it names now\n"
	for _, c := range []struct {
		args []string
		warn bool
	}{
		{[]string{"resolve", "harness/branch.yaml"}, true},
		{[]string{"lock", "harness/branch.yaml"}, true},
		{[]string{"resolve", "harness/commit.yaml"}, false},
		{[]string{"lock", "harness/commit.yaml"}, false},
	} {
		code, _, stderr := fullsend(c.args...)
		if code != 0 || strings.Contains(stderr, warning) != c.warn || (!c.warn && strings.Contains(stderr, "warning")) {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant the warning line: %v", strings.Join(c.args, " "), code, stderr, c.warn)
		}
		if c.args[1] == "harness/branch.yaml" && (srv.CountRequests("/git/trees/"+commit) > 0) != (c.args[0] == "lock") {
			// resolve never looks the commit up; lock fetches the commit's
			// tree to check that it serves the pin.
			t.Errorf("%s: %d requests for the commit's tree", strings.Join(c.args, " "), srv.CountRequests("/git/trees/"+commit))
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "lock.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	lf := string(b)
	// A base named by a branch: the same warning, and lock records its commit.
	baseWarning := "fullsend: warning: " + baseBranch + ": a branch or tag, not a commit"
	for _, cmd := range []string{"resolve", "lock"} {
		if code, _, stderr := fullsend(cmd, "harness/child.yaml"); code != 0 || !strings.Contains(stderr, baseWarning) {
			t.Errorf("%s of a harness whose base names a branch: exit %d, stderr:\n%s", cmd, code, stderr)
		}
	}
	if b, err = os.ReadFile(filepath.Join(dir, "lock.yaml")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "commit: "+commit) || strings.Count(string(b), "commit: ") != 2 {
		t.Errorf("lock.yaml does not record the base's commit:\n%s", b)
	}
	if want := "- url: " + branch + "\n          sha256: " + string(d) + "\n          type: directory\n          commit: " + commit + "\n"; !strings.Contains(lf, want) {
		t.Fatalf("lock.yaml lacks\n%s\n%s", want, lf)
	}
	if strings.Count(lf, "commit: ") != 1 {
		t.Fatalf("lock.yaml records a commit for the URL at a commit id:\n%s", lf)
	}
}
