//go:build unix

package cas

import (
	"errors"
	"os"
	"syscall"
)

// lockDir takes an exclusive flock on dir for the life of a writer. The
// kernel drops it when the process dies, however it dies.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
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
	f, err := os.Open(dir)
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
