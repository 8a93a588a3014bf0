package rundir

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestStateAndRunsDir(t *testing.T) {
	for _, c := range []struct {
		env      map[string]string
		ws       string
		explicit bool
		want     string
	}{
		{map[string]string{"XDG_STATE_HOME": "/x/state", "HOME": "/home/u"}, "/src/repo", false, "/x/state/fullsend/runs/repo-"},
		{map[string]string{"XDG_STATE_HOME": "relative", "HOME": "/home/u"}, "/src/repo", false, "/home/u/.local/state/fullsend/runs/repo-"},
		{map[string]string{"HOME": "/home/u"}, "/src/repo", true, "/src/repo/.fullsend/runs"},
		{map[string]string{"HOME": "/home/u", EnvRunsDir: "/r"}, "/src/repo", true, "/r"},
		{map[string]string{EnvRunsDir: "/r"}, "/src/repo", false, "/r"},
	} {
		got, err := RunsDir(env(c.env), c.ws, c.explicit)
		if err != nil {
			t.Fatalf("%v: %v", c.env, err)
		}
		if runtime.GOOS != "windows" && !strings.HasPrefix(got, c.want) {
			t.Errorf("%v %s %v: %s, want prefix %s", c.env, c.ws, c.explicit, got, c.want)
		}
	}
	if _, err := RunsDir(env(nil), "/src/repo", false); !errors.Is(err, ErrNoStateDir) {
		t.Errorf("no HOME: %v", err)
	}
	// Two workspaces with one base name never share a runs directory.
	a, _ := WorkspaceRunsDir(env(map[string]string{"HOME": "/h"}), "/a/repo")
	b, _ := WorkspaceRunsDir(env(map[string]string{"HOME": "/h"}), "/b/repo")
	if a == b {
		t.Errorf("/a/repo and /b/repo share %s", a)
	}
}

func mustOpen(t *testing.T, p string) *Dir {
	t.Helper()
	d, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestSymlinksRefused: no read, append, create, subdirectory or tree walk
// goes through a symlink, inside or outside the directory.
func TestSymlinksRefused(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	os.WriteFile(secret, []byte("host secret"), 0o600)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "inside"), []byte("in"), 0o600)
	os.Symlink(secret, filepath.Join(dir, "report.json"))
	os.Symlink("inside", filepath.Join(dir, "rel.json"))
	os.Symlink(outside, filepath.Join(dir, "images"))
	os.Mkdir(filepath.Join(dir, "sub"), 0o700)
	d := mustOpen(t, dir)

	for _, rel := range []string{"report.json", "rel.json", "images/secret"} {
		if data, err := d.ReadFile(rel); !errors.Is(err, ErrUntrusted) {
			t.Errorf("ReadFile %s: %q, %v", rel, data, err)
		}
		if f, err := d.Append(rel, 0o600); err == nil {
			f.Close()
			t.Errorf("Append %s through a symlink", rel)
		}
		if _, err := d.OpenWrite(rel); err == nil {
			t.Errorf("OpenWrite %s through a symlink", rel)
		}
	}
	if _, err := d.Sub("images"); !errors.Is(err, ErrUntrusted) {
		t.Errorf("Sub images: %v", err)
	}
	if err := d.MkdirAll("images/x", 0o700); !errors.Is(err, ErrUntrusted) {
		t.Errorf("MkdirAll images/x: %v", err)
	}
	if err := d.WriteNew("images/new", []byte("x"), 0o600); err == nil {
		t.Errorf("WriteNew under a symlinked directory")
	}
	if _, err := d.ReadFile("../outside"); !errors.Is(err, ErrUntrusted) {
		t.Errorf("ReadFile ..: %v", err)
	}
	// WriteAtomic replaces the link, never writes through it.
	if err := d.WriteAtomic("report.json", []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "host secret" {
		t.Errorf("secret overwritten: %q", b)
	}
	if fi, _ := os.Lstat(filepath.Join(dir, "report.json")); fi.Mode()&fs.ModeSymlink != 0 {
		t.Errorf("report.json still a symlink")
	}
	// Create is O_EXCL.
	if _, err := d.Create("inside", 0o600); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create over an existing file: %v", err)
	}
	if err := d.CheckTree(); !errors.Is(err, ErrUntrusted) {
		t.Errorf("CheckTree: %v", err)
	}
	// The directory itself.
	link := filepath.Join(t.TempDir(), "run")
	os.Symlink(dir, link)
	if _, err := Open(link); !errors.Is(err, ErrUntrusted) {
		t.Errorf("Open a symlinked directory: %v", err)
	}
	if _, err := Make(link, "x"); !errors.Is(err, ErrUntrusted) {
		t.Errorf("Make under a symlinked directory: %v", err)
	}
	// A runs directory that is a symlink: its runs are not this one's.
	os.Mkdir(filepath.Join(dir, "run1"), 0o700)
	if _, err := OpenRun(link, "run1"); !errors.Is(err, ErrUntrusted) {
		t.Errorf("OpenRun under a symlinked runs directory: %v", err)
	}
	if err := CheckRunsDir(link); !errors.Is(err, ErrUntrusted) {
		t.Errorf("CheckRunsDir of a symlink: %v", err)
	}
	if err := CheckRunsDir(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("CheckRunsDir of a missing directory: %v", err)
	}
	if r, err := OpenRun(dir, "run1"); err != nil {
		t.Errorf("OpenRun: %v", err)
	} else {
		r.Close()
	}
}

