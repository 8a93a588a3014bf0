package cas

import (
	"encoding/json"
	"errors"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/ref"
)

func newStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var sampleTree = map[string][]byte{
	"SKILL.md":            []byte("---\nname: x\n---\nbody\n"),
	"scripts/helper.sh":   []byte("#!/bin/sh\n"),
	"scripts/lib/util.sh": []byte("util\n"),
	"docs/readme.md":      []byte("readme"),
}

func mustTreeHash(t *testing.T, files map[string][]byte) ref.Digest {
	t.Helper()
	d, err := TreeHash(files)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// tmpNames lists resources/tmp.
func tmpNames(t *testing.T, s *Store) []string {
	t.Helper()
	des, err := os.ReadDir(s.tmp)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, de := range des {
		n = append(n, de.Name())
	}
	return n
}

func TestDefaultDir(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got, want := DefaultDir("/ws", getenv), filepath.Join("/ws", ".fullsend-cache"); got != want {
		t.Errorf("DefaultDir = %q, want %q", got, want)
	}
	env[EnvCacheDir] = "/ci/cache"
	if got := DefaultDir("/ws", getenv); got != "/ci/cache" {
		t.Errorf("DefaultDir with %s = %q, want /ci/cache", EnvCacheDir, got)
	}
	if got, want := DefaultDir("/ws", nil), filepath.Join("/ws", ".fullsend-cache"); got != want {
		t.Errorf("DefaultDir(nil getenv) = %q, want %q", got, want)
	}
}

func checkModes(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := de.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if de.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %o, want %o", p, fi.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPutGetFile(t *testing.T) {
	s := newStore(t)
	content := []byte("agent definition\n")
	d := ref.SHA256(content)
	when := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	e, err := s.PutFile(d, Metadata{URL: "https://x.example/a.md", FetchTime: when, ContentType: "text/markdown", SHA256: "ignored", Type: TypeDirectory}, content)
	if err != nil {
		t.Fatal(err)
	}
	wantDir := filepath.Join(s.Dir(), "resources", "sha256", string(d))
	if e.Digest != d || e.Dir != wantDir || e.ContentPath != filepath.Join(wantDir, "content") || e.TreePath != "" {
		t.Errorf("PutFile entry = %+v", e)
	}
	b, err := os.ReadFile(filepath.Join(wantDir, "metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	wantMeta := map[string]any{"url": "https://x.example/a.md", "fetch_time": "2026-03-04T05:06:07Z", "content_type": "text/markdown", "sha256": string(d), "type": "file"}
	for k, v := range wantMeta {
		if m[k] != v {
			t.Errorf("metadata.json %s = %v, want %v", k, m[k], v)
		}
	}
	g, err := s.Get(d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(g.ContentPath)
	if err != nil || string(got) != string(content) {
		t.Errorf("content = %q, %v", got, err)
	}
	if g.Meta.URL != "https://x.example/a.md" || g.Meta.Type != TypeFile || g.Size != int64(len(content)+len(b)) {
		t.Errorf("Get entry = %+v (metadata %d bytes)", g, len(b))
	}
	checkModes(t, s.Dir())
	if n := tmpNames(t, s); len(n) != 0 {
		t.Errorf("resources/tmp not empty after Put: %v", n)
	}
}

func TestPutWithoutPinUsesContentHash(t *testing.T) {
	s := newStore(t)
	e, err := s.PutFile("", Metadata{URL: "u"}, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if e.Digest != ref.SHA256([]byte("x")) || e.Meta.FetchTime.IsZero() {
		t.Errorf("entry = %+v", e)
	}
}

func TestPutGetTree(t *testing.T) {
	s := newStore(t)
	d := mustTreeHash(t, sampleTree)
	e, err := s.PutTree(d, Metadata{URL: "https://github.com/o/r/tree/abc/skill"}, sampleTree)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []Entry{e, must(s.Get(d))} {
		if e.Meta.Type != TypeDirectory || e.TreePath != filepath.Join(e.Dir, "tree") || e.ContentPath != "" {
			t.Errorf("entry = %+v", e)
		}
		if len(e.Files) != len(sampleTree) {
			t.Fatalf("Files = %+v", e.Files)
		}
		for i, f := range e.Files {
			if i > 0 && e.Files[i-1].Path >= f.Path {
				t.Errorf("Files not sorted: %+v", e.Files)
			}
			c, ok := sampleTree[f.Path]
			if !ok || f.SHA256 != ref.SHA256(c) || f.Size != int64(len(c)) {
				t.Errorf("file %+v does not match input", f)
			}
			b, err := os.ReadFile(filepath.Join(e.TreePath, filepath.FromSlash(f.Path)))
			if err != nil || string(b) != string(c) {
				t.Errorf("%s on disk = %q, %v", f.Path, b, err)
			}
		}
	}
	checkModes(t, s.Dir())
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestPutHashMismatchWritesNothing(t *testing.T) {
	s := newStore(t)
	wrong := ref.SHA256([]byte("other"))
	_, err := s.PutFile(wrong, Metadata{}, []byte("content"))
	if !errors.Is(err, ErrHashMismatch) || !strings.Contains(err.Error(), string(wrong)) || !strings.Contains(err.Error(), string(ref.SHA256([]byte("content")))) {
		t.Errorf("PutFile err = %v, want ErrHashMismatch naming both hashes", err)
	}
	_, err = s.PutTree(wrong, Metadata{}, sampleTree)
	if !errors.Is(err, ErrHashMismatch) {
		t.Errorf("PutTree err = %v, want ErrHashMismatch", err)
	}
	_, err = s.PutTree(wrong, Metadata{}, map[string][]byte{"../evil": nil})
	if !errors.Is(err, ErrUnsafePath) {
		t.Errorf("PutTree unsafe err = %v, want ErrUnsafePath", err)
	}
	if des, _ := os.ReadDir(s.entries); len(des) != 0 {
		t.Errorf("entries written: %v", des)
	}
	if n := tmpNames(t, s); len(n) != 0 {
		t.Errorf("temp dirs left: %v", n)
	}
}

func TestBadDigests(t *testing.T) {
	s := newStore(t)
	upper := strings.ToUpper(string(ref.SHA256([]byte("x"))))
	for _, d := range []ref.Digest{"", "abc", ref.Digest(upper), "../../../../etc/passwd", ref.Digest(strings.Repeat("g", 64))} {
		if _, err := s.Get(d); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("Get(%q) = %v, want a digest error", d, err)
		}
		if d != "" {
			if _, err := s.PutFile(d, Metadata{}, []byte("x")); err == nil {
				t.Errorf("PutFile(%q) succeeded", d)
			}
		}
	}
}

func TestGetNotFound(t *testing.T) {
	s := newStore(t)
	d := ref.SHA256([]byte("nope"))
	_, err := s.Get(d)
	var ee *EntryError
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &ee) || ee.Digest != d {
		t.Errorf("Get = %v, want ErrNotFound naming %s", err, d)
	}
}

func TestSameContentSharesEntry(t *testing.T) {
	s := newStore(t)
	c := []byte("shared")
	e1, err := s.PutFile(ref.SHA256(c), Metadata{URL: "https://a.example/x"}, c)
	if err != nil {
		t.Fatal(err)
	}
	e2, err := s.PutFile(ref.SHA256(c), Metadata{URL: "https://b.example/y"}, c)
	if err != nil {
		t.Fatal(err)
	}
	if e1.Dir != e2.Dir || e2.Meta.URL != "https://a.example/x" {
		t.Errorf("second Put made a new entry: %+v vs %+v", e1, e2)
	}
	if l, _ := s.List(); len(l) != 1 {
		t.Errorf("List = %d entries, want 1", len(l))
	}
}

// tamper cases: each damages a published entry in one way; Get must report
// ErrCorrupt naming the hash and the reason, and remove the entry.
var tamperCases = []struct {
	name   string
	tree   bool
	damage func(t *testing.T, dir string)
	reason string
}{
	{"flip content byte", false, func(t *testing.T, dir string) { flipByte(t, filepath.Join(dir, "content")) }, "content has sha256"},
	{"truncate content", false, func(t *testing.T, dir string) { os.Truncate(filepath.Join(dir, "content"), 1) }, "content has sha256"},
	{"content missing", false, func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "content")) }, "does not match the entry's layout"},
	{"content is a symlink", false, func(t *testing.T, dir string) {
		p := filepath.Join(dir, "content")
		os.Rename(p, p+".real")
		os.Symlink("content.real", p)
	}, "unexpected"},
	{"metadata missing", false, func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "metadata.json")) }, "metadata.json missing"},
	{"metadata garbage", false, func(t *testing.T, dir string) { os.WriteFile(filepath.Join(dir, "metadata.json"), []byte("{"), 0o600) }, "metadata.json"},
	{"metadata other hash", false, func(t *testing.T, dir string) {
		rewriteMeta(t, dir, func(m *Metadata) { m.SHA256 = strings.Repeat("0", 64) })
	}, "names sha256"},
	{"metadata wrong type", false, func(t *testing.T, dir string) {
		rewriteMeta(t, dir, func(m *Metadata) { m.Type = TypeDirectory })
	}, "does not match the entry's layout"},
	{"extra file in entry", false, func(t *testing.T, dir string) { os.WriteFile(filepath.Join(dir, "extra"), nil, 0o600) }, `unexpected regular file "extra"`},
	{"flip tree byte", true, func(t *testing.T, dir string) { flipByte(t, filepath.Join(dir, "tree", "scripts", "helper.sh")) }, "tree has sha256"},
	{"tree file removed", true, func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "tree", "SKILL.md")) }, "tree has sha256"},
	{"tree file added", true, func(t *testing.T, dir string) { os.WriteFile(filepath.Join(dir, "tree", "new.md"), nil, 0o600) }, "tree has sha256"},
	{"tree file renamed", true, func(t *testing.T, dir string) {
		os.Rename(filepath.Join(dir, "tree", "SKILL.md"), filepath.Join(dir, "tree", "SKILL2.md"))
	}, "tree has sha256"},
	{"tree symlink", true, func(t *testing.T, dir string) { os.Symlink("SKILL.md", filepath.Join(dir, "tree", "link.md")) }, "tree/link.md is a symlink"},
	{"tree symlink replaces file", true, func(t *testing.T, dir string) {
		p := filepath.Join(dir, "tree", "docs", "readme.md")
		os.Remove(p)
		os.Symlink("/etc/passwd", p)
	}, "is a symlink"},
	{"tree fifo", true, func(t *testing.T, dir string) { mkfifo(t, filepath.Join(dir, "tree", "pipe")) }, "named pipe"},
	{"tree case collision", true, func(t *testing.T, dir string) { os.WriteFile(filepath.Join(dir, "tree", "skill.md"), nil, 0o600) }, "only in case"},
	{"tree unsafe name", true, func(t *testing.T, dir string) { os.WriteFile(filepath.Join(dir, "tree", `a\b`), nil, 0o600) }, "backslash"},
	{"tree missing", true, func(t *testing.T, dir string) { os.RemoveAll(filepath.Join(dir, "tree")) }, "does not match the entry's layout"},
	{"tree empty", true, func(t *testing.T, dir string) {
		os.RemoveAll(filepath.Join(dir, "tree"))
		os.Mkdir(filepath.Join(dir, "tree"), 0o700)
	}, "tree has no files"},
	{"tree and content", true, func(t *testing.T, dir string) { os.WriteFile(filepath.Join(dir, "content"), nil, 0o600) }, "does not match the entry's layout"},
	{"entry is a file", false, func(t *testing.T, dir string) {
		os.RemoveAll(dir)
		os.WriteFile(dir, []byte("x"), 0o600)
	}, "not a directory"},
	{"entry is a symlink", false, func(t *testing.T, dir string) {
		other := dir + ".elsewhere"
		os.Rename(dir, other)
		os.Symlink(other, dir)
	}, "is a symlink, not a directory"},
}

