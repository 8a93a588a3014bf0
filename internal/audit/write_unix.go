//go:build unix

package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// openFlags refuse a symlink as the last path element (ELOOP) and make
// opening a FIFO without a reader fail (ENXIO) instead of blocking.
const openFlags = syscall.O_WRONLY | syscall.O_APPEND | syscall.O_CREAT | syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC

// appendLine appends line to path with one write(2). It works on a raw
// descriptor (open, fstat, write, close): an *os.File would also register
// the descriptor with the runtime poller and toggle its flags, several
// system calls per record for nothing. The parent directory is created
// only when the open reports it missing.
func appendLine(path string, line []byte) error {
	fd, err := open(path)
	if err == syscall.ENOENT {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		fd, err = open(path)
	}
	if err != nil {
		// Never follow a symlink planted at path (a checked-out workspace
		// could point audit.jsonl at ~/.bashrc) and never block on a FIFO.
		return fmt.Errorf("%w (the log must be a regular file, not a symlink)", &fs.PathError{Op: "open", Path: path, Err: err})
	}
	n, err := appendFD(fd, path, line)
	if cerr := syscall.Close(fd); err == nil && cerr != nil {
		err = &fs.PathError{Op: "close", Path: path, Err: cerr}
	}
	if err == nil && n != len(line) {
		err = fmt.Errorf("short write (%d of %d bytes)", n, len(line))
	}
	return err
}

// appendFD checks that fd is a regular file and writes line to it once.
func appendFD(fd int, path string, line []byte) (int, error) {
	var err error
	var st syscall.Stat_t
	for {
		err = syscall.Fstat(fd, &st)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return 0, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return 0, errors.New("not a regular file")
	}
	n, err := writeOnce(fd, line)
	if err != nil {
		return n, &fs.PathError{Op: "write", Path: path, Err: err}
	}
	return n, nil
}

func open(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, openFlags, 0o600)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// writeOnce issues exactly one write(2) for b (retrying only when it was
// interrupted before writing anything). A loop completing a short write
// could put a second write after another writer's record.
func writeOnce(fd int, b []byte) (int, error) {
	for {
		n, err := syscall.Write(fd, b)
		if err != syscall.EINTR {
			if n < 0 {
				n = 0
			}
			return n, err
		}
	}
}
