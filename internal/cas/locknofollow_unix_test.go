//go:build unix

package cas

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestLockRefusesSymlink: a writer's directory in tmp/ is locked (and a
// crashed writer's found by its free lock) without following a symlink:
// a name swapped for a link to a directory elsewhere is an error, and
// that directory is neither locked nor removed.
func TestLockRefusesSymlink(t *testing.T) {
	elsewhere := filepath.Join(t.TempDir(), "precious")
	if err := os.Mkdir(elsewhere, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), putPrefix+"abc")
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	if unlock, err := lockDir(link); !errors.Is(err, syscall.ELOOP) && !errors.Is(err, syscall.ENOTDIR) {
		if err == nil {
			unlock()
		}
		t.Errorf("lockDir(symlink) = %v, want ELOOP or ENOTDIR", err)
	}
	if unlock, _, err := tryLockDir(link); !errors.Is(err, syscall.ELOOP) && !errors.Is(err, syscall.ENOTDIR) {
		if err == nil {
			unlock()
		}
		t.Errorf("tryLockDir(symlink) = %v, want ELOOP or ENOTDIR", err)
	}
	if _, err := os.Stat(elsewhere); err != nil {
		t.Errorf("the link's target: %v", err)
	}
}