func flipByte(t *testing.T, p string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x01
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func rewriteMeta(t *testing.T, dir string, f func(*Metadata)) {
	t.Helper()
	p := filepath.Join(dir, "metadata.json")
	var m Metadata
	if err := json.Unmarshal(must(os.ReadFile(p)), &m); err != nil {
		t.Fatal(err)
	}
	f(&m)
	if err := os.WriteFile(p, must(json.Marshal(m)), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestTamperedEntryIsCorruptAndRemoved(t *testing.T) {
	for _, tc := range tamperCases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			var e Entry
			var err error
			if tc.tree {
				e, err = s.PutTree("", Metadata{URL: "u"}, sampleTree)
			} else {
				e, err = s.PutFile("", Metadata{URL: "u"}, []byte("some content here"))
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.damage(t, e.Dir)
			_, err = s.Get(e.Digest)
			var ee *EntryError
			if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ee) || ee.Digest != e.Digest {
				t.Fatalf("Get = %v, want ErrCorrupt for %s", err, e.Digest)
			}
			if !strings.Contains(err.Error(), tc.reason) || !strings.Contains(err.Error(), string(e.Digest)) {
				t.Errorf("Get error %q does not name the hash and %q", err, tc.reason)
			}
			if _, err := os.Lstat(e.Dir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("corrupt entry still present: %v", err)
			}
			if _, err := s.Get(e.Digest); !errors.Is(err, ErrNotFound) {
				t.Errorf("second Get = %v, want ErrNotFound", err)
			}
			// The corrupt entry is replaced by a fresh Put.
			if tc.tree {
				_, err = s.PutTree(e.Digest, Metadata{}, sampleTree)
			} else {
				_, err = s.PutFile(e.Digest, Metadata{}, []byte("some content here"))
			}
			if err != nil {
				t.Errorf("re-Put after corruption: %v", err)
			}
		})
	}
}

