package resolve

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCacheVouchesOnlyForConfirmedURLs: once a pin is cached, a harness
// naming it under another URL (a misspelled path, a commit that does not
// exist, a branch that has moved since) fails online as it would with an
// empty cache, and offline resolves with the node marked unverified and
// one warning line naming the URL.
func TestCacheVouchesOnlyForConfirmedURLs(t *testing.T) {
	r := newRepo()
	w := newWorld(t, r)
	x := r.skill(t, "skills/x", nil, nil)
	commit := w.srv.AddRepo(w.key, r.Files)
	good := w.tree("skills/x")
	atCommit := w.srv.TreeURL("o/r@"+commit, "skills/x")
	harnessFor := func(u string) string {
		dir := writeDir(t, map[string]string{"agents/a.md": "agent\n", "harness/h.yaml": fmt.Sprintf("agent: agents/a.md\nskills:\n  - %s\nallowed_remote_resources: [%s]\n", pin(u, x), w.prefix())})
		return filepath.Join(dir, "harness/h.yaml")
	}
	// Warm the cache through the right URLs.
	for _, u := range []string{good, atCommit} {
		if _, err := Resolve(context.Background(), harnessFor(u), w.opts()); err != nil {
			t.Fatalf("warming with %s: %v", u, err)
		}
	}
	// Confirmed pairs answer from the cache, online and offline, without a
	// request and without a warning.
	for _, u := range []string{good, atCommit} {
		before := len(w.srv.Requests())
		for _, offline := range []bool{false, true} {
			o := w.opts()
			o.Offline = offline
			res, err := Resolve(context.Background(), harnessFor(u), o)
			if err != nil {
				t.Fatalf("%s (offline %v): %v", u, offline, err)
			}
			if n := nodeByURL(res.Graph, u); n == nil || !n.CacheHit || n.Unverified || len(res.Warnings) != 0 {
				t.Fatalf("%s (offline %v): node %+v, warnings %q", u, offline, n, res.Warnings)
			}
		}
		if c := len(w.srv.Requests()) - before; c != 0 {
			t.Fatalf("confirmed %s: %d forge requests", u, c)
		}
	}

	missingCommit := w.srv.TreeURL("o/r@"+strings.Repeat("ab", 20), "skills/x")
	moved := good
	cases := []struct {
		name, url string
		later     time.Duration // how long after the warm-up
		online    string        // in the online error
	}{
		{"misspelled path", w.tree("skills/xx"), 0, `not found: no directory "skills/xx" at main`},
		{"missing commit", missingCommit, 0, "not found"},
		{"moved branch", moved, 2 * MovableRefTTL, "tree hash"},
	}
	// The branch moves: skills/x on main now holds something else.
	r.Files["skills/x/SKILL.md"] = append(r.Files["skills/x/SKILL.md"], "moved\n"...)
	w.srv.AddRepo(w.key, r.Files)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clock := func() time.Time { return time.Now().Add(c.later) }
			o := w.opts()
			o.Now = clock
			_, err := Resolve(context.Background(), harnessFor(c.url), o)
			if err == nil || !strings.Contains(err.Error(), c.url) || !strings.Contains(err.Error(), "is cached, but this URL does not serve it") || !strings.Contains(err.Error(), c.online) {
				t.Fatalf("online: err = %v, want the URL, %q and %q", err, "is cached, but this URL does not serve it", c.online)
			}
			o = w.opts()
			o.Now = clock
			o.Offline = true
			res, err := Resolve(context.Background(), harnessFor(c.url), o)
			if err != nil {
				t.Fatalf("offline: %v", err)
			}
			n := nodeByURL(res.Graph, c.url)
			if n == nil || !n.Unverified || !n.CacheHit {
				t.Fatalf("offline node: %+v", n)
			}
			for _, got := range res.Graph.Resources() {
				if got.Unverified != (got.URL == c.url) {
					t.Fatalf("resolve --json resource: %+v", got)
				}
			}
			want := fmt.Sprintf("%s: unverified: sha256 %s is cached, but no fetch has confirmed that this URL serves it (--offline); run online to confirm", c.url, x)
			if len(res.Warnings) != 1 || res.Warnings[0] != want {
				t.Fatalf("offline warnings = %q, want [%q]", res.Warnings, want)
			}
		})
	}
}
