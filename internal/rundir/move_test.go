package rundir

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRenameRemove(t *testing.T) {
	base := t.TempDir()
	d := mustOpen(t, base)
	if err := d.MkdirAll("s", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteNew("s/.tmp", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.Rename("s/.tmp", "s/final"); err != nil {
		t.Fatal(err)
	}
	if b, err := d.ReadFile("s/final"); err != nil || string(b) != "x" {
		t.Fatalf("renamed: %q %v", b, err)
	}
	if err := d.Rename("s/final", "../out"); err == nil {
		t.Errorf("rename out of the directory succeeded")
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(base, "ln")); err != nil {
		t.Fatal(err)
	}
	if err := d.Rename("s/final", "ln/final"); err == nil {
		t.Errorf("rename through a symlink succeeded")
	}
	if _, err := os.Stat(filepath.Join(outside, "final")); err == nil {
		t.Errorf("the file left through the symlink")
	}
	if err := d.Remove("s/final"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Lstat("s/final"); !os.IsNotExist(err) {
		t.Errorf("removed file still there: %v", err)
	}
	if err := d.Remove("../x"); err == nil {
		t.Errorf("remove outside succeeded")
	}
}
