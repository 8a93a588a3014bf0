//go:build linux

package local

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

func TestIsSessionGroup(t *testing.T) {
	for name, want := range map[string]bool{
		"fullsend-" + randomID(): true,
		"fullsend-0123456789ab":  true,
		"fullsend-0123456789AB":  false, // randomID writes lower case
		"fullsend-0123456789a":   false,
		"fullsend-0123456789abc": false,
		"fullsend-layouttest123": false,
		"fullsend-":              false,
		"docker":                 false,
		"xfullsend-0123456789ab": false,
	} {
		if got := isSessionGroup(name); got != want {
			t.Errorf("isSessionGroup(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestPopulatedV2 reads the kernel's count on a fake unified hierarchy.
func TestPopulatedV2(t *testing.T) {
	root := t.TempDir()
	for events, want := range map[string]bool{"populated 0\nfrozen 0\n": false, "populated 1\nfrozen 0\n": true} {
		os.WriteFile(filepath.Join(root, "cgroup.events"), []byte(events), 0o644)
		if got, err := populated(root, true); err != nil || got != want {
			t.Errorf("%q: populated %v, %v; want %v", events, got, err, want)
		}
	}
	os.WriteFile(filepath.Join(root, "cgroup.events"), []byte("frozen 0\n"), 0o644)
	if _, err := populated(root, true); err == nil {
		t.Error("cgroup.events without a populated line judged")
	}
}

// TestSweepStaleRemovesOnlyAbandonedGroups makes, in the real hierarchy,
// sessions a killed host left behind (old, empty, one with an exec group)
// beside a fresh one, an old one with a process in it, and an old group of
// another name; a sweep removes the first and keeps the rest. Needs a
// writable cgroup hierarchy (root).
func TestSweepStaleRemovesOnlyAbandonedGroups(t *testing.T) {
	env := detectCgroups()
	if env.v2 == "" && len(env.v1) == 0 {
		t.Skip("no writable cgroup hierarchy here")
	}
	limits := sandbox.Limits{Pids: 40, MemoryBytes: 256 << 20, CPUs: 1}.Resolved()
	old := time.Now().Add(-staleAge - time.Minute)
	session := func(age time.Time) *cgroupSet {
		t.Helper()
		cs, err := newCgroupsIn(env, randomID(), limits)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.remove() })
		for _, d := range cs.sessions {
			if err := os.Chtimes(d, age, age); err != nil {
				t.Fatal(err)
			}
		}
		if env.v2 != "" {
			os.Chtimes(filepath.Dir(cs.sys), age, age)
		}
		return cs
	}
	abandoned := session(old)
	if _, err := abandoned.newExec(); err != nil { // an exec group left inside
		t.Fatal(err)
	}
	fresh := session(time.Now())
	busy := session(old)
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	if err := busy.add(sleeper.Process.Pid); err != nil {
		t.Fatal(err)
	}
	var others []string
	for _, p := range sessionParents(env) {
		d := filepath.Join(p, "fullsend-notasession")
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(d) })
		os.Chtimes(d, old, old)
		others = append(others, d)
	}

	if n := sweepStale(env, time.Now()); n < len(sessionParents(env)) {
		t.Errorf("sweep removed %d groups, want at least the abandoned session's %d", n, len(sessionParents(env)))
	}
	for _, d := range abandoned.created {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("abandoned group %s not removed (%v)", d, err)
		}
	}
	for _, cs := range []*cgroupSet{fresh, busy} {
		for _, d := range cs.created {
			if _, err := os.Stat(d); err != nil {
				t.Errorf("live group %s removed: %v", d, err)
			}
		}
	}
	for _, d := range others {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s is not a session group but was removed: %v", d, err)
		}
	}
	// Its process gone, the old session is abandoned too.
	// (The kernel may hold an exited task's group a moment longer.)
	sleeper.Process.Kill()
	sleeper.Wait()
	for try := 0; try < 100; try++ {
		sweepStale(env, time.Now())
		if _, err := os.Stat(busy.sessions[0]); errors.Is(err, fs.ErrNotExist) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, d := range busy.created {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("group %s, empty now, not removed (%v)", d, err)
		}
	}
}
