package trust

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// The nearest .git wins; one another user owns is an error naming it and
// the way out; the search stops at the home directory.
func TestFindGitRoot(t *testing.T) {
	root := t.TempDir()
	repo, sub := filepath.Join(root, "repo"), filepath.Join(root, "repo", "a", "b")
	mkdirs(t, filepath.Join(repo, ".git"), sub)
	me := Discovery{Home: "/nonexistent-home", UID: os.Getuid()}
	if got, err := me.FindGitRoot(sub); err != nil || got != repo {
		t.Fatalf("own repo: %q, %v", got, err)
	}
	// A worktree's .git is a file: found the same.
	wt := filepath.Join(root, "wt")
	mkdirs(t, wt)
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := me.FindGitRoot(wt); got != wt {
		t.Errorf(".git file: %q", got)
	}

	other := Discovery{Home: "/nonexistent-home", UID: os.Getuid() + 1}
	got, err := other.FindGitRoot(sub)
	if !errors.Is(err, ErrForeignRepo) || got != "" {
		t.Fatalf("foreign: %q, %v", got, err)
	}
	if msg := err.Error(); !strings.Contains(msg, filepath.Join(repo, ".git")) || !strings.Contains(msg, "--target-repo") {
		t.Errorf("foreign: message %q names neither the .git nor the way out", msg)
	}

	// Home is the ceiling: a .git above it is not found from inside it.
	home := filepath.Join(repo, "home")
	mkdirs(t, filepath.Join(home, "x"))
	h := Discovery{Home: home, UID: os.Getuid()}
	if got, err := h.FindGitRoot(filepath.Join(home, "x")); got != "" || err != nil {
		t.Errorf("above home: %q, %v", got, err)
	}
	// ...but a repository at home itself is.
	mkdirs(t, filepath.Join(home, ".git"))
	if got, _ := h.FindGitRoot(filepath.Join(home, "x")); got != home {
		t.Errorf("at home: %q", got)
	}
	// Nothing at all.
	if got, err := me.FindGitRoot(t.TempDir()); err != nil || (got != "" && !Within(got, "/")) {
		t.Errorf("none: %q, %v", got, err)
	}
}

// A filesystem boundary (the device number changes) stops the search:
// a .git on the filesystem above a mount point is not found from below it.
func TestFindGitRootDeviceBoundary(t *testing.T) {
	root := t.TempDir()
	mnt := filepath.Join(root, "mnt")
	mkdirs(t, filepath.Join(root, ".git"), filepath.Join(mnt, "sub"))
	d := Discovery{Home: "/nonexistent-home", UID: os.Getuid(), device: func(p string) (uint64, bool) {
		if Within(p, mnt) {
			return 2, true
		}
		return 1, true
	}}
	if got, err := d.FindGitRoot(filepath.Join(mnt, "sub")); got != "" || err != nil {
		t.Errorf("across a mount point: %q, %v", got, err)
	}
	// The same tree on one device finds it.
	d.device = func(string) (uint64, bool) { return 1, true }
	if got, _ := d.FindGitRoot(filepath.Join(mnt, "sub")); got != root {
		t.Errorf("one device: %q", got)
	}
}

func TestWithin(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real")
	mkdirs(t, filepath.Join(real, "x"))
	link := filepath.Join(root, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p, dir string
		want   bool
	}{
		{real, real, true},
		{filepath.Join(real, "x"), real, true},
		{filepath.Join(link, "x", "missing"), real, true},
		{filepath.Join(root, "realx"), real, false},
		{root, real, false},
	} {
		if got := Within(tc.p, tc.dir); got != tc.want {
			t.Errorf("Within(%s, %s) = %v", tc.p, tc.dir, got)
		}
	}
}
