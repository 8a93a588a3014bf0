package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// TestPin: pin prints the reference to paste: a branch URL comes back at
// the commit it names, with the tree hash (or file sha256) of what that
// commit serves; what it prints resolves.
func TestPin(t *testing.T) {
	skillMD := []byte("---\nname: x\ndescription: x\n---\nbody\n")
	agent := []byte("agent\n")
	srv := forgetest.NewGitHub(t, nil)
	commit := srv.AddRepo("o/r@main", map[string][]byte{"skills/x/SKILL.md": skillMD, "agents/a.md": agent})
	prefix := "https://" + srv.WebHost() + "/o/r/"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(forgeConfigYAML(srv, prefix, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	testOnlyFetchOptions = srv.Reach
	defer func() { testOnlyFetchOptions = nil }()
	fullsend := libraryCLI(t, t.TempDir(), dir)
	tree, err := cas.TreeHash(map[string][]byte{"SKILL.md": skillMD})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		arg, want string
	}{
		{srv.TreeURL("o/r@main", "skills/x"), srv.TreeURL("o/r@"+commit, "skills/x") + "#sha256=" + string(tree)},
		{srv.BlobURL("o/r@main", "agents/a.md"), srv.BlobURL("o/r@"+commit, "agents/a.md") + "#sha256=" + string(ref.SHA256(agent))},
		{srv.TreeURL("o/r@"+commit, "skills/x"), srv.TreeURL("o/r@"+commit, "skills/x") + "#sha256=" + string(tree)},
	} {
		code, stdout, stderr := fullsend("pin", c.arg)
		if code != 0 || stdout != c.want+"\n" {
			t.Errorf("pin %s: exit %d\n%s%s\nwant %s", c.arg, code, stdout, stderr, c.want)
		}
	}
	code, stdout, _ := fullsend("pin", "--json", srv.TreeURL("o/r@main", "skills/x"))
	var v map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &v) != nil || v["commit"] != commit || v["type"] != "directory" || v["sha256"] != string(tree) {
		t.Errorf("pin --json: exit %d %s", code, stdout)
	}
	code, _, stderr := fullsend("pin", srv.TreeURL("o/r@main", "skills/nope"))
	if code != 1 || !strings.Contains(stderr, "skills/nope") {
		t.Errorf("pin of a missing directory: exit %d %s", code, stderr)
	}
}
