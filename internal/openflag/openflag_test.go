//go:build unix

package openflag

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestNoFollowRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(link, os.O_RDONLY|NoFollow, 0)
	if err == nil {
		f.Close()
		t.Fatal("opened a symlink with NoFollow")
	}
	if !errors.Is(err, syscall.ELOOP) {
		t.Fatalf("error = %v, want ELOOP", err)
	}
}

func TestNonBlockFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// Opening a FIFO for writing with no reader fails at once (ENXIO)
	// instead of blocking.
	f, err := os.OpenFile(p, os.O_WRONLY|NonBlock, 0)
	if err == nil {
		f.Close()
		t.Fatal("opened a FIFO without a reader")
	}
	if !errors.Is(err, syscall.ENXIO) {
		t.Fatalf("error = %v, want ENXIO", err)
	}
}
