package rundir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/openflag"
)

// ErrUntrusted marks a run directory entry refused by the rules of this
// package: a symlink, something other than a regular file or directory, a
// file of another user, or a path that leaves the directory.
var ErrUntrusted = errors.New("refused in a run directory")

// Dir is one run directory (or a directory inside one), held open as an
// os.Root.
type Dir struct {
	path string
	root *os.Root
}

// refuse builds the one-line error for entry rel of d.
func refuse(path, rel, why string) error {
	p := path
	if rel != "" && rel != "." {
		p = filepath.Join(path, filepath.FromSlash(rel))
	}
	return fmt.Errorf("%s: %s: %w (run directories are untrusted input; remove it)", p, why, ErrUntrusted)
}

// checkDirInfo accepts a real directory owned by the user.
func checkDirInfo(path, rel string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return refuse(path, rel, "a symlink")
	case !fi.IsDir():
		return refuse(path, rel, "not a directory")
	case !ownedByUser(fi):
		return refuse(path, rel, "owned by another user")
	}
	return nil
}

// checkFileInfo accepts a regular file owned by the user.
func checkFileInfo(path, rel string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return refuse(path, rel, "a symlink")
	case !fi.Mode().IsRegular():
		return refuse(path, rel, "not a regular file")
	case !ownedByUser(fi):
		return refuse(path, rel, "owned by another user")
	}
	return nil
}

// Open opens the existing directory path: it must be a directory itself
// (not a symlink to one) owned by the user.
func Open(path string) (*Dir, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if err := checkDirInfo(path, "", fi); err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	if st, err := r.Stat("."); err != nil || !os.SameFile(fi, st) {
		r.Close()
		return nil, refuse(path, "", "replaced while being opened")
	}
	return &Dir{path: path, root: r}, nil
}

// Make creates the new directory name (mode 0700) under the existing
// directory parent and opens it; an existing entry of that name is an
// error (fs.ErrExist).
func Make(parent, name string) (*Dir, error) {
	p, err := Open(parent)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if err := p.root.Mkdir(name, 0o700); err != nil {
		return nil, err
	}
	return p.Sub(name)
}

// Path is the directory's path.
func (d *Dir) Path() string { return d.path }

// Close releases the directory.
func (d *Dir) Close() error {
	if d == nil || d.root == nil {
		return nil
	}
	return d.root.Close()
}

// clean checks that rel is a local slash- or OS-separated path and
// returns it in OS form.
func (d *Dir) clean(rel string) (string, error) {
	r := filepath.FromSlash(rel)
	if !filepath.IsLocal(r) {
		return "", refuse(d.path, rel, "not a path inside the run directory")
	}
	return filepath.Clean(r), nil
}

// checkParents refuses a symlink (or non-directory) at any element of
// rel's directory; missing elements are fine (nothing to follow).
func (d *Dir) checkParents(rel string) error {
	parts := strings.Split(rel, string(filepath.Separator))
	for i := 1; i < len(parts); i++ {
		p := filepath.Join(parts[:i]...)
		fi, err := d.root.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := checkDirInfo(d.path, p, fi); err != nil {
			return err
		}
	}
	return nil
}

// Sub opens the existing directory rel inside d.
func (d *Dir) Sub(rel string) (*Dir, error) {
	r, fi, err := d.lstat(rel)
	if err != nil {
		return nil, err
	}
	if err := checkDirInfo(d.path, r, fi); err != nil {
		return nil, err
	}
	sub, err := d.root.OpenRoot(r)
	if err != nil {
		return nil, err
	}
	if st, err := sub.Stat("."); err != nil || !os.SameFile(fi, st) {
		sub.Close()
		return nil, refuse(d.path, r, "replaced while being opened")
	}
	return &Dir{path: filepath.Join(d.path, r), root: sub}, nil
}

// MkdirAll creates the directory rel (and missing parents, mode perm)
// inside d; an existing element must be a real directory of the user.
func (d *Dir) MkdirAll(rel string, perm fs.FileMode) error {
	r, err := d.clean(rel)
	if err != nil {
		return err
	}
	parts := strings.Split(r, string(filepath.Separator))
	for i := 1; i <= len(parts); i++ {
		p := filepath.Join(parts[:i]...)
		fi, err := d.root.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			if err := d.root.Mkdir(p, perm); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			if fi, err = d.root.Lstat(p); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		if err := checkDirInfo(d.path, p, fi); err != nil {
			return err
		}
	}
	return nil
}

// Lstat describes the entry rel without following it.
func (d *Dir) Lstat(rel string) (fs.FileInfo, error) {
	_, fi, err := d.lstat(rel)
	return fi, err
}

