package resolve

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// TestReadHarnessRehashes: a harness read back from its cache entry is
// parsed only when its bytes still hash to the pin; otherwise the error
// names what changed.
func TestReadHarnessRehashes(t *testing.T) {
	store, err := cas.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("agent: agents/a.md\n")
	e, err := store.PutFile("", cas.Metadata{URL: "https://github.test/o/r/blob/main/h.yaml"}, data)
	if err != nil {
		t.Fatal(err)
	}
	r, err := newResolver(Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	rf := ref.Ref{URL: "https://github.test/o/r/blob/main/h.yaml", Digest: ref.SHA256(data)}
	b, h, err := r.readHarness(e, rf, "harness "+rf.URL)
	if err != nil || string(b) != string(data) || h == nil || h.Agent != "agents/a.md" {
		t.Fatalf("readHarness = %q, %+v, %v", b, h, err)
	}
	rf.Digest = ref.SHA256([]byte("other bytes"))
	want := "harness " + rf.URL + ": cache entry changed while being read"
	if _, h, err := r.readHarness(e, rf, "harness "+rf.URL); err == nil || err.Error() != want || h != nil {
		t.Fatalf("readHarness with another pin = %+v, %v; want error %q", h, err, want)
	}
}

// TestRemoteSkillWithoutSKILLmd: a fetched skill directory must hold a
// SKILL.md (its frontmatter lists the dependencies).
func TestRemoteSkillWithoutSKILLmd(t *testing.T) {
	r := newRepo()
	w := newWorld(t, r)
	r.file("skills/nomd/notes.md", "notes\n")
	agent := r.file("agents/a.md", "agent\n")
	w.srv.AddRepo(w.key, r.Files)
	d, err := cas.TreeHash(map[string][]byte{"notes.md": []byte("notes\n")})
	if err != nil {
		t.Fatal(err)
	}
	dir := writeDir(t, map[string]string{"harness/h.yaml": fmt.Sprintf("agent: %s\nskills:\n  - %s\nallowed_remote_resources: [%s]\n",
		pin(w.blob("agents/a.md"), agent), pin(w.tree("skills/nomd"), d), w.prefix())})
	_, err = Resolve(context.Background(), filepath.Join(dir, "harness/h.yaml"), w.opts())
	if err == nil || !strings.Contains(err.Error(), "skill directory without SKILL.md") {
		t.Fatalf("Resolve = %v, want a skill directory without SKILL.md", err)
	}
}
