//go:build linux

package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/backends"
)

// TestSandboxExecReportsOOMKill: a command killed for exceeding --memory
// exits 137 with the line a run would give, naming the limit.
func TestSandboxExecReportsOOMKill(t *testing.T) {
	if _, err := os.Stat("/proc/self/ns/user"); err != nil {
		t.Skip("no user namespaces")
	}
	b, err := backends.Open("local", sandbox.Options{})
	if err != nil {
		t.Skip(err)
	}
	if b.Capabilities().Limits.Memory.Level != sandbox.Enforced {
		t.Skipf("memory limits not enforced by a cgroup here: %+v", b.Capabilities().Limits.Memory)
	}
	for _, c := range []struct {
		args []string
		code int
		line string
	}{
		{[]string{"--memory", "64M", "--", "sh", "-c", `x=$(head -c 300000000 /dev/zero | tr "\0" a); echo done`}, 137,
			"fullsend: sandbox exec: sh: memory limit 64MiB exceeded (OOM kill)"},
	} {
		code, _, stderr := runSandboxCLI(t, "", c.args...)
		if code != c.code || strings.TrimRight(stderr, "\n") != c.line {
			t.Errorf("exit %d stderr %q; want %d and %q", code, stderr, c.code, c.line)
		}
	}
}
