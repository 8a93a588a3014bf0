//go:build unix

package cas

import (
	"errors"
	"os"
	"syscall"
)

// openLockDir opens dir for a lock, never through a symlink (the cache
// may live in a checked-out workspace).
func openLockDir(dir string) (*os.File, error) {
	return os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
}

// lockDir takes an exclusive flock on dir for the life of a writer. The
// kernel drops it when the process dies, however it dies.
func lockDir(dir string) (unlock func(), err error) {
	f, err := openLockDir(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// tryLockDir reports whether nobody holds dir's lock, taking it if so.
func tryLockDir(dir string) (unlock func(), ok bool, err error) {
	f, err := openLockDir(dir)
	if err != nil {
		return nil, false, err
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, false, nil
	}
	if err != nil {
		f.Close()
		return nil, false, err
	}
	return func() { f.Close() }, true, nil
}
