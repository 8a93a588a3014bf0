//go:build unix

package cas

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/ref"
)

// TestOpenRefusesSymlinks: neither the cache directory nor a directory the
// store owns below it may be a symlink (a checked-out workspace could ship
// .fullsend-cache -> ~/.bashrc.d); nothing is created in the target.
func TestOpenRefusesSymlinks(t *testing.T) {
	for _, link := range []string{"", "resources", "resources/sha256", "resources/tmp"} {
		t.Run("link "+link, func(t *testing.T) {
			base := t.TempDir()
			target := filepath.Join(base, "elsewhere")
			if err := os.Mkdir(target, 0o700); err != nil {
				t.Fatal(err)
			}
			root := filepath.Join(base, "cache")
			if link != "" {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(root, link)), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
				t.Fatal(err)
			}
			_, err := Open(root)
			if !errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), "symlink") {
				t.Fatalf("Open = %v, want ErrUnsafeDir naming the symlink", err)
			}
			if des, _ := os.ReadDir(target); len(des) != 0 {
				t.Errorf("Open created %d entries in the symlink's target", len(des))
			}
		})
	}
	// A regular file where a directory belongs.
	root := filepath.Join(t.TempDir(), "cache")
	os.MkdirAll(root, 0o700)
	os.WriteFile(filepath.Join(root, "resources"), nil, 0o600)
	if _, err := Open(root); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("Open with resources as a file = %v", err)
	}
}

// TestOpenDropsGroupWrite: the cache is 0700 by design; a group- or
// world-writable directory of ours loses those bits, so another user
// cannot swap an entry between Get and its use.
func TestOpenDropsGroupWrite(t *testing.T) {
	root := filepath.Join(t.TempDir(), "cache")
	for _, d := range []string{root, filepath.Join(root, "resources"), filepath.Join(root, "resources", "sha256")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Open(root); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{root, filepath.Join(root, "resources"), filepath.Join(root, "resources", "sha256"), filepath.Join(root, "resources", "tmp")} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o022 != 0 {
			t.Errorf("%s mode %04o is still writable by others", d, fi.Mode().Perm())
		}
	}
}

// TestOpenRefusesForeignOwner: a cache directory owned by another user is
// refused (needs root to set up).
func TestOpenRefusesForeignOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	root := filepath.Join(t.TempDir(), "cache")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(root, 65534, 65534); err != nil {
		t.Skip(err)
	}
	if _, err := Open(root); !errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), "owned by uid 65534") {
		t.Fatalf("Open = %v, want ErrUnsafeDir", err)
	}
}

// TestEntrySymlinkRemovalSparesTarget: an entry planted as a symlink to a
// directory elsewhere is corrupt; removing it removes the link only.
func TestEntrySymlinkRemovalSparesTarget(t *testing.T) {
	s := newStore(t)
	c := []byte("pinned")
	d := mustPut(t, s, c)
	elsewhere := filepath.Join(t.TempDir(), "precious")
	if err := os.Mkdir(elsewhere, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(elsewhere, "content"), c, 0o600)
	os.WriteFile(filepath.Join(elsewhere, "metadata.json"), []byte(`{"sha256":"`+string(d)+`","type":"file"}`), 0o600)
	os.WriteFile(filepath.Join(elsewhere, "keep"), []byte("x"), 0o600)
	dir := filepath.Join(s.entries, string(d))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(d); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Get = %v, want ErrCorrupt", err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("symlink entry still there: %v", err)
	}
	for _, f := range []string{"content", "metadata.json", "keep"} {
		if _, err := os.Stat(filepath.Join(elsewhere, f)); err != nil {
			t.Errorf("removal reached the symlink's target: %v", err)
		}
	}
	// Clean and Verify leave the target alone too.
	os.Symlink(elsewhere, dir)
	if _, err := s.Clean(0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "keep")); err != nil {
		t.Errorf("Clean reached the symlink's target: %v", err)
	}
}

// TestListSurvivesHostileMetadata: `cache ls` reads metadata.json only as
// a small regular file: a symlink to /dev/zero or a FIFO neither hangs nor
// exhausts it, and strings with control characters are not listed.
func TestListSurvivesHostileMetadata(t *testing.T) {
	s := newStore(t)
	var dirs []string
	for _, c := range []string{"a", "b", "c", "d"} {
		dirs = append(dirs, filepath.Join(s.entries, string(mustPut(t, s, []byte(c)))))
	}
	meta := func(i int) string { return filepath.Join(dirs[i], "metadata.json") }
	os.Remove(meta(0))
	os.Symlink("/dev/zero", meta(0))
	os.Remove(meta(1))
	mkfifo(t, meta(1))
	os.Remove(meta(2))
	os.Symlink("content", meta(2))
	rewriteMeta(t, dirs[3], func(m *Metadata) { m.URL = "https://x.example/\x1b]0;pwned\x07\n" })

	done := make(chan error, 1)
	var got []Entry
	go func() {
		var err error
		got, err = s.List()
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("List hangs on hostile metadata.json")
	}
	if len(got) != 4 {
		t.Fatalf("List = %d entries", len(got))
	}
	for _, e := range got {
		if e.Meta.URL != "" || e.Meta.Type != "" {
			t.Errorf("entry %s listed with metadata %+v", e.Digest, e.Meta)
		}
	}
}

