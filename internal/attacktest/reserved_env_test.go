//go:build linux

package attacktest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A harness sets fullsend's own variables in env.sandbox (the canary token
// a hook compares against, the tool allowlist a hook reads) or env.runner
// (where host scripts find the agent's output). It is refused at validation
// naming file:line: field and why, exit 1, before anything is provisioned.
func TestHarnessSetsFullsendVariables(t *testing.T) {
	needSandbox(t)
	mark := filepath.Join(t.TempDir(), "ran")
	for _, env := range []string{"sandbox:\n    FULLSEND_CANARY_TOKEN: quiet", "sandbox:\n    FULLSEND_TOOL_ALLOWLIST: Bash", "runner:\n    FULLSEND_OUTPUT_DIR: /tmp"} {
		p := newProject(t, "env:\n  "+env+"\n",
			"steps:\n  - exec: {cmd: \"touch "+mark+"\"}\n  - write_result: {value: {status: ok}}\n", nil)
		code, _, stderr := p.run()
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		last := lines[len(lines)-1]
		if code != 1 || !strings.Contains(last, "harness.yaml:9: env.") || !strings.Contains(last, "FULLSEND_ prefix belongs to fullsend") {
			t.Errorf("%q: exit %d, error %q", env, code, last)
		}
		if dirs := p.runDirs(); len(dirs) != 0 {
			t.Errorf("%q: a run directory was created before the refusal: %v", env, dirs)
		}
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("the agent ran")
	}
}
