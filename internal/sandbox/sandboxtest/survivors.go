//go:build linux

package sandboxtest

import (
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// execLeavesNothing (issue 26 item 4): nothing an exec started survives
// it, however it left the exec's process tree — a new session, an orphan,
// a background job with its stdio closed, a new process group — whether
// the exec ended by itself or at its timeout. A survivor could rewrite
// what the runner restores between two agent iterations. Checked from a
// second exec (every backend) and on the host (where the sandbox's
// processes are visible).
func (s *suite) execLeavesNothing(t *testing.T) {
	ss := s.provision(t, sandbox.Spec{})
	m := marker()
	r := run(t, ss, helperReq("detach", m))
	if r.ExitCode != 0 {
		t.Fatalf("detach helper: exit %d: %s %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	t.Logf("in the sandbox, %s", strings.TrimSpace(string(r.Stdout)))
	noSurvivor(t, ss, m, "a detached orphan in a new session")
	if r := sh(t, ss, "exec </dev/null >/dev/null 2>&1; sleep "+m+" & (sleep "+m+" &); (set -m; sleep "+m+" &); true"); r.ExitCode != 0 {
		t.Fatalf("background jobs: exit %d: %s", r.ExitCode, r.Stderr)
	}
	noSurvivor(t, ss, m, "background jobs")
	// A detached loop that keeps forking while it is being killed.
	if r := sh(t, ss, "exec </dev/null >/dev/null 2>&1; (while :; do sleep "+m+" & done &) ; sleep 0.5"); r.ExitCode != 0 {
		t.Fatalf("fork loop: exit %d: %s", r.ExitCode, r.Stderr)
	}
	noSurvivor(t, ss, m, "a forking loop")
	// At a timeout: the exec detaches a sleeper, then outlives its timeout.
	req := helperReq("detach", m)
	req.Args = []string{"sh", "-c", `"$0" detach "$1" && exec sleep "$1"`, sandbox.BinaryPath, m}
	req.Timeout = time.Second
	if r := run(t, ss, req); !r.TimedOut {
		t.Fatalf("not timed out: exit %d: %s %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	noSurvivor(t, ss, m, "a detached orphan of an exec that timed out")
	// The session still runs commands.
	if r := sh(t, ss, "echo ok"); string(r.Stdout) != "ok\n" {
		t.Errorf("after the survivors test: %q %q", r.Stdout, r.Stderr)
	}
}

// noSurvivor fails unless, seen from a new exec and from the host, no
// process whose command line holds m is left (a dying one may take a
// moment to go).
func noSurvivor(t *testing.T, ss sandbox.Session, m, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		out := sh(t, ss, "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '").Stdout
		if !strings.Contains(string(out), m) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s survived its exec (seen from the next exec): %q", what, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitNoHostProcs(t, m)
}
