package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSkillOverridesGraphAndLock: a skills entry's override file is a
// node of graph and an entry of lock.yaml (group skill_overrides); the
// rest of the entry is as without overrides.
func TestSkillOverridesGraphAndLock(t *testing.T) {
	dir := t.TempDir()
	for rel, body := range map[string]string{
		"agents/a.md":           "---\nname: a\n---\nhi\n",
		"skills/alpha/SKILL.md": "---\nname: alpha\ndescription: x\n---\nA\n",
		"skills/alpha/sub/x.md": "x\n",
		"skills/alpha/sub/y.md": "y\n",
		"overrides/x.md":        "X\n",
		"harness/h.yaml":        "agent: agents/a.md\nskills:\n  - skills/alpha:\n      sub/x.md: overrides/x.md\n      sub/y.md: null\n",
	} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := runCLI(t, "--fullsend-dir", dir, "graph", "harness/h.yaml")
	if code != 0 || !strings.Contains(stdout, `label="skill_override\noverrides/x.md"`) || !strings.Contains(stdout, `[label="skill_overrides[0]"]`) {
		t.Fatalf("graph: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, "--fullsend-dir", dir, "lock", "harness/h.yaml"); code != 0 {
		t.Fatalf("lock: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "lock.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "      skill_overrides:\n        - path: overrides/x.md\n          sha256: ") {
		t.Errorf("lock.yaml:\n%s", b)
	}
}
