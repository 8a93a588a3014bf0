package harness

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// Resolve maps a local reference (as written in the harness) to a file or
// directory on disk: an absolute path as-is, a relative one against Root and
// then Layers (most specific first; the first that exists wins), contained
// in that dir (no "..", no absolute symlinks, no symlinks leading out). A
// URL is an error, and so is any lookup on a harness loaded from a URL
// without a Root (ErrNoLocalDir).
//
// Resolve only names the path: what is read must be read through
// OpenLocal, which enforces the same containment at the moment of use.
func (h *Harness) Resolve(value string) (string, error) {
	r, root, err := h.localRef(value)
	if err != nil {
		return "", err
	}
	return resolveLocal(r, root, h.Layers)
}

// OpenLocal resolves value as Resolve does and opens what it names for
// reading. A relative reference is opened through an os.Root on the dir it
// was found in (the fullsend dir or a layer): every path component is
// resolved again from that dir at the moment of use, and a symlink swapped
// in after validation that leads out of it (or is absolute) makes the open
// fail with ErrEscapes instead of being followed. An absolute reference is
// opened as-is. The caller closes the returned Local.
func (h *Harness) OpenLocal(value string) (*Local, error) {
	r, root, err := h.localRef(value)
	if err != nil {
		return nil, err
	}
	return openLocal(r, root, h.Layers)
}

// localRef parses a local reference and returns the fullsend dir it
// resolves against.
func (h *Harness) localRef(value string) (ref.Ref, string, error) {
	r, err := ref.Parse(value)
	if err != nil {
		return r, "", err
	}
	if r.Kind == ref.URL {
		return r, "", fmt.Errorf("%s: not a local reference", r.URL)
	}
	root := h.Root
	if root == "" {
		if k, err := ref.Classify(h.File); err == nil && k == ref.URL {
			return r, "", fmt.Errorf("%q: %w", value, ErrNoLocalDir)
		}
		root = FindRoot(h.File)
	}
	return r, root, nil
}

func resolveLocal(r ref.Ref, root string, layers []string) (string, error) {
	_, _, p, err := locate(r, root, layers)
	return p, err
}

// locate finds a local reference: for a relative one the dir it is found
// in (root, then layers most specific first) and its clean path inside
// that dir, checked for containment by name; for an absolute one dir and
// rel are "". p is the host path.
func locate(r ref.Ref, root string, layers []string) (dir, rel, p string, err error) {
	if r.Kind == ref.Absolute {
		p := filepath.Clean(r.Path)
		if _, err := os.Lstat(p); err != nil {
			return "", "", p, fmt.Errorf("%s: %w", p, unwrapPathErr(err))
		}
		return "", "", p, nil
	}
	clean, err := ref.CleanLocal(r.Path)
	if err != nil {
		if errors.Is(err, ref.ErrEscapes) {
			return "", "", "", fmt.Errorf("%q: %w", r.Path, ErrEscapes)
		}
		return "", "", "", err
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
			return "", "", p, fmt.Errorf("%s: %w", p, unwrapPathErr(err))
		}
		if err := contained(d, clean); err != nil {
			return "", "", p, err
		}
		return d, clean, p, nil
	}
	p = filepath.Join(root, filepath.FromSlash(clean))
	return "", "", p, fmt.Errorf("%s: %w", p, ErrNotFound)
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

// Local is a local reference opened by OpenLocal: a regular file or a
// directory, held open so that what is read is what was checked. Close it.
type Local struct {
	// Path is the host path, for messages and for consumers that still
	// need a name (the sandbox upload, host scripts).
	Path string
	info fs.FileInfo
	file *os.File // a regular file
	dir  *os.Root // a directory
}

// errRootEscape is the text of the error os.Root returns for a path that
// leads out of it (a ".." above it, an absolute symlink or a symlink
// leading out); os does not export the value.
const errRootEscape = "path escapes from parent"

// openNonblock: a FIFO swapped in for a file cannot block the open.
const openNonblock = os.O_RDONLY | syscall.O_NONBLOCK

func openLocal(r ref.Ref, root string, layers []string) (*Local, error) {
	dir, rel, p, err := locate(r, root, layers)
	if err != nil {
		return nil, err
	}
	if dir == "" {
		return openAbsolute(p)
	}
	rt, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, unwrapPathErr(err))
	}
	defer rt.Close()
	return openInRoot(rt, rel, p)
}

// openInRoot opens rel inside rt (symlinks that stay inside rt are
// followed, as the containment rule allows).
func openInRoot(rt *os.Root, rel, p string) (*Local, error) {
	name := filepath.FromSlash(rel)
	return openChecked(p, func() (fs.FileInfo, error) { return rt.Stat(name) },
		func() (*os.File, error) { return rt.OpenFile(name, openNonblock, 0) },
		func() (*os.Root, error) { return rt.OpenRoot(name) })
}

// openAbsolute opens an absolute reference as-is: it names a host path
// the harness author chose, with no containment to keep.
func openAbsolute(p string) (*Local, error) {
	return openChecked(p, func() (fs.FileInfo, error) { return os.Stat(p) },
		func() (*os.File, error) { return os.OpenFile(p, openNonblock, 0) },
		func() (*os.Root, error) { return os.OpenRoot(p) })
}

