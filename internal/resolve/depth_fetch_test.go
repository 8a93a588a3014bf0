package resolve

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// TestMaxDepthStopsFetching: a chain of remote skills deeper than
// max_depth is refused without ever requesting what lies below the limit.
// The harness is depth 0, skills/c0 depth 1, …; with max_depth 3 the fake
// forge may see c0, c1 and c2 (their SKILL.md names the next one) but no
// request for c3 or deeper: resolution stops fetching at the limit, it
// does not fetch first and reject afterwards.
func TestMaxDepthStopsFetching(t *testing.T) {
	const chain, maxDepth = 7, 3
	r := newRepo()
	w := newWorld(t, r)
	digests := make([]ref.Digest, chain)
	for i := chain - 1; i >= 0; i-- {
		var deps []string
		if i+1 < chain {
			deps = []string{pin(w.tree(fmt.Sprintf("skills/c%d", i+1)), digests[i+1])}
		}
		digests[i] = r.skill(t, fmt.Sprintf("skills/c%d", i), deps, nil)
	}
	w.srv.AddRepo(w.key, r.Files)
	w.cfg.Security.RemoteResources.MaxDepth = maxDepth
	dir := writeDir(t, map[string]string{
		"agents/a.md":    "agent\n",
		"harness/h.yaml": fmt.Sprintf("agent: agents/a.md\nskills:\n  - %s\nallowed_remote_resources: [%s]\n", pin(w.tree("skills/c0"), digests[0]), w.prefix()),
	})
	_, err := Resolve(context.Background(), filepath.Join(dir, "harness/h.yaml"), w.opts())
	if !errors.Is(err, ErrTooDeep) || !strings.Contains(err.Error(), "max_depth 3") {
		t.Fatalf("err = %v, want ErrTooDeep", err)
	}
	for i := 0; i < chain; i++ {
		sha := forgetest.GitBlobSHA1(r.Files[fmt.Sprintf("skills/c%d/SKILL.md", i)])
		got := w.srv.CountRequests("/git/blobs/" + sha)
		if depth := i + 1; depth <= maxDepth && got != 1 {
			t.Errorf("skills/c%d (depth %d, within max_depth): %d SKILL.md requests, want 1", i, depth, got)
		} else if depth > maxDepth && got != 0 {
			t.Errorf("skills/c%d (depth %d > max_depth %d): %d SKILL.md requests, want none", i, depth, maxDepth, got)
		}
	}
	if got := w.srv.CountRequests("/git/trees/"); got != maxDepth {
		t.Errorf("%d tree listings, want %d (one per skill within max_depth)", got, maxDepth)
	}
}