func TestPutReplacesCorruptEntry(t *testing.T) {
	s := newStore(t)
	c := []byte("payload")
	e := must(s.PutFile("", Metadata{}, c))
	flipByte(t, e.ContentPath)
	if _, err := s.PutFile(e.Digest, Metadata{}, c); err != nil {
		t.Fatal(err)
	}
	if b := must(os.ReadFile(e.ContentPath)); string(b) != string(c) {
		t.Errorf("content = %q after re-Put over a corrupt entry", b)
	}
}

// faultFS injects an I/O error (err) below the verifier: reading the
// file named file, or listing the directory named listDir ("." is the
// entry directory), in the entry directory and below.
type faultFS struct {
	entryFS
	here, file, listDir string
	err                 error
}

func (f faultFS) list() ([]dirEnt, error) {
	if f.listDir == f.here {
		return nil, f.err
	}
	return f.entryFS.list()
}

func (f faultFS) sub(name string) (entryFS, error) {
	s, err := f.entryFS.sub(name)
	if err != nil {
		return nil, err
	}
	g := f
	g.entryFS, g.here = s, name
	return g, nil
}

func (f faultFS) readSmall(name string, limit int64) ([]byte, error) {
	if name == f.file {
		return nil, f.err
	}
	return f.entryFS.readSmall(name, limit)
}

