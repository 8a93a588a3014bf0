//go:build linux

package cas

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/ref"
)

func openRaw(t *testing.T, data []byte) int {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

func readAllFR(t *testing.T, r *fileReader, bufSize int) []byte {
	t.Helper()
	var out []byte
	buf := make([]byte, bufSize)
	for {
		k, err := r.read(buf)
		if err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			return out
		}
		out = append(out, buf[:k]...)
	}
}

// TestFileReaderEnd: a short read ending at the fstat size is the end
// (no further read(2)); with any other size the file is read to its real
// end, so bytes appended after fstat are never left out.
func TestFileReaderEnd(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 10)
	for _, size := range []int64{0, 50, 99, 101, 200} {
		fd := openRaw(t, data)
		got := readAllFR(t, &fileReader{fd: fd, size: size}, 1000)
		syscall.Close(fd)
		if !bytes.Equal(got, data) {
			t.Errorf("size %d: read %d bytes, want all %d", size, len(got), len(data))
		}
	}
	// Exact size: the end is known after one read; the next read makes no
	// system call (the descriptor is closed: a read(2) would fail).
	fd := openRaw(t, data)
	r := &fileReader{fd: fd, size: int64(len(data))}
	buf := make([]byte, 1000)
	if k, err := r.read(buf); err != nil || k != len(data) {
		t.Fatalf("read = %d, %v", k, err)
	}
	syscall.Close(fd)
	if k, err := r.read(buf); k != 0 || err != nil {
		t.Errorf("read after a short read at the size = %d, %v; want the end without a read(2)", k, err)
	}
	// A full buffer is never the end, even at the size.
	fd = openRaw(t, data)
	defer syscall.Close(fd)
	if got := readAllFR(t, &fileReader{fd: fd, size: 10}, 10); !bytes.Equal(got, data) {
		t.Errorf("full-buffer reads: %d bytes, want %d", len(got), len(data))
	}
}

// TestHashFDStaleSize: bytes beyond the size fstat reported are hashed too,
// on the mapped path and the read path.
func TestHashFDStaleSize(t *testing.T) {
	data := bytes.Repeat([]byte{7}, 3*mmapMin)
	want := sha256.Sum256(data)
	for _, size := range []int64{mmapMin, 2 * mmapMin, 100, int64(len(data))} {
		fd := openRaw(t, data)
		h := sha256.New()
		n, err := hashFD(fd, "f", size, h, make([]byte, bufSize))
		syscall.Close(fd)
		if err != nil || n != int64(len(data)) || !bytes.Equal(h.Sum(nil), want[:]) {
			t.Errorf("size %d: hashFD = %d, %v; want all %d bytes hashed", size, n, err, len(data))
		}
	}
}

// TestGetTouchesStaleOnly: Get records a use whose last record is at least
// touchFresh old, and leaves a fresher one (the LRU clock's resolution),
// reporting the recorded time either way; the entry is verified both ways.
func TestGetTouchesStaleOnly(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"SKILL.md": []byte("x")}
	d, err := TreeHash(files)
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.PutTree(d, Metadata{URL: "https://example.test/x"}, files)
	if err != nil {
		t.Fatal(err)
	}
	mtime := func() time.Time {
		fi, err := os.Stat(e.Dir)
		if err != nil {
			t.Fatal(err)
		}
		return fi.ModTime()
	}
	recent := time.Now().Add(-touchFresh / 2).Truncate(time.Second)
	if err := os.Chtimes(e.Dir, recent, recent); err != nil {
		t.Fatal(err)
	}
	g, err := s.Get(d)
	if err != nil {
		t.Fatal(err)
	}
	if !mtime().Equal(recent) || !g.LastUsed.Equal(recent) {
		t.Errorf("fresh use: mtime %v, LastUsed %v, want both %v (not rewritten)", mtime(), g.LastUsed, recent)
	}
	stale := time.Now().Add(-2 * touchFresh).Truncate(time.Second)
	if err := os.Chtimes(e.Dir, stale, stale); err != nil {
		t.Fatal(err)
	}
	g, err = s.Get(d)
	if err != nil {
		t.Fatal(err)
	}
	if m := mtime(); time.Since(m) > touchFresh/2 || !g.LastUsed.Equal(m) {
		t.Errorf("stale use: mtime %v, LastUsed %v, want now", m, g.LastUsed)
	}
	// Freshness never skips verification.
	if err := os.WriteFile(filepath.Join(e.TreePath, "SKILL.md"), []byte("y"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ref.Digest(d)); err == nil {
		t.Error("Get of a tampered entry with a fresh use: no error")
	}
}
