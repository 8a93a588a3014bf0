package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSkillOverridesLockedSet: lock.yaml records a skill's whole override
// set (each target path with its override file and sha256, or deleted)
// under the skill's dependency; resolve --frozen accepts it, and a lock
// whose set differs from the harness's (a deletion it does not record, a
// target replaced instead of deleted) is stale.
func TestSkillOverridesLockedSet(t *testing.T) {
	dir := t.TempDir()
	const harness = "agent: agents/a.md\nskills:\n  - skills/alpha:\n      sub/x.md: overrides/x.md\n      sub/y.md: null\n"
	for rel, body := range map[string]string{
		"agents/a.md":           "---\nname: a\n---\nhi\n",
		"skills/alpha/SKILL.md": "---\nname: alpha\ndescription: x\n---\nA\n",
		"skills/alpha/sub/x.md": "x\n",
		"skills/alpha/sub/y.md": "y\n",
		"overrides/x.md":        "X\n",
		"harness/h.yaml":        harness,
	} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, stderr := runCLI(t, "--fullsend-dir", dir, "lock", "harness/h.yaml"); code != 0 {
		t.Fatalf("lock: exit %d: %s", code, stderr)
	}
	lockPath := filepath.Join(dir, "lock.yaml")
	b, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	locked := string(b)
	const deletion = "            - path: sub/y.md\n              deleted: true\n"
	want := "          overrides:\n            - path: sub/x.md\n              source: overrides/x.md\n              sha256: " // then the hash
	if !strings.Contains(locked, want) || !strings.Contains(locked, deletion) {
		t.Fatalf("lock.yaml does not record the override set:\n%s", locked)
	}
	if code, _, stderr := runCLI(t, "--fullsend-dir", dir, "resolve", "--frozen", "harness/h.yaml"); code != 0 {
		t.Fatalf("resolve --frozen: exit %d: %s", code, stderr)
	}

	// A lock that does not record the deletion (the harness unchanged) is
	// stale: the harness's own hash alone does not vouch for the set.
	if err := os.WriteFile(lockPath, []byte(strings.Replace(locked, deletion, "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "--fullsend-dir", dir, "resolve", "--frozen", "harness/h.yaml")
	if code != 1 || !strings.Contains(stderr, "skill skills/alpha (skills[0]): file override sub/y.md deleted is not in lock.yaml") {
		t.Fatalf("resolve --frozen with the deletion missing from the lock: exit %d: %s", code, stderr)
	}

	// The harness replaces the deleted file instead: the lock is stale and
	// says how (resolve warns; --frozen fails).
	if err := os.WriteFile(lockPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "harness", "h.yaml"), []byte(strings.Replace(harness, "sub/y.md: null", "sub/y.md: overrides/x.md", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "--fullsend-dir", dir, "resolve", "harness/h.yaml")
	if code != 0 || !strings.Contains(stderr, "file override sub/y.md replaced by overrides/x.md (sha256 ") || !strings.Contains(stderr, "but lock.yaml has sub/y.md deleted") {
		t.Fatalf("resolve with a changed override: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "--fullsend-dir", dir, "resolve", "--frozen", "harness/h.yaml"); code != 1 || !strings.Contains(stderr, "--frozen") {
		t.Fatalf("resolve --frozen with a changed override: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "--fullsend-dir", dir, "lock", "--update", "harness/h.yaml"); code != 0 {
		t.Fatalf("lock --update: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(lockPath); strings.Contains(string(b), "deleted: true") || strings.Count(string(b), "source: overrides/x.md") != 2 {
		t.Fatalf("lock.yaml after --update:\n%s", b)
	}
	if code, _, stderr := runCLI(t, "--fullsend-dir", dir, "resolve", "--frozen", "harness/h.yaml"); code != 0 {
		t.Fatalf("resolve --frozen after lock --update: exit %d: %s", code, stderr)
	}
}