func (f faultFS) hash(name string, h hash.Hash, buf []byte, keep int64) (ref.Digest, int64, []byte, error) {
	if name == f.file {
		return "", 0, nil, f.err
	}
	return f.entryFS.hash(name, h, buf, keep)
}

// TestIOErrorDoesNotRemove: a read that fails (EIO from a bad disk or a
// network filesystem, or a permission error) is an I/O error, not
// corruption: Get, GetTreeFiles and Verify report it and leave the entry in
// place, and it verifies again once the fault is gone. Faults are injected
// below the verifier (testOnlyEntryFS), so this runs as root too.
func TestIOErrorDoesNotRemove(t *testing.T) {
	eio := &fs.PathError{Op: "read", Path: "injected", Err: syscall.EIO}
	perm := &fs.PathError{Op: "open", Path: "injected", Err: fs.ErrPermission}
	for _, c := range []struct {
		name  string
		tree  bool
		fault faultFS
	}{
		{"file content", false, faultFS{file: contentName, err: eio}},
		{"file metadata", false, faultFS{file: metadataName, err: eio}},
		{"entry listing", false, faultFS{listDir: ".", err: eio}},
		{"tree file", true, faultFS{file: "util.sh", err: eio}},
		{"tree listing", true, faultFS{listDir: treeName, err: eio}},
		{"tree subdirectory listing", true, faultFS{listDir: "lib", err: eio}},
		{"permission", true, faultFS{file: "SKILL.md", err: perm}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			var e Entry
			if c.tree {
				e = must(s.PutTree("", Metadata{}, sampleTree))
			} else {
				e = must(s.PutFile("", Metadata{}, []byte("x")))
			}
			testOnlyEntryFS = func(dir entryFS) entryFS {
				f := c.fault
				f.entryFS, f.here = dir, "."
				return f
			}
			defer func() { testOnlyEntryFS = func(dir entryFS) entryFS { return dir } }()
			_, err := s.Get(e.Digest)
			if err == nil || errors.Is(err, ErrCorrupt) || !errors.Is(err, c.fault.err) {
				t.Errorf("Get = %v, want the injected error, not ErrCorrupt", err)
			}
			if _, _, err := s.GetTreeFiles(e.Digest, "SKILL.md"); err == nil || errors.Is(err, ErrCorrupt) {
				t.Errorf("GetTreeFiles = %v, want the injected error, not ErrCorrupt", err)
			}
			if problems, err := s.Verify(); err != nil || len(problems) != 1 || errors.Is(problems[0], ErrCorrupt) || !errors.Is(problems[0], c.fault.err) {
				t.Errorf("Verify = %v %v, want one I/O problem", problems, err)
			}
			if _, err := os.Stat(e.Dir); err != nil {
				t.Fatalf("entry removed on an I/O error: %v", err)
			}
			testOnlyEntryFS = func(dir entryFS) entryFS { return dir }
			if _, err := s.Get(e.Digest); err != nil {
				t.Errorf("entry does not verify once the fault is gone: %v", err)
			}
		})
	}
}

