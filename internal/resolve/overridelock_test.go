package resolve

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/lock"
)

// TestLockEntryOverridesInForgeOverlay: the override set of a forge
// overlay's skill is recorded under that overlay's skills group, and a
// lock entry whose set differs is stale.
func TestLockEntryOverridesInForgeOverlay(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"harness/h.yaml":        "agent: agents/a.md\nforge:\n  github:\n    skills:\n      - skills/alpha:\n          sub/y.md: null\n",
		"agents/a.md":           "---\nname: a\n---\na\n",
		"skills/alpha/SKILL.md": "---\nname: alpha\ndescription: x\n---\nA\n",
		"skills/alpha/sub/y.md": "y\n",
	})
	w := newWorld(t, newRepo())
	res, err := Resolve(context.Background(), dir+"/harness/h.yaml", w.opts())
	if err != nil {
		t.Fatal(err)
	}
	entry := LockEntry(res, time.Unix(0, 0))
	var got []lock.Override
	for _, g := range entry.Dependencies {
		if g.Field == "forge.github.skills" && len(g.Deps) == 1 {
			got = g.Deps[0].Overrides
		}
	}
	if len(got) != 1 || got[0] != (lock.Override{Path: "sub/y.md", Deleted: true}) {
		t.Fatalf("forge.github.skills overrides = %+v (entry %+v)", got, entry.Dependencies)
	}
	o := w.opts()
	o.Lock = &lock.File{Version: lock.Version}
	o.Lock.Put("h", entry, "2026-01-01T00:00:00Z")
	o.Frozen = true
	if _, err := Resolve(context.Background(), dir+"/harness/h.yaml", o); err != nil {
		t.Fatalf("frozen with the recorded set: %v", err)
	}
	for i := range entry.Dependencies {
		if entry.Dependencies[i].Field == "forge.github.skills" {
			entry.Dependencies[i].Deps[0].Overrides = nil
		}
	}
	if _, err := Resolve(context.Background(), dir+"/harness/h.yaml", o); err == nil || !strings.Contains(err.Error(), "file override sub/y.md deleted is not in lock.yaml") {
		t.Fatalf("frozen with the set missing: %v", err)
	}
}
