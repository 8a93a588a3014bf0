package forge_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/forge"
	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
)

// TestResolveCommit: a branch and a tag resolve to the commit the fake
// forge serves them at (GitHub, GitHub Enterprise and GitLab), a moved
// branch to its new commit, an unknown ref is ErrNotFound.
func TestResolveCommitForges(t *testing.T) {
	for _, mk := range []func(t *testing.T) *forgetest.Server{
		func(t *testing.T) *forgetest.Server { return forgetest.NewGitHub(t, nil) },
		func(t *testing.T) *forgetest.Server { return forgetest.NewGitHub(t, nil, forgetest.Enterprise()) },
		func(t *testing.T) *forgetest.Server { return forgetest.NewGitLab(t, nil) },
	} {
		srv := mk(t)
		c := forge.New(fetch.New(srv.FetchOptions()), []config.Forge{srv.Forge()}, srv.Getenv(""))
		first := srv.AddRepo("o/r@main", map[string][]byte{"a.md": []byte("one")})
		tag := srv.AddRepo("o/r@v1.2", map[string][]byte{"a.md": []byte("tagged")})
		commit := func(u string) (string, error) {
			loc, err := forge.Parse(u, []config.Forge{srv.Forge()})
			if err != nil {
				t.Fatal(err)
			}
			return c.ResolveCommit(context.Background(), loc)
		}
		if got, err := commit(srv.BlobURL("o/r@main", "a.md")); err != nil || got != first {
			t.Fatalf("main: %q %v, want %q", got, err, first)
		}
		if got, err := commit(srv.TreeURL("o/r@v1.2", "")); err != nil || got != tag {
			t.Fatalf("tag: %q %v, want %q", got, err, tag)
		}
		moved := srv.AddRepo("o/r@main", map[string][]byte{"a.md": []byte("two")})
		if got, err := commit(srv.BlobURL("o/r@main", "a.md")); err != nil || got != moved || moved == first {
			t.Fatalf("moved main: %q %v, want %q", got, err, moved)
		}
		if _, err := commit(srv.BlobURL("o/r@nope", "a.md")); !errors.Is(err, forge.ErrNotFound) {
			t.Fatalf("unknown ref: %v", err)
		}
	}
}