func TestGetRecordsLastUse(t *testing.T) {
	s := newStore(t)
	e := must(s.PutFile("", Metadata{}, []byte("x")))
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(e.Dir, old, old); err != nil {
		t.Fatal(err)
	}
	l := must(s.List())
	if !l[0].LastUsed.Equal(old) {
		t.Errorf("List LastUsed = %v, want %v (List must not record a use)", l[0].LastUsed, old)
	}
	if _, err := s.Verify(); err != nil {
		t.Fatal(err)
	}
	if fi := must(os.Stat(e.Dir)); !fi.ModTime().Equal(old) {
		t.Errorf("Verify recorded a use")
	}
	g := must(s.Get(e.Digest))
	if fi := must(os.Stat(e.Dir)); time.Since(fi.ModTime()) > time.Minute || !g.LastUsed.Equal(fi.ModTime()) {
		t.Errorf("Get did not record the use: mtime %v, LastUsed %v", fi.ModTime(), g.LastUsed)
	}
}

// The writer loses the race: another writer publishes the same hash between
// our write and our rename.
func TestPutLosesRace(t *testing.T) {
	s := newStore(t)
	other := must(Open(s.Dir()))
	c := []byte("raced")
	calls := 0
	testOnlyBeforeRename = func() {
		calls++
		if calls == 1 {
			if _, err := other.PutFile("", Metadata{URL: "first"}, c); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { testOnlyBeforeRename = func() {} })
	e, err := s.PutFile("", Metadata{URL: "second"}, c)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || e.Meta.URL != "first" {
		t.Errorf("calls = %d, entry URL %q; want the winner's entry", calls, e.Meta.URL)
	}
	if n := tmpNames(t, s); len(n) != 0 {
		t.Errorf("loser left temp dirs: %v", n)
	}
}

// The writer loses the race to a corrupt entry: it removes it and retries.
func TestPutLosesRaceToCorruptEntry(t *testing.T) {
	s := newStore(t)
	c := []byte("raced")
	d := ref.SHA256(c)
	calls := 0
	testOnlyBeforeRename = func() {
		calls++
		if calls == 1 {
			dir := s.entryDir(d)
			os.Mkdir(dir, 0o700)
			os.WriteFile(filepath.Join(dir, "content"), []byte("bad"), 0o600)
		}
	}
	t.Cleanup(func() { testOnlyBeforeRename = func() {} })
	e, err := s.PutFile(d, Metadata{}, c)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || string(must(os.ReadFile(e.ContentPath))) != "raced" {
		t.Errorf("calls = %d; want a retry that publishes the good bytes", calls)
	}
}

// Clean removing a writer's fresh temp dir makes the writer retry.
func TestPutRetriesWhenTempRemoved(t *testing.T) {
	s := newStore(t)
	calls := 0
	testOnlyBeforeRename = func() {
		calls++
		if calls == 1 {
			des := must(os.ReadDir(s.tmp))
			for _, de := range des {
				os.RemoveAll(filepath.Join(s.tmp, de.Name()))
			}
		}
	}
	t.Cleanup(func() { testOnlyBeforeRename = func() {} })
	if _, err := s.PutTree("", Metadata{}, sampleTree); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Errorf("calls = %d, want 2", calls)
	}
}

