package forge_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/forge"
	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
)

// TestTreeTotalBoundedWhileDownloading: a GitLab tree listing gives no
// sizes, so the limit on a skill directory's TOTAL bytes (the fetch
// client's MaxSize, also each file's limit) is enforced on the bytes as
// they arrive. Files each under the per-file limit but together over the
// total are refused; the same files one at a time are fine.
func TestTreeTotalBoundedWhileDownloading(t *testing.T) {
	files := map[string][]byte{
		"s/a.md":   []byte(strings.Repeat("a", 400)),
		"s/b.md":   []byte(strings.Repeat("b", 400)),
		"s/c.md":   []byte(strings.Repeat("c", 400)),
		"one/a.md": []byte(strings.Repeat("a", 900)),
	}
	srv := forgetest.NewGitLab(t, forgetest.Repos{"acme/skills@main": files})
	o := srv.FetchOptions()
	o.MaxSize = 1000
	c := forge.New(fetch.New(o), []config.Forge{srv.Forge()}, nil)
	fetchTree := func(dir string) (map[string][]byte, error) {
		loc, err := forge.Parse(srv.TreeURL("acme/skills@main", dir), []config.Forge{srv.Forge()})
		if err != nil {
			t.Fatal(err)
		}
		return c.FetchTree(context.Background(), loc)
	}
	got, err := fetchTree("s")
	wantErr(t, err, fetch.ErrTooLarge, "files exceed 1000 bytes in total")
	if got != nil {
		t.Errorf("partial tree returned: %d files", len(got))
	}
	if got, err := fetchTree("one"); err != nil || len(got["a.md"]) != 900 {
		t.Fatalf("a 900-byte tree under a 1000-byte limit: %v", err)
	}
}
