package trust

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrForeignRepo marks a .git found by discovery that another user owns.
var ErrForeignRepo = errors.New("owned by another user")

// Discovery bounds the search of FindGitRoot. The zero value uses the
// process's user and $HOME.
type Discovery struct {
	// Home is the user's home directory: the search never looks above it
	// when it starts inside it. "" = os.UserHomeDir.
	Home string
	// UID is the user the .git must belong to; -1 = os.Getuid.
	UID int
	// device is the filesystem of a path (tests); nil = deviceOf.
	device func(string) (uint64, bool)
}

// FindGitRoot returns the nearest directory at or above dir that holds
// .git, "" when there is none within bounds, and an error (wrapping
// ErrForeignRepo) when the nearest .git belongs to another user. The
// search stops at the user's home directory and where the device number
// changes (a mount point).
func FindGitRoot(dir string) (string, error) {
	return Discovery{UID: -1}.FindGitRoot(dir)
}

// FindGitRoot is FindGitRoot with d's bounds.
func (d Discovery) FindGitRoot(dir string) (string, error) {
	cur, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	home := d.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home != "" {
		if h, err := filepath.Abs(home); err == nil {
			home = h
		}
	}
	uid := d.UID
	if uid < 0 {
		uid = os.Getuid()
	}
	// The ceiling: the home directory when the search starts inside it.
	ceiling := ""
	if home != "" && (cur == home || Inside(cur, home)) {
		ceiling = home
	}
	devOf := d.device
	if devOf == nil {
		devOf = deviceOf
	}
	dev, devOK := devOf(cur)
	for {
		g := filepath.Join(cur, ".git")
		if fi, err := os.Lstat(g); err == nil {
			if owner, ok := ownerOf(fi); ok && uid >= 0 && owner != uid {
				return "", fmt.Errorf("%s is %w (uid %d; you are uid %d): not used as the target repository (git's safe.directory rule); give --target-repo DIR, or run inside a repository you own",
					g, ErrForeignRepo, owner, uid)
			}
			return cur, nil
		}
		if cur == ceiling {
			return "", nil
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", nil
		}
		if devOK {
			if pd, ok := devOf(parent); ok && pd != dev {
				return "", nil // a filesystem boundary
			}
		}
		cur = parent
	}
}

// Inside reports whether p lies strictly inside dir (both absolute and
// clean; no symlink resolution).
func Inside(p, dir string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && r != "." && r != ".." && !filepath.IsAbs(r) &&
		(len(r) < 3 || r[:3] != ".."+string(filepath.Separator))
}

// Within reports whether p is dir or lies inside it, comparing both as
// given and with symlinks resolved (the longest existing prefix), so a
// symlinked path into a work tree is still inside it.
func Within(p, dir string) bool {
	if p == dir || Inside(p, dir) {
		return true
	}
	rp, rd := realPath(p), realPath(dir)
	return rp == rd || Inside(rp, rd)
}

// realPath resolves symlinks in the longest existing prefix of p.
func realPath(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}