func TestListAndVerify(t *testing.T) {
	s := newStore(t)
	f := must(s.PutFile("", Metadata{URL: "https://f.example/a"}, []byte("file")))
	tr := must(s.PutTree("", Metadata{URL: "https://t.example/tree"}, sampleTree))
	bad := must(s.PutFile("", Metadata{URL: "https://b.example/bad"}, []byte("to be damaged")))
	flipByte(t, bad.ContentPath)
	// Not entries: a writer's temp dir, a foreign directory.
	os.Mkdir(filepath.Join(s.tmp, "put-abc-123"), 0o700)
	os.Mkdir(filepath.Join(s.entries, "not-a-digest"), 0o700)

	l := must(s.List())
	if len(l) != 3 {
		t.Fatalf("List = %d entries, want 3: %+v", len(l), l)
	}
	byDigest := map[ref.Digest]Entry{}
	for i, e := range l {
		if i > 0 && l[i-1].Digest >= e.Digest {
			t.Errorf("List not sorted")
		}
		byDigest[e.Digest] = e
	}
	if e := byDigest[tr.Digest]; e.Meta.Type != TypeDirectory || e.Size != tr.Size || e.Meta.URL != "https://t.example/tree" {
		t.Errorf("List tree entry = %+v, want size %d", e, tr.Size)
	}
	if e := byDigest[f.Digest]; e.Meta.Type != TypeFile || e.Size != f.Size {
		t.Errorf("List file entry = %+v, want size %d", e, f.Size)
	}

	problems, err := s.Verify()
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 2 {
		t.Fatalf("Verify problems = %v, want the corrupt entry and the foreign dir", problems)
	}
	var sawCorrupt, sawForeign bool
	for _, p := range problems {
		switch {
		case errors.Is(p, ErrCorrupt) && strings.Contains(p.Error(), string(bad.Digest)):
			sawCorrupt = true
		case strings.Contains(p.Error(), "not-a-digest"):
			sawForeign = true
		}
	}
	if !sawCorrupt || !sawForeign {
		t.Errorf("Verify problems = %v", problems)
	}
	if l := must(s.List()); len(l) != 2 {
		t.Errorf("after Verify, List = %d entries, want 2 (corrupt one removed)", len(l))
	}
}