// lstat cleans rel, checks every parent element and describes the entry
// without following it; r is the cleaned path.
func (d *Dir) lstat(rel string) (r string, fi fs.FileInfo, err error) {
	if r, err = d.clean(rel); err != nil {
		return "", nil, err
	}
	if err = d.checkParents(r); err != nil {
		return "", nil, err
	}
	fi, err = d.root.Lstat(r)
	return r, fi, err
}

// openExisting opens the existing regular file rel with flag, after
// checking every element, and checks that what was opened is what was
// checked (a swap in between is refused).
func (d *Dir) openExisting(rel string, flag int) (*os.File, error) {
	r, fi, err := d.lstat(rel)
	if err != nil {
		return nil, err
	}
	if err := checkFileInfo(d.path, r, fi); err != nil {
		return nil, err
	}
	f, err := d.root.OpenFile(r, flag|openflag.NoFollow|openflag.NonBlock, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !os.SameFile(fi, st) {
		err = refuse(d.path, r, "replaced while being opened")
	}
	if err == nil {
		err = checkFileInfo(d.path, r, st)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// OpenFile opens the existing regular file rel for reading.
func (d *Dir) OpenFile(rel string) (*os.File, error) {
	return d.openExisting(rel, os.O_RDONLY)
}

// ReadFile reads the regular file rel.
func (d *Dir) ReadFile(rel string) ([]byte, error) {
	f, err := d.OpenFile(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Create creates the new file rel (O_EXCL: an existing entry, symlink or
// not, is an error), mode perm.
func (d *Dir) Create(rel string, perm fs.FileMode) (*os.File, error) {
	r, err := d.clean(rel)
	if err != nil {
		return nil, err
	}
	if err := d.checkParents(r); err != nil {
		return nil, err
	}
	return d.root.OpenFile(r, os.O_WRONLY|os.O_CREATE|os.O_EXCL|openflag.NoFollow, perm)
}

// WriteNew writes data to the new file rel (see Create); on a write
// error the file is removed.
func (d *Dir) WriteNew(rel string, data []byte, perm fs.FileMode) error {
	f, err := d.Create(rel, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r, _ := d.clean(rel)
		d.root.Remove(r)
	}
	return err
}

// WriteAtomic replaces rel with data: a new temporary file beside it,
// renamed over it. A symlink at rel is replaced, never followed.
func (d *Dir) WriteAtomic(rel string, data []byte, perm fs.FileMode) error {
	r, err := d.clean(rel)
	if err != nil {
		return err
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(r), "."+filepath.Base(r)+".tmp-"+hex.EncodeToString(b[:]))
	if err := d.WriteNew(tmp, data, perm); err != nil {
		return err
	}
	if err := d.root.Chmod(tmp, perm); err != nil {
		d.root.Remove(tmp)
		return err
	}
	if err := d.root.Rename(tmp, r); err != nil {
		d.root.Remove(tmp)
		return err
	}
	return nil
}

// Append opens rel for appending: created (O_EXCL) when missing, else the
// existing regular file of the user.
func (d *Dir) Append(rel string, perm fs.FileMode) (*os.File, error) {
	f, err := d.Create(rel, perm)
	if err == nil || !errors.Is(err, fs.ErrExist) {
		if err != nil {
			return nil, err
		}
		// O_APPEND for the writes that follow: reopen the file just made.
		f.Close()
	}
	return d.openExisting(rel, os.O_WRONLY|os.O_APPEND)
}

// OpenWrite opens the existing regular file rel for writing (no
// truncation), e.g. to cut a torn last line.
func (d *Dir) OpenWrite(rel string) (*os.File, error) {
	return d.openExisting(rel, os.O_WRONLY)
}

// MaxTreeEntries bounds CheckTree's walk.
const MaxTreeEntries = 100000

// CheckTree walks the whole directory d and refuses the first symlink,
// special file or entry of another user it finds: a run directory about
// to be continued (run --resume) must hold nothing but the user's own
// regular files and directories, so that no later write in it, by
// fullsend or a host script, can be redirected.
func (d *Dir) CheckTree() error {
	n := 0
	return fs.WalkDir(d.root.FS(), ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n++; n > MaxTreeEntries {
			return refuse(d.path, "", fmt.Sprintf("more than %d entries", MaxTreeEntries))
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		if e.IsDir() {
			return checkDirInfo(d.path, p, fi)
		}
		return checkFileInfo(d.path, p, fi)
	})
}

// OpenRun opens run id of the runs directory runsDir: both must be real
// directories of the user (a runs directory that is a symlink, e.g. one
// a checkout commits as .fullsend/runs, could point at another
// workspace's runs).
func OpenRun(runsDir, id string) (*Dir, error) {
	p, err := Open(runsDir)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return p.Sub(id)
}

// CheckRunsDir refuses a runs directory that exists but is not a real
// directory of the user; a missing one is fine (no runs).
func CheckRunsDir(runsDir string) error {
	fi, err := os.Lstat(runsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return checkDirInfo(runsDir, "", fi)
}
