//go:build linux

package local

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// spares lists the waiting spare pid 1s below the session's init (host
// pids).
func spares(t *testing.T, s *session) []int {
	t.Helper()
	var out []int
	for _, pid := range descendants(t, s.cmd.Process.Pid) {
		if cl, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline")); string(cl) == "fullsend-sandbox-pid1\x00spare\x00" {
			out = append(out, pid)
		}
	}
	return out
}

// descendants lists the live processes below root, from /proc.
func descendants(t *testing.T, root int) []int {
	t.Helper()
	parent := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		parent[pid], _ = strconv.Atoi(f[1])
	}
	var out []int
	for pid := range parent {
		for p := parent[pid]; p > 1; p = parent[p] {
			if p == root {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// waitSpare waits until the session holds exactly one spare and returns it.
func waitSpare(t *testing.T, s *session) int {
	t.Helper()
	for i := 0; ; i++ {
		if sp := spares(t, s); len(sp) == 1 {
			// Its enter step is up too once the pid 1 has prepared.
			for j := 0; j < 3000; j++ {
				for _, d := range descendants(t, sp[0]) {
					if cl, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(d), "cmdline")); string(cl) == "fullsend-sandbox-enter\x00spare\x00" {
						return sp[0]
					}
				}
				time.Sleep(10 * time.Millisecond)
			}
			t.Fatal("the spare pid 1 started no enter step")
		}
		if i == 3000 {
			t.Fatalf("no single spare pid 1 after 30s: %v", spares(t, s))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An exec served by a spare pid 1 gets what a fresh one gives: its own pid
// namespace, its stdio, environment and directory, the exec's cgroups, the
// agent's seccomp filter and no capabilities; the supervisor then keeps a
// new spare.
func TestSpareServesTheNextExec(t *testing.T) {
	b, err := New(sandbox.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ss, err := b.Provision(ctx, sandbox.Spec{})
	if err != nil {
		t.Skipf("local sandbox unavailable: %v", err)
	}
	defer ss.Terminate(ctx)
	s := ss.(*session)
	cold, err := ss.Exec(ctx, sandbox.ExecRequest{Args: []string{"sh", "-c", "cat /proc/self/cgroup"}})
	if err != nil || cold.ExitCode != 0 {
		t.Fatalf("first exec: %+v, %v", cold, err)
	}
	// A one-shot sandbox starts no spare after its exec.
	time.Sleep(100 * time.Millisecond)
	if sp := spares(t, s); len(sp) != 0 {
		t.Fatalf("spare %v after the first exec", sp)
	}
	if r, err := ss.Exec(ctx, sandbox.ExecRequest{Args: []string{"true"}}); err != nil || r.ExitCode != 0 {
		t.Fatalf("second exec: %+v, %v", r, err)
	}
	sp := waitSpare(t, s)
	script := `n=0; for p in /proc/[0-9]*/comm; do [ "$(cat $p)" = fullsend ] && n=$((n+1)); done; [ -d /proc/1 ] && echo "fullsend processes $n, pid 1 $(cat /proc/1/comm)"; echo "dir $(pwd)"; echo "foo $FOO"; read line; echo "in $line"; echo err >&2
grep -E '^(Seccomp_filters|CapEff|NoNewPrivs):' /proc/self/status; cat /proc/self/cgroup; exit 7`
	r, err := ss.Exec(ctx, sandbox.ExecRequest{Args: []string{"sh", "-c", script}, Env: map[string]string{"FOO": "bar"}, Cwd: "/tmp", Stdin: []byte("hello\n")})
	if err != nil {
		t.Fatal(err)
	}
	out := string(r.Stdout)
	for _, want := range []string{"fullsend processes 1, pid 1 fullsend\n", "dir /tmp\n", "foo bar\n", "in hello\n", "CapEff:\t0000000000000000", "NoNewPrivs:\t1"} {
		if !strings.Contains(out, want) {
			t.Errorf("spare exec output lacks %q:\n%s", want, out)
		}
	}
	if r.ExitCode != 7 || string(r.Stderr) != "err\n" {
		t.Errorf("exit %d, stderr %q; want 7, \"err\\n\"", r.ExitCode, r.Stderr)
	}
	// The same groups as the first exec's, but its own exec group.
	if strings.Count(out, "fullsend-") != strings.Count(string(cold.Stdout), "fullsend-") || !strings.Contains(out, "/agent/") {
		t.Errorf("spare exec cgroups:\n%s\nfirst exec's:\n%s", out, cold.Stdout)
	}
	if filters := strings.Count(out, "Seccomp_filters:"); filters == 1 && !strings.Contains(out, "Seccomp_filters:\t2") {
		t.Errorf("spare exec seccomp filters: %s", out)
	}
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(sp))); err == nil {
		if cl, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(sp), "cmdline")); string(cl) == "fullsend-sandbox-pid1\x00spare\x00" {
			t.Fatalf("the spare %d is still waiting: the exec did not use it", sp)
		}
	}
	if next := waitSpare(t, s); next == sp {
		t.Fatalf("no new spare after the exec (%d)", next)
	}
	// A missing command and a missing directory fail as with a fresh pid 1.
	r, err = ss.Exec(ctx, sandbox.ExecRequest{Args: []string{"no-such-command-x"}})
	if err != nil || r.ExitCode != 127 {
		t.Errorf("missing command: %+v, %v; want exit 127", r, err)
	}
	waitSpare(t, s)
	r, err = ss.Exec(ctx, sandbox.ExecRequest{Args: []string{"true"}, Cwd: "/sandbox/no-such-dir"})
	if err != nil || r.ExitCode != 127 {
		t.Errorf("missing directory: %+v, %v; want exit 127", r, err)
	}
}