func TestDirOps(t *testing.T) {
	dir := t.TempDir()
	d := mustOpen(t, dir)
	if err := d.MkdirAll("a/b", 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := d.Append("a/b/log", 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("1\n"))
	f.Close()
	f, err = d.Append("a/b/log", 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("2\n"))
	f.Close()
	if b, err := d.ReadFile("a/b/log"); err != nil || string(b) != "1\n2\n" {
		t.Errorf("appended: %q %v", b, err)
	}
	if err := d.WriteAtomic("a/r.json", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	sub, err := d.Sub("a")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if b, err := sub.ReadFile("r.json"); err != nil || string(b) != "x" {
		t.Errorf("sub read: %q %v", b, err)
	}
	if err := d.CheckTree(); err != nil {
		t.Errorf("CheckTree of a clean tree: %v", err)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "a"))
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary left: %s", e.Name())
		}
	}
	nd, err := Make(dir, "run1")
	if err != nil {
		t.Fatal(err)
	}
	nd.Close()
	if _, err := Make(dir, "run1"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Make twice: %v", err)
	}
}

func TestForeignOwnerRefused(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "report.json")
	os.WriteFile(p, []byte("{}"), 0o644)
	if err := os.Chown(p, 65534, 65534); err != nil {
		t.Skip(err)
	}
	d := mustOpen(t, dir)
	if _, err := d.ReadFile("report.json"); !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "another user") {
		t.Errorf("foreign file: %v", err)
	}
	if err := d.CheckTree(); !errors.Is(err, ErrUntrusted) {
		t.Errorf("CheckTree: %v", err)
	}
	other := filepath.Join(t.TempDir(), "run")
	os.Mkdir(other, 0o700)
	os.Chown(other, 65534, 65534)
	if _, err := Open(other); !errors.Is(err, ErrUntrusted) {
		t.Errorf("foreign directory: %v", err)
	}
	// A run key of another user is refused.
	home := t.TempDir()
	ge := env(map[string]string{"XDG_STATE_HOME": home})
	resetKeys()
	if _, err := Key(ge); err != nil {
		t.Fatal(err)
	}
	os.Chown(filepath.Join(home, "fullsend", KeyFile), 65534, 65534)
	resetKeys()
	if _, err := Key(ge); !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "another user") {
		t.Errorf("foreign key: %v", err)
	}
}

func resetKeys() {
	keyMu.Lock()
	keyCache = map[string][]byte{}
	keyMu.Unlock()
}

func TestKey(t *testing.T) {
	home := t.TempDir()
	ge := env(map[string]string{"XDG_STATE_HOME": home})
	resetKeys()
	k1, err := Key(ge)
	if err != nil || len(k1) != 32 {
		t.Fatalf("key: %x %v", k1, err)
	}
	p := filepath.Join(home, "fullsend", KeyFile)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v", fi.Mode().Perm())
	}
	resetKeys()
	if k2, err := Key(ge); err != nil || !bytes.Equal(k1, k2) {
		t.Errorf("second use: %x %v, want %x", k2, err, k1)
	}
	if runtime.GOOS == "windows" {
		return
	}
	// Readable by others: refused.
	os.Chmod(p, 0o640)
	resetKeys()
	if _, err := Key(ge); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("group-readable key: %v", err)
	}
	os.Chmod(p, 0o600)
	// A symlink: refused.
	os.Rename(p, p+".real")
	os.Symlink(p+".real", p)
	resetKeys()
	if _, err := Key(ge); !errors.Is(err, ErrUntrusted) {
		t.Errorf("symlinked key: %v", err)
	}
	// A state directory others may write to: refused.
	os.Remove(p)
	os.Rename(p+".real", p)
	os.Chmod(filepath.Join(home, "fullsend"), 0o777)
	resetKeys()
	if _, err := Key(ge); err == nil || !strings.Contains(err.Error(), "lets others write") {
		t.Errorf("world-writable state dir: %v", err)
	}
}

func TestChain(t *testing.T) {
	k := bytes.Repeat([]byte{1}, 32)
	w := NewChain(k, "run-a")
	l1 := w.Seal([]byte(`{"v":1,"seq":1}`))
	l2 := w.Seal([]byte(`{"v":1,"seq":2}`))
	verify := func(key []byte, label string, lines ...[]byte) error {
		c := NewChain(key, label)
		for _, l := range lines {
			if err := c.Verify(l); err != nil {
				return err
			}
		}
		return nil
	}
	if err := verify(k, "run-a", l1, l2); err != nil {
		t.Fatalf("genuine: %v", err)
	}
	for name, err := range map[string]error{
		"other key":   verify(bytes.Repeat([]byte{2}, 32), "run-a", l1, l2),
		"other run":   verify(k, "run-b", l1, l2),
		"reordered":   verify(k, "run-a", l2, l1),
		"dropped":     verify(k, "run-a", l2),
		"edited":      verify(k, "run-a", bytes.Replace(l1, []byte(`"seq":1`), []byte(`"seq":9`), 1)),
		"no mac":      verify(k, "run-a", []byte(`{"v":1,"seq":1}`)),
		"mac garbage": verify(k, "run-a", []byte(`{"v":1,"seq":1,"mac":"zz"}`)),
	} {
		if !errors.Is(err, ErrBadMAC) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Appending continues the chain.
	r, err := ResumeChain(k, w.Last())
	if err != nil {
		t.Fatal(err)
	}
	l3 := r.Seal([]byte(`{"v":1,"seq":3}`))
	if err := verify(k, "run-a", l1, l2, l3); err != nil {
		t.Errorf("continued chain: %v", err)
	}
}
