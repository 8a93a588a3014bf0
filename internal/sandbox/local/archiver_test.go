//go:build linux

package local

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// archiveHelpers lists the live archive helpers below the session's init
// (host pids), read from /proc.
func archiveHelpers(t *testing.T, s *session) []int {
	t.Helper()
	parent := map[int]int{}
	var helpers []int
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
		// pid (comm) state ppid ...
		f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		parent[pid], _ = strconv.Atoi(f[1])
		if cl, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); string(cl) == "fullsend-sandbox-archive\x00serve\x00" {
			helpers = append(helpers, pid)
		}
	}
	var ours []int
	for _, h := range helpers {
		for p := parent[h]; p > 1; p = parent[p] {
			if p == s.cmd.Process.Pid {
				ours = append(ours, h)
				break
			}
		}
	}
	return ours
}

// statusInt is the number field key of a /proc/PID/status.
func statusInt(t *testing.T, status []byte, key string) int {
	t.Helper()
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("%s: %q", key, v)
			}
			return n
		}
	}
	t.Skipf("no %s in /proc/PID/status (kernel too old)", key)
	return 0
}

// One archive helper serves every transfer of a session, hardened like an
// agent command; when it dies, the next transfer starts another.
func TestArchiveHelperServesTheSession(t *testing.T) {
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
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	var first int
	for i, dst := range []string{"/sandbox/one", "/sandbox/two", "/tmp/three"} {
		if err := ss.Upload(ctx, src, dst); err != nil {
			t.Fatal(err)
		}
		h := archiveHelpers(t, s)
		if len(h) != 1 {
			t.Fatalf("after upload %d: %d archive helpers alive (%v), want one", i+1, len(h), h)
		}
		if i == 0 {
			first = h[0]
		} else if h[0] != first {
			t.Fatalf("upload %d started a new helper (pid %d, first %d)", i+1, h[0], first)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	if err := ss.Download(ctx, "/sandbox/two", out); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "a.txt")); err != nil || string(b) != "a" {
		t.Fatalf("downloaded a.txt = %q, %v", b, err)
	}
	if h := archiveHelpers(t, s); len(h) != 1 || h[0] != first {
		t.Fatalf("after the download: helpers %v, want [%d]", h, first)
	}
	st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(first), "status"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NoNewPrivs:\t1", "Seccomp:\t2", "CapEff:\t0000000000000000", "CapPrm:\t0000000000000000"} {
		if !strings.Contains(string(st), want) {
			t.Errorf("archive helper status lacks %q:\n%s", want, st)
		}
	}
	// The agent's filter stacked on the supervisor's it inherits.
	pst, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(statusInt(t, st, "PPid")), "status"))
	if err != nil {
		t.Fatal(err)
	}
	if h, p := statusInt(t, st, "Seccomp_filters"), statusInt(t, pst, "Seccomp_filters"); h != p+1 {
		t.Errorf("archive helper has %d seccomp filters, its supervisor %d: want one more (ProfileAgent)", h, p)
	}

	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for i := 0; len(archiveHelpers(t, s)) != 0; i++ {
		if i == 3000 {
			t.Fatal("killed archive helper still listed after 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The supervisor may not have seen the death yet: a request that
	// reaches the dead helper fails, the next starts a new one.
	var uerr error
	for i := 0; i < 2; i++ {
		if uerr = ss.Upload(ctx, src, "/sandbox/four"); uerr == nil {
			break
		}
		if !strings.Contains(uerr.Error(), "archive helper") {
			t.Fatalf("upload after the helper died: %v", uerr)
		}
	}
	if uerr != nil {
		t.Fatalf("no new helper: %v", uerr)
	}
	if h := archiveHelpers(t, s); len(h) != 1 || h[0] == first {
		t.Fatalf("after the helper died: helpers %v, want one new", h)
	}
}
