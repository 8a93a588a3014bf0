//go:build unix

package audit

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSymlinkNeverFollowed: a symlink planted at the log's path (as a
// checked-out workspace could do, pointing it at a shell start-up file) is
// refused and the target is left byte for byte as it was.
func TestSymlinkNeverFollowed(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "bashrc")
	if err := os.WriteFile(target, []byte("# rc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, link := range []string{target, "bashrc", filepath.Join(dir, "missing")} {
		p := filepath.Join(dir, "cache", FileName)
		os.RemoveAll(filepath.Dir(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(link, p); err != nil {
			t.Fatal(err)
		}
		err := Open(p).Append(Entry{TraceID: "t", URL: "https://x.example/$(touch${IFS}pwned)"})
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("link to %s: err = %v, want a refusal naming %s", link, err, p)
		}
		if b, _ := os.ReadFile(target); string(b) != "# rc\n" {
			t.Errorf("link to %s: target written through the symlink: %q", link, b)
		}
		if _, err := os.Lstat(filepath.Join(dir, "missing")); err == nil {
			t.Errorf("dangling symlink target was created")
		}
	}
}

// TestFIFORefusedWithoutBlocking: a FIFO at the log's path is an error at
// once, not a hang waiting for a reader.
func TestFIFORefusedWithoutBlocking(t *testing.T) {
	p := filepath.Join(t.TempDir(), FileName)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- AppendJSONL(p, 1) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("err = %v, want a refusal naming %s", err, p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("AppendJSONL blocked on a FIFO")
	}
}
