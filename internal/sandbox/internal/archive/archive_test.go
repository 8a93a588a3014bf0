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
