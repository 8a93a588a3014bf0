package limit_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/fullsend/internal/limit"
)

// TestReadAll: at the bound the content comes back whole; one byte over is
// a *TooLargeError naming the bound, never a truncated result.
func TestReadAll(t *testing.T) {
	t.Parallel()
	got, err := limit.ReadAll(strings.NewReader("abcd"), 4)
	if err != nil || string(got) != "abcd" {
		t.Fatalf("at the limit: %q, %v", got, err)
	}
	got, err = limit.ReadAll(strings.NewReader("abcde"), 4)
	var tl *limit.TooLargeError
	if !errors.As(err, &tl) || tl.Max != 4 || got != nil || err.Error() != "larger than 4 bytes" {
		t.Fatalf("over the limit: %q, %v", got, err)
	}
	got, err = limit.ReadAll(strings.NewReader(""), 0)
	if err != nil || len(got) != 0 {
		t.Fatalf("empty at limit 0: %q, %v", got, err)
	}
}

// TestReadFile: the three openers the tree uses (os.Open, *os.Root.Open,
// fs.FS.Open) read the same way; errors name the file.
func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	mem := fstest.MapFS{"f": {Data: []byte("hello")}}
	full := filepath.Join(dir, "f")

	for name, read := range map[string]func(max int64) ([]byte, error){
		"os.Open": func(max int64) ([]byte, error) { return limit.ReadFile(os.Open, full, max) },
		"root":    func(max int64) ([]byte, error) { return limit.ReadFile(root.Open, "f", max) },
		"fs.FS":   func(max int64) ([]byte, error) { return limit.ReadFile(mem.Open, "f", max) },
	} {
		if got, err := read(5); err != nil || string(got) != "hello" {
			t.Errorf("%s at the limit: %q, %v", name, got, err)
		}
		got, err := read(4)
		var tl *limit.TooLargeError
		if !errors.As(err, &tl) || got != nil || !strings.HasSuffix(err.Error(), "f: larger than 4 bytes") {
			t.Errorf("%s over the limit: %q, %v", name, got, err)
		}
	}
	if _, err := limit.ReadFile(root.Open, "missing", 10); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing file: %v", err)
	}
}
