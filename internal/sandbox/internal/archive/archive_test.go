package archive

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func tarOf(t *testing.T, entries ...tar.Header) *bytes.Buffer {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, h := range entries {
		h := h
		if h.Typeflag == tar.TypeReg {
			h.Size = 1
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte("x"))
		}
	}
	tw.Close()
	return &b
}

func TestExtractRejectsEscapes(t *testing.T) {
	for _, name := range []string{"../evil", "./a/../../evil", "/etc/evil"} {
		dest := t.TempDir()
		err := Extract(tarOf(t, tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644}), filepath.Join(dest, "out"), -1, -1)
		if !errors.Is(err, ErrUnsafePath) {
			t.Errorf("%q: %v, want ErrUnsafePath", name, err)
		}
		if _, err := os.Stat(filepath.Join(dest, "evil")); err == nil {
			t.Errorf("%q escaped", name)
		}
	}
}

func TestExtractSkipsSymlinksAndSetuid(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "out")
	err := Extract(tarOf(t,
		tar.Header{Typeflag: tar.TypeDir, Name: "./", Mode: 0o755},
		tar.Header{Typeflag: tar.TypeSymlink, Name: "./link", Linkname: "/etc/passwd"},
		tar.Header{Typeflag: tar.TypeReg, Name: "./suid", Mode: 0o4755},
	), dest, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dest, "link")); err == nil {
		t.Errorf("symlink created")
	}
	st, err := os.Stat(filepath.Join(dest, "suid"))
	if err != nil || st.Mode()&os.ModeSetuid != 0 {
		t.Errorf("setuid kept: %v %v", st.Mode(), err)
	}
}

func TestExtractDoesNotFollowExistingSymlink(t *testing.T) {
	dest := t.TempDir()
	outside := filepath.Join(t.TempDir(), "target")
	os.WriteFile(outside, []byte("keep"), 0o644)
	os.Symlink(outside, filepath.Join(dest, "f"))
	Extract(tarOf(t, tar.Header{Typeflag: tar.TypeReg, Name: "./f", Mode: 0o644}), dest, -1, -1)
	if b, _ := os.ReadFile(outside); string(b) != "keep" {
		t.Errorf("wrote through a symlink: %q", b)
	}
}

func TestRoundTrip(t *testing.T) {
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "a", "b"), 0o755)
	os.WriteFile(filepath.Join(src, "a", "b", "f"), []byte("hello"), 0o600)
	os.Symlink("/etc/passwd", filepath.Join(src, "a", "link"))
	var buf bytes.Buffer
	if err := Write(&buf, src); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "dst")
	if err := Extract(&buf, dst, -1, -1); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "a", "b", "f")); string(b) != "hello" {
		t.Errorf("content %q", b)
	}
	if st, _ := os.Stat(filepath.Join(dst, "a", "b", "f")); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	if _, err := os.Lstat(filepath.Join(dst, "a", "link")); err == nil {
		t.Errorf("symlink travelled")
	}
}

func sized(t *testing.T, files map[string]int) *bytes.Buffer {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "./", Mode: 0o755})
	for name, n := range files {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "./d/", Mode: 0o755})
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(n)}); err != nil {
			t.Fatal(err)
		}
		tw.Write(make([]byte, n))
	}
	tw.Close()
	return &b
}

func TestExtractLimit(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "out")
	if err := ExtractLimit(sized(t, map[string]int{"./a": 60, "./d/b": 40}), dest, -1, -1, 100, 0); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	dest2 := filepath.Join(t.TempDir(), "out")
	err := ExtractLimit(sized(t, map[string]int{"./a": 60, "./d/b": 41}), dest2, -1, -1, 100, 0)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the limit: %v, want ErrTooLarge", err)
	}
}

func TestExtractStagedLeavesNothingOnFailure(t *testing.T) {
	parent := t.TempDir()
	dest := filepath.Join(parent, "out")
	if err := ExtractStaged(sized(t, map[string]int{"./a": 60, "./d/b": 41}), dest, 100, 0); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the limit: %v", err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("left %v", ents)
	}
	// An unsafe entry after good ones: nothing either.
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "./", Mode: 0o755})
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "./ok", Mode: 0o644, Size: 1})
	tw.Write([]byte("x"))
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "../evil", Mode: 0o644, Size: 1})
	tw.Write([]byte("x"))
	tw.Close()
	if err := ExtractStaged(&b, dest, 100, 0); !errors.Is(err, ErrUnsafePath) {
		t.Fatalf("unsafe: %v", err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("left %v", ents)
	}
}

func TestExtractStagedCommits(t *testing.T) {
	parent := t.TempDir()
	dest := filepath.Join(parent, "sub", "out")
	if err := ExtractStaged(sized(t, map[string]int{"./a": 3, "./d/b": 4}), dest, 100, 0); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dest, "d", "b")); err != nil || st.Size() != 4 {
		t.Fatalf("committed tree: %v %v", st, err)
	}
	// Into an existing directory: merged, same names replaced, others kept.
	os.WriteFile(filepath.Join(dest, "keep"), []byte("k"), 0o644)
	if err := ExtractStaged(sized(t, map[string]int{"./a": 9}), dest, 100, 0); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(filepath.Join(dest, "a")); st == nil || st.Size() != 9 {
		t.Errorf("a not replaced: %v", st)
	}
	for _, p := range []string{"keep", "d/b"} {
		if _, err := os.Stat(filepath.Join(dest, p)); err != nil {
			t.Errorf("%s lost in the merge: %v", p, err)
		}
	}
	// A single file replaces a file.
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: ".", Mode: 0o644, Size: 2})
	tw.Write([]byte("hi"))
	tw.Close()
	one := filepath.Join(parent, "one")
	os.WriteFile(one, []byte("old"), 0o644)
	if err := ExtractStaged(&b, one, 100, 0); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(one); string(got) != "hi" {
		t.Errorf("file %q", got)
	}
	ents, _ := os.ReadDir(parent)
	if len(ents) != 2 {
		t.Errorf("staging left behind: %v", ents)
	}
}
