package forge_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
)

// ResolveCommit: a branch is one API request answering the commit id it
// names now; a commit id is itself, with no request; an unknown branch is
// an error naming the URL.
func TestResolveCommit(t *testing.T) {
	for name, mk := range map[string]func(t *testing.T) *forgetest.Server{
		"github": func(t *testing.T) *forgetest.Server { return forgetest.NewGitHub(t, nil) },
		"gitlab": func(t *testing.T) *forgetest.Server { return forgetest.NewGitLab(t, nil) },
	} {
		t.Run(name, func(t *testing.T) {
			srv := mk(t)
			commit := srv.AddRepo("acme/skills@main", skill)
			fx := newFixture(t, srv, "")
			loc := fx.parse(t, srv.TreeURL("acme/skills@main", "skills/rust"))
			if loc.AtCommit() {
				t.Fatal("a branch location reports AtCommit")
			}
			got, err := fx.client.ResolveCommit(context.Background(), loc)
			if err != nil || got != commit {
				t.Fatalf("ResolveCommit(main) = %q, %v; want %q", got, err, commit)
			}
			at, err := loc.AtRef(got)
			if err != nil || !at.AtCommit() || !strings.Contains(at.URL, "/"+commit+"/skills/rust") {
				t.Fatalf("AtRef: %+v, %v", at, err)
			}
			srv.ResetRequests()
			if again, err := fx.client.ResolveCommit(context.Background(), at); err != nil || again != commit || srv.RequestCount() != 0 {
				t.Fatalf("ResolveCommit(commit) = %q, %v after %d requests", again, err, srv.RequestCount())
			}
			bad := fx.parse(t, srv.TreeURL("acme/skills@nosuchbranch", "skills/rust"))
			if _, err := fx.client.ResolveCommit(context.Background(), bad); err == nil || !strings.Contains(err.Error(), bad.URL) {
				t.Fatalf("unknown branch: %v", err)
			}
		})
	}
}
