package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	runpkg "github.com/fullsend-ai/fullsend/internal/run"
)

// TestRunsThatCannotSucceedStopEarly: before any sandbox is provisioned,
// a run that cannot succeed exits 2 with one line naming the reason and
// the fix, and leaves no run directory.
func TestRunsThatCannotSucceedStopEarly(t *testing.T) {
	dir := t.TempDir()
	fs := filepath.Join(dir, "fs")
	files := map[string]string{
		"agents/a.md":              "---\nname: a\n---\nagent\n",
		"harness/h.yaml":           "agent: agents/a.md\nruntime: script\n",
		"harness/h.script.yaml":    "steps:\n  - say: hi\n",
		"harness/cred.yaml":        "agent: agents/a.md\nruntime: script\nenv:\n  sandbox:\n    GH_TOKEN: ${FULLSEND_TEST_UNSET_TOKEN}\n    OTHER: ${FULLSEND_TEST_UNSET_TOKEN}\n",
		"harness/cred.script.yaml": "steps:\n  - say: hi\n",
		"unknown-key.yaml":         "steps:\n  - run: [1, 2]\n",
		"wrong-type.yaml":          "steps: 3\n",
	}
	for name, content := range files {
		p := filepath.Join(fs, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A loopback port nobody listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/v1"
	l.Close()
	t.Setenv("FULLSEND_MODEL_AUTH", "none")
	h := filepath.Join(fs, "harness/h.yaml")
	cases := []struct {
		name string
		args []string
		line string
	}{
		{"script with an unknown key", []string{"run", "--target-repo", "none", "--script", filepath.Join(fs, "unknown-key.yaml"), h},
			"fullsend: runtime: the run cannot succeed: script runtime: " + filepath.Join(fs, "unknown-key.yaml") + `: line 2: unknown key "run" (known: name, when, read, write, exec, expect, fetch_skill, write_result, say, fail)`},
		{"script of the wrong shape", []string{"run", "--target-repo", "none", "--script", filepath.Join(fs, "wrong-type.yaml"), h},
			"fullsend: runtime: the run cannot succeed: script runtime: " + filepath.Join(fs, "wrong-type.yaml") + ": line 1: `3` is not a list of steps (each a mapping with one operation: read, write, exec, expect, fetch_skill, write_result, say, fail)"},
		{"credential expanding to empty", []string{"run", "--target-repo", "none", filepath.Join(fs, "harness/cred.yaml")},
			"fullsend: env.sandbox.GH_TOKEN: the run cannot succeed: ${FULLSEND_TEST_UNSET_TOKEN} expands to empty on the runner, so the agent would start without this credential; export the variable it names before running, or remove GH_TOKEN from env.sandbox"},
		{"unreachable model endpoint", []string{"run", "--target-repo", "none", "--runtime", "native", "--model", "m", "--model-base-url", closed, h},
			"fullsend: runtime native: the run cannot succeed: model endpoint " + closed + " (--model-base-url) is unreachable: connect: connection refused; start the model server, or correct --model-base-url"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := t.TempDir()
			code, _, stderr := runCLIHost(t, append([]string{"--workspace", ws, "--fullsend-dir", fs}, c.args...)...)
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if last := lines[len(lines)-1]; code != 2 || last != c.line {
				t.Fatalf("exit %d, last stderr line\n%s\nwant exit 2 and\n%s\n(stderr:\n%s)", code, last, c.line, stderr)
			}
			if des, _ := os.ReadDir(runpkg.RunsDir(ws)); len(des) != 0 {
				t.Fatalf("a run directory was made: %v", des)
			}
		})
	}
}
