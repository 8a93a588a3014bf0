package harness

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/ref"
)

// Resolve maps a local reference (as written in the harness) to a file or
// directory on disk: an absolute path as-is, a relative one against Root and
// then Layers (most specific first; the first that exists wins), contained
// in that dir (no "..", no absolute symlinks, no symlinks leading out). A
// URL is an error, and so is any lookup on a harness loaded from a URL
// without a Root (ErrNoLocalDir).
func (h *Harness) Resolve(value string) (string, error) {
	r, err := ref.Parse(value)
	if err != nil {
		return "", err
	}
	if r.Kind == ref.URL {
		return "", fmt.Errorf("%s: not a local reference", r.URL)
	}
	root := h.Root
	if root == "" {
		if k, err := ref.Classify(h.File); err == nil && k == ref.URL {
			return "", fmt.Errorf("%q: %w", value, ErrNoLocalDir)
		}
		root = FindRoot(h.File)
	}
	return resolveLocal(r, root, h.Layers)
}

func resolveLocal(r ref.Ref, root string, layers []string) (string, error) {
	if r.Kind == ref.Absolute {
		p := filepath.Clean(r.Path)
		if _, err := os.Lstat(p); err != nil {
			return p, fmt.Errorf("%s: %w", p, unwrapPathErr(err))
		}
		return p, nil
	}
	clean, err := ref.CleanLocal(r.Path)
	if err != nil {
		if errors.Is(err, ref.ErrEscapes) {
			return "", fmt.Errorf("%q: %w", r.Path, ErrEscapes)
		}
		return "", err
	}
	dirs := make([]string, 0, len(layers)+1)
	dirs = append(dirs, root)
	for i := len(layers) - 1; i >= 0; i-- {
		if layers[i] != root {
			dirs = append(dirs, layers[i])
		}
	}
	for _, d := range dirs {
		p := filepath.Join(d, filepath.FromSlash(clean))
		if _, err := os.Lstat(p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return p, fmt.Errorf("%s: %w", p, unwrapPathErr(err))
		}
		if err := contained(d, clean); err != nil {
			return p, err
		}
		return p, nil
	}
	p := filepath.Join(root, filepath.FromSlash(clean))
	return p, fmt.Errorf("%s: %w", p, ErrNotFound)
}

// contained checks that dir/rel stays inside dir once symlinks are followed,
// and that no component of rel is a symlink with an absolute target.
func contained(dir, rel string) error {
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, unwrapPathErr(err))
	}
	cur := dir
	for _, c := range strings.Split(rel, "/") {
		cur = filepath.Join(cur, c)
		fi, err := os.Lstat(cur)
		if err != nil {
			return fmt.Errorf("%s: %w", cur, unwrapPathErr(err))
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			t, err := os.Readlink(cur)
			if err != nil {
				return fmt.Errorf("%s: %w", cur, unwrapPathErr(err))
			}
			if filepath.IsAbs(t) {
				return fmt.Errorf("%s: symlink to absolute path %s: %w", cur, t, ErrEscapes)
			}
		}
	}
	real, err := filepath.EvalSymlinks(cur)
	if err != nil {
		return fmt.Errorf("%s: %w", cur, unwrapPathErr(err))
	}
	r, err := filepath.Rel(realDir, real)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
		return fmt.Errorf("%s: symlink leads to %s: %w", cur, real, ErrEscapes)
	}
	return nil
}

// wantFile checks that p is a regular file (dir=false) or a directory.
func wantFile(p string, dir bool) error {
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("%s: %w", p, unwrapPathErr(err))
	}
	switch {
	case dir && !fi.IsDir():
		return fmt.Errorf("%s: %w: want a directory", p, ErrWrongType)
	case !dir && !fi.Mode().IsRegular():
		return fmt.Errorf("%s: %w: want a regular file", p, ErrWrongType)
	}
	return nil
}
