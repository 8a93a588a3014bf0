package archive

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// many is a tar stream: the root, dirs directories and files empty files
// spread over them, and as many symlinks (skipped, not counted).
func many(t *testing.T, dirs, files int) *bytes.Buffer { return manyIn(t, ".", dirs, files) }

// manyIn is many with the root entry named root (a `tar -c BASE` stream).
func manyIn(t *testing.T, root string, dirs, files int) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: root + "/", Mode: 0o755}))
	for i := range dirs {
		must(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: fmt.Sprintf("%s/d%d/", root, i), Mode: 0o755}))
	}
	for i := range files {
		must(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: fmt.Sprintf("%s/f%d", root, i), Mode: 0o644}))
		must(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: fmt.Sprintf("%s/l%d", root, i), Linkname: "f0"}))
	}
	must(tw.Close())
	return &b
}

// The entry count bounds regular files and directories (the root
// included), at the limit and one past it, and ExtractStaged leaves
// nothing behind when it is exceeded.
func TestExtractEntryLimit(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "out")
	if err := ExtractLimit(many(t, 4, 5), dest, -1, -1, 0, 10); err != nil {
		t.Fatalf("at the limit (10 entries): %v", err)
	}
	for _, c := range []struct{ dirs, files int }{{4, 6}, {10, 0}, {0, 10}} {
		parent := t.TempDir()
		err := ExtractStaged(many(t, c.dirs, c.files), filepath.Join(parent, "out"), 0, 10)
		if !errors.Is(err, ErrTooMany) || !strings.Contains(err.Error(), "more than 10 files and directories") {
			t.Fatalf("%d dirs, %d files: %v, want ErrTooMany", c.dirs, c.files, err)
		}
		if ents, _ := os.ReadDir(parent); len(ents) != 0 {
			t.Errorf("%d dirs, %d files: left %v", c.dirs, c.files, ents)
		}
	}
	// Zero: no count limit.
	if err := ExtractLimit(many(t, 50, 50), filepath.Join(t.TempDir(), "out"), -1, -1, 0, 0); err != nil {
		t.Fatalf("no limit: %v", err)
	}
	// ReceiveTar reports the count first and stops the producer.
	err := ReceiveTar(filepath.Join(t.TempDir(), "out"), 0, 3, func(w io.Writer) (int, string, error) {
		_, err := io.Copy(w, manyIn(t, "output", 0, 5))
		return 1, "killed", err
	})
	if !errors.Is(err, ErrTooMany) {
		t.Fatalf("ReceiveTar: %v, want ErrTooMany", err)
	}
}
