//go:build unix

package cas

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
}

// cpuTime is the process's user+system CPU time, so benchmarks can report
// throughput per CPU-second, which other load on the machine does not skew.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestHashContentShrunkFileIsCorrupt(t *testing.T) {
	p := t.TempDir() + "/f"
	if err := os.WriteFile(p, make([]byte, 2*mmapMin), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Truncate(p, 0); err != nil { // after the caller's fstat
		t.Fatal(err)
	}
	_, err = hashContent(f, 2*mmapMin, sha256.New(), make([]byte, bufSize))
	var c *corrupt
	if !errors.As(err, &c) || !strings.Contains(err.Error(), "shrank") {
		t.Errorf("hashContent = %v, want a corrupt error (not a crash)", err)
	}
}

func TestHashContentGrownFileHashesEverything(t *testing.T) {
	p := t.TempDir() + "/f"
	data := make([]byte, 2*mmapMin+10)
	for i := range data {
		data[i] = byte(i)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := hashContent(f, 2*mmapMin, h, make([]byte, bufSize)) // stale size
	want := sha256.Sum256(data)
	if err != nil || n != int64(len(data)) || !bytes.Equal(h.Sum(nil), want[:]) {
		t.Errorf("hashContent = %d, %v; want all %d bytes hashed", n, err, len(data))
	}
}

// emfileChild makes Get fail with EMFILE part-way through verification: an
// I/O error must be returned as such and the entry kept, never treated as
// corruption.
func emfileChild(s *Store) error {
	e, err := s.PutFile("", Metadata{}, []byte("kept on I/O errors"))
	if err != nil {
		return err
	}
	probe, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	lowest := probe.Fd()
	probe.Close()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		return err
	}
	// Room for the entry directory handle only: the next open fails.
	lim := old
	lim.Cur = 1 // lowest+1, counted up: Cur is uint64 on Linux, int64 on the BSDs
	for i := uintptr(0); i < lowest; i++ {
		lim.Cur++
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	_, gerr := s.Get(e.Digest)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		return err
	}
	if !errors.Is(gerr, syscall.EMFILE) || errors.Is(gerr, ErrCorrupt) {
		return fmt.Errorf("Get under EMFILE = %v, want EMFILE and not ErrCorrupt", gerr)
	}
	if _, err := os.Stat(e.Dir); err != nil {
		return fmt.Errorf("entry removed after an I/O error: %v", err)
	}
	if _, err := s.Get(e.Digest); err != nil {
		return fmt.Errorf("Get after the limit was lifted: %v", err)
	}
	return nil
}

func TestIOErrorKeepsEntry(t *testing.T) {
	cmd := helperCmd(t, "emfile|"+filepath.Join(t.TempDir(), "cache")+"|0")
	cmd.Stderr = nil
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
}
