//go:build !linux

package cas

import (
	"errors"
	"hash"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/ref"
)

// read verifies entry d through a handle on its directory. It returns the
// directory's identity with a *corrupt error so the caller removes exactly
// that directory; errChanged when the entry was removed or replaced during
// the read; ErrNotFound when there is none.
func (s *Store) read(d ref.Digest, k *readOpts) (Entry, os.FileInfo, error) {
	path := s.entryDir(d)
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Entry{}, nil, ErrNotFound
	}
	if err != nil {
		return Entry{}, nil, err
	}
	if !fi.IsDir() {
		return Entry{}, fi, corruptf("%s is a %s, not a directory", path, typeName(fi.Mode().Type()))
	}
	root, err := os.OpenRoot(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Entry{}, nil, errChanged
		}
		return Entry{}, nil, err
	}
	defer root.Close()
	id, err := root.Stat(".")
	if err != nil {
		return Entry{}, nil, err
	}
	if !os.SameFile(fi, id) {
		return Entry{}, nil, errChanged
	}
	e, err := checkEntry(rootDir{r: root, dir: "."}, d, k)
	if err == nil {
		e.Dir = path
		e.LastUsed = id.ModTime()
		e.setPaths()
		return e, id, nil
	}
	var c *corrupt
	if errors.As(err, &c) || errors.Is(err, fs.ErrNotExist) {
		// Entries are immutable and removal renames first: if the name
		// still points at the directory we read, the damage is real.
		if now, lerr := os.Lstat(path); lerr != nil || !os.SameFile(now, id) {
			return Entry{}, nil, errChanged
		}
		if c == nil {
			return Entry{}, id, corruptf("%v", trimRootPath(err))
		}
		return Entry{}, id, err
	}
	return Entry{}, nil, err
}

// rootDir is an entryFS on a directory inside an os.Root.
type rootDir struct {
	r   *os.Root
	dir string // "." or a "/"-separated path inside r
}

func (d rootDir) join(name string) string {
	if d.dir == "." {
		return name
	}
	return d.dir + "/" + name
}

func (d rootDir) list() ([]dirEnt, error) {
	f, err := d.r.Open(d.dir)
	if err != nil {
		return nil, err
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil, err
	}
	out := make([]dirEnt, len(ents))
	for i, de := range ents {
		out[i] = dirEnt{name: de.Name(), typ: de.Type()}
	}
	slices.SortFunc(out, func(a, b dirEnt) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

func (d rootDir) sub(name string) (entryFS, error) { return rootDir{r: d.r, dir: d.join(name)}, nil }

func (d rootDir) readSmall(name string, limit int64) ([]byte, error) {
	return readSmall(d.r, d.join(name), limit)
}

func (d rootDir) hash(name string, h hash.Hash, buf []byte, keep int64) (ref.Digest, int64, []byte, error) {
	name = d.join(name)
	f, err := d.r.Open(name)
	if err != nil {
		return "", 0, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", 0, nil, err
	}
	if !fi.Mode().IsRegular() {
		return "", 0, nil, corruptf("%s is a %s", name, typeName(fi.Mode().Type()))
	}
	h.Reset()
	var n int64
	var b []byte
	if keep > 0 && fi.Size() <= keep {
		n, b, err = hashKeep(func(p []byte) (int, error) {
			k, err := f.Read(p)
			if err == io.EOF {
				return k, nil
			}
			return k, err
		}, fi.Size(), keep, h, buf)
	} else {
		n, err = hashContent(f, fi.Size(), h, buf)
	}
	if err != nil {
		return "", 0, nil, err
	}
	return sumHex(h), n, b, nil
}

func (rootDir) close() {}
