//go:build linux

package cas

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/fullsend-ai/fullsend/internal/ref"
)

// On Linux, Get walks an entry with directory descriptors and raw
// syscalls: every name is opened with openat relative to the descriptor of
// the directory that listed it, one path element at a time, with
// O_NOFOLLOW (a symlink is never followed: ELOOP) and O_NONBLOCK (a FIFO
// swapped in after the listing cannot block the open). Types come from
// getdents and are confirmed by fstat on the opened file. This is the same
// verification as os.Root does elsewhere (read_other.go), at about a third
// of the system calls: os.Root re-walks every path from the entry root and
// os.File registers each descriptor with the poller.

// AT_FDCWD and O_PATH, which package syscall does not export (the same
// values on every architecture Go supports on Linux).
const (
	atFDCWD = -0x64
	oPath   = 0x200000
)

const (
	dirFlags  = syscall.O_RDONLY | syscall.O_DIRECTORY | syscall.O_NOFOLLOW | syscall.O_CLOEXEC
	fileFlags = syscall.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC
)

// read verifies entry d through a descriptor on its directory. It returns
// the directory's identity with a *corrupt error so the caller removes
// exactly that directory; errChanged when the entry was removed or
// replaced during the read; ErrNotFound when there is none.
func (s *Store) read(d ref.Digest, k *readOpts) (Entry, os.FileInfo, error) {
	path := s.entryDir(d)
	fd, err := openat(atFDCWD, path, dirFlags)
	switch {
	case err == syscall.ENOENT:
		return Entry{}, nil, ErrNotFound
	case err == syscall.ELOOP || err == syscall.ENOTDIR:
		fi, lerr := os.Lstat(path)
		if errors.Is(lerr, fs.ErrNotExist) {
			return Entry{}, nil, errChanged
		}
		if lerr != nil {
			return Entry{}, nil, lerr
		}
		if fi.IsDir() {
			return Entry{}, nil, errChanged // replaced by a directory meanwhile
		}
		return Entry{}, fi, corruptf("%s is a %s, not a directory", path, typeName(fi.Mode().Type()))
	case err != nil:
		return Entry{}, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	root := &fdDir{fd: fd, rel: "."}
	e, err := checkEntry(root, d, k)
	if err == nil {
		defer root.close()
		e.Dir = path
		e.setPaths()
		var st syscall.Stat_t
		if err := fstat(fd, &st); err != nil {
			return Entry{}, nil, &fs.PathError{Op: "fstat", Path: path, Err: err}
		}
		e.LastUsed = time.Unix(st.Mtim.Unix())
		if k != nil {
			// Record the use on the directory just verified (best effort:
			// the LRU clock only; Get falls back to the path), unless it
			// was recorded less than touchFresh ago.
			now := time.Now()
			if d := now.Sub(e.LastUsed); d >= 0 && d < touchFresh {
				k.touched = true
				return e, nil, nil
			}
			if touch(fd, now) == nil {
				e.LastUsed, k.touched = now, true
			}
		}
		return e, nil, nil
	}
	var c *corrupt
	if !errors.As(err, &c) && !errors.Is(err, fs.ErrNotExist) {
		root.close()
		return Entry{}, nil, err
	}
	// The identity of the directory we read, for the removal.
	f := os.NewFile(uintptr(fd), path) // owns fd from here
	id, serr := f.Stat()
	f.Close()
	if serr != nil {
		return Entry{}, nil, serr
	}
	// Entries are immutable and removal renames first: if the name still
	// points at the directory we read, the damage is real.
	if now, lerr := os.Lstat(path); lerr != nil || !os.SameFile(now, id) {
		return Entry{}, nil, errChanged
	}
	if c == nil {
		return Entry{}, id, corruptf("%v", trimRootPath(err))
	}
	return Entry{}, id, err
}

// fdDir is an entryFS on an open directory descriptor.
type fdDir struct {
	fd  int
	rel string // the directory's path inside the entry, "." for the entry
}

func (d *fdDir) join(name string) string {
	if d.rel == "." {
		return name
	}
	return d.rel + "/" + name
}

func (d *fdDir) close() {
	if d.fd >= 0 {
		syscall.Close(d.fd)
		d.fd = -1
	}
}

// Offsets in a struct linux_dirent64 (the same on every architecture).
const (
	direntReclen = 16
	direntType   = 18
	direntName   = 19
)

// direntPool holds getdents buffers (on the heap: an array this large on
// the stack of a fresh request goroutine would make it grow its stack).
var direntPool = sync.Pool{New: func() any { b := make([]byte, 8<<10); return &b }}

func (d *fdDir) list() ([]dirEnt, error) {
	bp := direntPool.Get().(*[]byte)
	defer direntPool.Put(bp)
	buf := *bp
	var out []dirEnt
	for {
		n, err := getdents(d.fd, buf)
		if err != nil {
			return nil, &fs.PathError{Op: "readdirent", Path: d.rel, Err: err}
		}
		if n <= 0 {
			break
		}
		for off := 0; off < n; {
			if off+direntName > n {
				return nil, &fs.PathError{Op: "readdirent", Path: d.rel, Err: syscall.EIO}
			}
			reclen := int(binary.NativeEndian.Uint16(buf[off+direntReclen:]))
			if reclen < direntName || off+reclen > n {
				return nil, &fs.PathError{Op: "readdirent", Path: d.rel, Err: syscall.EIO}
			}
			rec := buf[off : off+reclen]
			off += reclen
			name := rec[direntName:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if string(name) == "." || string(name) == ".." {
				continue
			}
			de := dirEnt{name: string(name)}
			switch rec[direntType] {
			case syscall.DT_REG:
			case syscall.DT_DIR:
				de.typ = fs.ModeDir
			case syscall.DT_LNK:
				de.typ = fs.ModeSymlink
			case syscall.DT_FIFO:
				de.typ = fs.ModeNamedPipe
			case syscall.DT_SOCK:
				de.typ = fs.ModeSocket
			case syscall.DT_CHR:
				de.typ = fs.ModeDevice | fs.ModeCharDevice
			case syscall.DT_BLK:
				de.typ = fs.ModeDevice
			default: // DT_UNKNOWN: the filesystem does not say; ask.
				t, err := d.typeOf(de.name)
				if err != nil {
					return nil, err
				}
				de.typ = t
			}
			out = append(out, de)
		}
	}
	slices.SortFunc(out, func(a, b dirEnt) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// typeOf stats name without following a symlink and without opening the
// file itself (O_PATH: no device or FIFO side effects).
func (d *fdDir) typeOf(name string) (fs.FileMode, error) {
	fd, err := openat(d.fd, name, oPath|syscall.O_NOFOLLOW|syscall.O_CLOEXEC)
	if err != nil {
		return 0, &fs.PathError{Op: "openat", Path: d.join(name), Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := fstat(fd, &st); err != nil {
		return 0, &fs.PathError{Op: "fstat", Path: d.join(name), Err: err}
	}
	return modeType(st.Mode), nil
}

func (d *fdDir) sub(name string) (entryFS, error) {
	fd, err := openat(d.fd, name, dirFlags)
	if err != nil {
		return nil, &fs.PathError{Op: "openat", Path: d.join(name), Err: err}
	}
	return &fdDir{fd: fd, rel: d.join(name)}, nil
}

// openRegular opens name for reading and fstats it; anything but a
// regular file is corrupt.
func (d *fdDir) openRegular(name string) (int, int64, error) {
	fd, err := openat(d.fd, name, fileFlags)
	if err != nil {
		return -1, 0, &fs.PathError{Op: "openat", Path: d.join(name), Err: err}
	}
	var st syscall.Stat_t
	if err := fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return -1, 0, &fs.PathError{Op: "fstat", Path: d.join(name), Err: err}
	}
	if t := modeType(st.Mode); !t.IsRegular() {
		syscall.Close(fd)
		return -1, 0, corruptf("%s is a %s", d.join(name), typeName(t))
	}
	return fd, st.Size, nil
}

func (d *fdDir) readSmall(name string, limit int64) ([]byte, error) {
	fd, size, err := d.openRegular(name)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	r := &fileReader{fd: fd, size: size}
	b := make([]byte, 0, min(max(size, 0), limit)+1)
	for int64(len(b)) <= limit {
		if len(b) == cap(b) {
			b = slices.Grow(b, 4096)
		}
		k, err := r.read(b[len(b):min(cap(b), int(limit+1))])
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: d.join(name), Err: err}
		}
		if k == 0 {
			return b, nil
		}
		b = b[:len(b)+k]
	}
	return nil, corruptf("%s is larger than %d bytes", d.join(name), limit)
}

func (d *fdDir) hash(name string, h hash.Hash, buf []byte, keep int64) (ref.Digest, int64, []byte, error) {
	fd, size, err := d.openRegular(name)
	if err != nil {
		return "", 0, nil, err
	}
	defer syscall.Close(fd)
	h.Reset()
	var n int64
	var b []byte
	if keep > 0 && size <= keep {
		r := &fileReader{fd: fd, size: size}
		n, b, err = hashKeep(func(p []byte) (int, error) {
			k, err := r.read(p)
			if err != nil {
				err = &fs.PathError{Op: "read", Path: d.join(name), Err: err}
			}
			return k, err
		}, size, keep, h, buf)
	} else {
		n, err = hashFD(fd, d.join(name), size, h, buf)
	}
	if err != nil {
		return "", 0, nil, err
	}
	return sumHex(h), n, b, nil
}

// hashFD is hashContent on a raw descriptor: files of mmapMin bytes and
// more are hashed from a read-only mapping, smaller ones read into buf.
func hashFD(fd int, name string, size int64, h hash.Hash, buf []byte) (int64, error) {
	r := &fileReader{fd: fd, size: size}
	if size >= mmapMin && size == int64(int(size)) {
		m, err := syscall.Mmap(fd, 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
		if err == nil {
			err = hashMapped(h, m, name)
			syscall.Munmap(m)
			if err != nil {
				return 0, err
			}
			// Anything appended after fstat is hashed too (and will not
			// match): read on from offset size.
			r.pos, r.pread = size, true
		}
	}
	n := r.pos
	for {
		k, err := r.read(buf)
		if err != nil {
			return n, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if k == 0 {
			return n, nil
		}
		h.Write(buf[:k])
		n += int64(k)
	}
}

// fileReader reads a regular file opened by openRegular, whose size fstat
// reported. A read(2) of a regular file returns fewer bytes than asked for
// only at the end of the file, so a short read that ends exactly at that
// size is taken as the end and the extra read(2) that would return 0 is
// skipped: the bytes read are then exactly the file as fstat measured it,
// the same as reading on to a 0 (a file that grew in between makes the
// read fill the buffer or end elsewhere, and reading goes on to the real
// end). A read returning 0 ends the file as usual.
type fileReader struct {
	fd        int
	size, pos int64
	pread     bool // read at pos with pread(2) (after a mapping)
	eof       bool
}

// read returns 0 at the end of the file.
func (r *fileReader) read(p []byte) (int, error) {
	if r.eof {
		return 0, nil
	}
	var k int
	var err error
	for {
		if r.pread {
			k, err = syscall.Pread(r.fd, p, r.pos)
		} else {
			k, err = syscall.Read(r.fd, p)
		}
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return 0, err
	}
	if k < 0 {
		k = 0
	}
	r.pos += int64(k)
	if k == 0 || (k < len(p) && r.pos == r.size) {
		r.eof = true
	}
	return k, nil
}

func modeType(m uint32) fs.FileMode {
	switch m & syscall.S_IFMT {
	case syscall.S_IFREG:
		return 0
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	default:
		return fs.ModeIrregular
	}
}

// The system calls, retried when interrupted.

func openat(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := syscall.Openat(dirfd, name, flags, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

func fstat(fd int, st *syscall.Stat_t) error {
	for {
		if err := syscall.Fstat(fd, st); err != syscall.EINTR {
			return err
		}
	}
}

// touch sets the access and modification times of the open file fd to t
// (futimens: utimensat with a NULL path).
func touch(fd int, t time.Time) error {
	ts := [2]syscall.Timespec{syscall.NsecToTimespec(t.UnixNano()), syscall.NsecToTimespec(t.UnixNano())}
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_UTIMENSAT, uintptr(fd), 0, uintptr(unsafe.Pointer(&ts[0])), 0, 0, 0)
		if e != syscall.EINTR {
			if e != 0 {
				return e
			}
			return nil
		}
	}
}

func getdents(fd int, buf []byte) (int, error) {
	for {
		n, err := syscall.Getdents(fd, buf)
		if err != syscall.EINTR {
			return n, err
		}
	}
}