// openChecked stats p, refuses anything but a regular file or a directory
// before opening it (a device is never opened), opens it, and checks that
// what it opened is what it stat'ed.
func openChecked(p string, stat func() (fs.FileInfo, error), open func() (*os.File, error), openDir func() (*os.Root, error)) (*Local, error) {
	fi, err := stat()
	if err != nil {
		return nil, rootErr(p, err)
	}
	var st fs.FileInfo
	l := &Local{Path: p}
	switch {
	case fi.Mode().IsRegular():
		if l.file, err = open(); err != nil {
			return nil, rootErr(p, err)
		}
		st, err = l.file.Stat()
	case fi.IsDir():
		if l.dir, err = openDir(); err != nil {
			return nil, rootErr(p, err)
		}
		st, err = l.dir.Stat(".")
	default:
		return nil, fmt.Errorf("%s: %w: not a regular file or directory", p, ErrWrongType)
	}
	if err == nil && !os.SameFile(fi, st) {
		err = fmt.Errorf("%s: changed while being opened", p)
	} else if err != nil {
		err = fmt.Errorf("%s: %w", p, unwrapPathErr(err))
	}
	if err != nil {
		l.Close()
		return nil, err
	}
	l.info = st
	return l, nil
}

// rootErr turns an error of os.Root into this package's: ErrNotFound,
// ErrEscapes, or the underlying error, naming p.
func rootErr(p string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Err.Error() == errRootEscape {
		return fmt.Errorf("%s: %w", p, ErrEscapes)
	}
	return fmt.Errorf("%s: %w", p, unwrapPathErr(err))
}

// Close releases the open file or directory.
func (l *Local) Close() error {
	if l.file != nil {
		return l.file.Close()
	}
	return l.dir.Close()
}

// IsDir reports whether l is a directory.
func (l *Local) IsDir() bool { return l.dir != nil }

// Info describes the opened file or directory.
func (l *Local) Info() fs.FileInfo { return l.info }

// want checks that l is a directory (dir) or a regular file.
func (l *Local) want(dir bool) error {
	switch {
	case dir && !l.IsDir():
		return fmt.Errorf("%s: %w: want a directory", l.Path, ErrWrongType)
	case !dir && l.IsDir():
		return fmt.Errorf("%s: %w: want a regular file", l.Path, ErrWrongType)
	}
	return nil
}

// readHarness reads the regular file l as a harness: at most
// yamlx.MaxFileSize bytes (yamlx refuses more).
func (l *Local) readHarness() ([]byte, error) {
	if err := l.want(false); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(l.file, yamlx.MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.Path, unwrapPathErr(err))
	}
	return b, nil
}

// ReadAll reads the whole regular file l.
func (l *Local) ReadAll() ([]byte, error) {
	if l.file == nil {
		return nil, fmt.Errorf("%s: %w: a directory, want a file", l.Path, ErrWrongType)
	}
	b, err := io.ReadAll(l.file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.Path, unwrapPathErr(err))
	}
	return b, nil
}

// Lstat describes name (slash-separated) inside the directory l without
// following a symlink as its last element.
func (l *Local) Lstat(name string) (fs.FileInfo, error) {
	if l.dir == nil {
		return nil, fmt.Errorf("%s: %w: a file, want a directory", l.Path, ErrWrongType)
	}
	fi, err := l.dir.Lstat(filepath.FromSlash(name))
	if err != nil {
		return nil, rootErr(filepath.Join(l.Path, filepath.FromSlash(name)), err)
	}
	return fi, nil
}

// ReadFile reads name (slash-separated) inside the directory l. It must be
// a regular file; a symlink is refused ("is a symlink"): a directory's
// symlinks are not part of it (the tree hash and the sandbox upload leave
// them out).
func (l *Local) ReadFile(name string) ([]byte, error) {
	p := filepath.Join(l.Path, filepath.FromSlash(name))
	lfi, err := l.Lstat(name)
	if err != nil {
		return nil, err
	}
	if lfi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s: %w: is a symlink", p, ErrWrongType)
	}
	f, err := l.dir.OpenFile(filepath.FromSlash(name), openNonblock, 0)
	if err != nil {
		return nil, rootErr(p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, unwrapPathErr(err))
	}
	if !fi.Mode().IsRegular() || !os.SameFile(lfi, fi) {
		return nil, fmt.Errorf("%s: %w: not a regular file (or replaced while being opened)", p, ErrWrongType)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, unwrapPathErr(err))
	}
	return b, nil
}

// Files reads every regular file below the directory l, keyed by its
// slash-separated path. Symlinks and special files are skipped and never
// followed; everything is read through l's os.Root, so nothing outside
// the directory is reached even if the tree changes meanwhile.
func (l *Local) Files() (map[string][]byte, error) {
	if l.dir == nil {
		return nil, fmt.Errorf("%s: %w: a file, want a directory", l.Path, ErrWrongType)
	}
	out := map[string][]byte{}
	err := fs.WalkDir(l.dir.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return rootErr(filepath.Join(l.Path, filepath.FromSlash(name)), err)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := l.ReadFile(name)
		if err != nil {
			return err
		}
		out[name] = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