// TestMetadataControlCharacters: Put refuses them (nothing written); Get
// of an entry whose metadata.json carries them reports it corrupt.
func TestMetadataControlCharacters(t *testing.T) {
	s := newStore(t)
	for _, bad := range []Metadata{
		{URL: "https://x.example/a\nb"},
		{URL: "https://x.example/\x1b[31m"},
		{URL: "https://x.example/\u009b"},
		{ContentType: "text/plain\r\nX: y"},
		{URL: "https://x.example/\xff"},
		{URL: "https://x.example/" + strings.Repeat("a", maxMetaString)},
	} {
		if _, err := s.PutFile("", bad, []byte("x")); err == nil {
			t.Errorf("PutFile accepted metadata %q", bad.URL+bad.ContentType)
		}
	}
	if l, _ := s.List(); len(l) != 0 {
		t.Fatalf("refused Put wrote %d entries", len(l))
	}
	d := mustPut(t, s, []byte("y"))
	rewriteMeta(t, filepath.Join(s.entries, string(d)), func(m *Metadata) { m.URL = "https://x.example/\x1b[2J" })
	if _, err := s.Get(d); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "control character") {
		t.Errorf("Get = %v, want ErrCorrupt", err)
	}
}

// TestReadFile: ReadFile returns the verified bytes; a symlinked or
// rewritten content file is corrupt, a directory entry is refused.
func TestReadFile(t *testing.T) {
	s := newStore(t)
	c := []byte("the pinned content")
	d := mustPut(t, s, c)
	e, b, err := s.ReadFile(d)
	if err != nil || string(b) != string(c) || e.Digest != d {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	p := filepath.Join(s.entries, string(d), "content")
	os.WriteFile(p, []byte("the pinned CONTENT"), 0o600)
	if _, _, err := s.ReadFile(d); !errors.Is(err, ErrCorrupt) {
		t.Errorf("rewritten content: %v, want ErrCorrupt", err)
	}
	d = mustPut(t, s, c)
	p = filepath.Join(s.entries, string(d), "content")
	os.Rename(p, p+".real")
	os.Symlink(p+".real", p)
	if _, _, err := s.ReadFile(d); !errors.Is(err, ErrCorrupt) {
		t.Errorf("symlinked content: %v, want ErrCorrupt", err)
	}
	te, err := s.PutTree("", Metadata{}, sampleTree)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ReadFile(te.Digest); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("ReadFile of a tree = %v", err)
	}
}

// TestGetTreeFiles: the kept bytes are the verified file contents; a path
// not in the tree is absent; a tampered tree is corrupt and yields no
// bytes; a file entry comes with no files, even when "content" is named.
func TestGetTreeFiles(t *testing.T) {
	s := newStore(t)
	e, err := s.PutTree("", Metadata{}, sampleTree)
	if err != nil {
		t.Fatal(err)
	}
	got, files, err := s.GetTreeFiles(e.Digest, "SKILL.md", "scripts/helper.sh", "nope")
	if err != nil || got.Digest != e.Digest || len(got.Files) != len(sampleTree) {
		t.Fatalf("GetTreeFiles = %+v, %v", got, err)
	}
	if len(files) != 2 || string(files["SKILL.md"]) != string(sampleTree["SKILL.md"]) ||
		string(files["scripts/helper.sh"]) != string(sampleTree["scripts/helper.sh"]) {
		t.Errorf("kept files = %q", files)
	}
	flipByte(t, filepath.Join(e.Dir, "tree", "SKILL.md"))
	if _, files, err := s.GetTreeFiles(e.Digest, "SKILL.md"); !errors.Is(err, ErrCorrupt) || files != nil {
		t.Errorf("tampered tree: %q, %v; want ErrCorrupt and no bytes", files, err)
	}
	if fe, files, err := s.GetTreeFiles(mustPut(t, s, []byte("a file")), "content"); err != nil || fe.Meta.Type != TypeFile || files != nil {
		t.Errorf("GetTreeFiles of a file entry = %v, %q, %v", fe.Meta.Type, files, err)
	}
}

func mustPut(t *testing.T, s *Store, c []byte) ref.Digest {
	t.Helper()
	e, err := s.PutFile("", Metadata{URL: "https://x.example/f"}, c)
	if err != nil {
		t.Fatal(err)
	}
	return e.Digest
}