func TestCleanLRU(t *testing.T) {
	s := newStore(t)
	base := time.Now().Add(-time.Hour)
	var es []Entry
	for i, c := range []string{"aaaa", "bbbb", "cccc", "dddd"} {
		e := must(s.PutFile("", Metadata{}, []byte(strings.Repeat(c, 100))))
		at := base.Add(time.Duration(i) * time.Minute)
		os.Chtimes(e.Dir, at, at)
		e.Size = must(s.stat(e.Digest)).Size
		es = append(es, e)
	}
	// Use the oldest: it becomes the most recent.
	must(s.Get(es[0].Digest))
	total := es[0].Size + es[1].Size + es[2].Size + es[3].Size
	removed, err := s.Clean(total - 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0].Digest != es[1].Digest {
		t.Fatalf("Clean(total-1) removed %v, want only the least recently used %s", digests(removed), es[1].Digest)
	}
	removed = must(s.Clean(es[0].Size + es[3].Size))
	if len(removed) != 1 || removed[0].Digest != es[2].Digest {
		t.Fatalf("Clean removed %v, want %s", digests(removed), es[2].Digest)
	}
	removed = must(s.Clean(es[0].Size + es[3].Size))
	if len(removed) != 0 {
		t.Errorf("Clean at the bound removed %v", digests(removed))
	}
	removed = must(s.Clean(0))
	if len(removed) != 2 || removed[0].Digest != es[3].Digest || removed[1].Digest != es[0].Digest {
		t.Errorf("Clean(0) removed %v, want %s then %s", digests(removed), es[3].Digest, es[0].Digest)
	}
	if l := must(s.List()); len(l) != 0 {
		t.Errorf("Clean(0) left %d entries", len(l))
	}
	if _, err := s.Clean(-1); err == nil {
		t.Errorf("Clean(-1) succeeded")
	}
}

func digests(es []Entry) []string {
	var s []string
	for _, e := range es {
		s = append(s, string(e.Digest[:12]))
	}
	return s
}

func TestCleanTempDirs(t *testing.T) {
	s := newStore(t)
	crashed := filepath.Join(s.tmp, "put-crashed-1")
	live := filepath.Join(s.tmp, "put-live-2")
	removing := filepath.Join(s.tmp, "rm-half-3")
	other := filepath.Join(s.tmp, "unrelated")
	for _, d := range []string{crashed, live, removing, other} {
		os.MkdirAll(filepath.Join(d, "tree"), 0o700)
		os.WriteFile(filepath.Join(d, "metadata.json"), []byte("{"), 0o600)
	}
	unlock, err := lockDir(live)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	e := must(s.PutFile("", Metadata{}, []byte("keep")))
	if l := must(s.List()); len(l) != 1 {
		t.Errorf("List sees temp dirs: %d entries", len(l))
	}
	if _, err := s.Clean(1 << 40); err != nil {
		t.Fatal(err)
	}
	for d, want := range map[string]bool{crashed: false, live: true, removing: false, other: true, e.Dir: true} {
		_, err := os.Stat(d)
		if (err == nil) != want {
			t.Errorf("%s exists = %v, want %v", filepath.Base(d), err == nil, want)
		}
	}
}
