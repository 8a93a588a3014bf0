package forge_test

import (
	"sync"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
)

// Issue 15: the skills of one repo@commit share one recursive tree listing
// per client, whether fetched one after another or at the same time; a
// branch ref is listed afresh for each fetch (it may move).
func TestTreeListingSharedPerCommit(t *testing.T) {
	srv := forgetest.NewGitHub(t, forgetest.Repos{"acme/skills@main": skill})
	fx := newFixture(t, srv, "")
	commit := srv.Commit("acme/skills@main")
	dirs := []string{"skills/rust", "skills/go", "skills/rust/reference", "skills/rustacean"}

	srv.ResetRequests()
	var wg sync.WaitGroup
	errs := make([]error, len(dirs))
	for i, d := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := fx.tree(t, srv.TreeURL("acme/skills@"+commit, d))
			if err == nil && len(got) != len(want(d+"/", skill)) {
				t.Errorf("%s: %d files, want %d", d, len(got), len(want(d+"/", skill)))
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", dirs[i], err)
		}
	}
	if _, err := fx.tree(t, srv.TreeURL("acme/skills@"+commit, "skills/go")); err != nil {
		t.Fatal(err)
	}
	if n := srv.CountRequests("/git/trees/"); n != 1 {
		t.Errorf("%d tree listings for %d fetches of one repo@commit, want 1", n, len(dirs)+1)
	}

	srv.ResetRequests()
	for _, d := range []string{"skills/rust", "skills/go"} {
		if _, err := fx.tree(t, srv.TreeURL("acme/skills@main", d)); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.CountRequests("/git/trees/"); n != 2 {
		t.Errorf("%d tree listings for 2 sequential fetches on a branch, want 2", n)
	}
}
