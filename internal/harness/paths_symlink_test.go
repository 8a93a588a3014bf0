package harness

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const outsideMarker = "OUTSIDE-MARKER-51d2"

// TestOpenLocalAfterSwap: a reference validated by name and then swapped —
// a path component replaced by a symlink out of the fullsend dir — cannot
// be opened: OpenLocal resolves it again through an os.Root on the dir.
func TestOpenLocalAfterSwap(t *testing.T) {
	for _, c := range []struct {
		name, value, swap string
		absolute          bool
	}{
		{"file, relative link out", "agents/a.md", "agents", false},
		{"file, absolute link", "agents/a.md", "agents", true},
		{"directory, relative link out", "skills/s1", "skills", false},
		{"directory, absolute link", "skills/s1", "skills", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			top := t.TempDir()
			d := filepath.Join(top, "fs")
			for rel, content := range baseTree() {
				write(t, d, rel, content)
			}
			outside := filepath.Join(top, "outside")
			write(t, outside, "agents/a.md", outsideMarker)
			write(t, outside, "skills/s1/SKILL.md", outsideMarker)
			p := write(t, d, "harness/h.yaml", "agent: agents/a.md\nskills: [skills/s1]\n")
			h, err := Load(p, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Validate(nil); err != nil {
				t.Fatal(err)
			}
			target := filepath.Join("..", "outside", c.swap)
			if c.absolute {
				target = filepath.Join(outside, c.swap)
			}
			old := filepath.Join(d, c.swap)
			if err := os.Rename(old, old+".orig"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, old); err != nil {
				t.Fatal(err)
			}
			l, err := h.OpenLocal(c.value)
			if err == nil {
				defer l.Close()
				var got []byte
				if l.IsDir() {
					got, _ = l.ReadFile("SKILL.md")
				} else {
					got, _ = l.ReadAll()
				}
				t.Fatalf("opened %s through the swapped symlink (read %q)", c.value, got)
			}
			if !errors.Is(err, ErrEscapes) || !strings.Contains(err.Error(), c.swap) {
				t.Fatalf("err = %v, want ErrEscapes naming %s", err, c.swap)
			}
		})
	}
}

// TestOpenInRootAfterSwap: the open itself enforces containment, whatever
// a check by name said a moment before: with the fullsend dir already
// open, a component swapped for a symlink leading out (relative or
// absolute) fails with ErrEscapes; one that stays inside is followed.
func TestOpenInRootAfterSwap(t *testing.T) {
	for _, c := range []struct {
		name, rel, swap, target string
		ok                      bool
	}{
		{"relative out", "agents/a.md", "agents", "../outside/agents", false},
		{"absolute", "agents/a.md", "agents", "ABS", false},
		{"directory, relative out", "skills/s1", "skills", "../outside/skills", false},
		{"inside the dir", "agents/a.md", "agents", "other", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			top := t.TempDir()
			d := filepath.Join(top, "fs")
			write(t, d, "agents/a.md", "inside")
			write(t, d, "other/a.md", "other inside")
			write(t, d, "skills/s1/SKILL.md", "inside")
			outside := filepath.Join(top, "outside")
			write(t, outside, "agents/a.md", outsideMarker)
			write(t, outside, "skills/s1/SKILL.md", outsideMarker)
			rt, err := os.OpenRoot(d)
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			if err := contained(d, c.rel); err != nil { // the check by name
				t.Fatal(err)
			}
			target := c.target
			if target == "ABS" {
				target = filepath.Join(outside, c.swap)
			}
			if err := os.Rename(filepath.Join(d, c.swap), filepath.Join(d, c.swap+".orig")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(d, c.swap)); err != nil {
				t.Fatal(err)
			}
			l, err := openInRoot(rt, c.rel, filepath.Join(d, c.rel))
			if c.ok {
				if err != nil {
					t.Fatalf("in-dir symlink: %v", err)
				}
				defer l.Close()
				if b, err := l.ReadAll(); err != nil || string(b) != "other inside" {
					t.Fatalf("read %q, %v", b, err)
				}
				return
			}
			if err == nil {
				l.Close()
				t.Fatalf("%s opened through a symlink out of the dir", c.rel)
			}
			if !errors.Is(err, ErrEscapes) || !strings.Contains(err.Error(), c.rel) || strings.Contains(err.Error(), outsideMarker) {
				t.Fatalf("err = %v, want ErrEscapes naming %s", err, c.rel)
			}
		})
	}
}

// TestSkillMDSymlinkRefused: SKILL.md must be a regular file of the skill
// directory; a symlink (here out of the fullsend dir) is refused with "is
// a symlink", not followed.
func TestSkillMDSymlinkRefused(t *testing.T) {
	for _, target := range []string{"abs", "in-dir"} {
		t.Run(target, func(t *testing.T) {
			d := tree(t, baseTree())
			secret := filepath.Join(t.TempDir(), "secret.md")
			if err := os.WriteFile(secret, []byte(outsideMarker), 0o600); err != nil {
				t.Fatal(err)
			}
			write(t, d, "skills/ln/x.txt", "x")
			link := secret
			if target == "in-dir" {
				link = "x.txt"
			}
			if err := os.Symlink(link, filepath.Join(d, "skills/ln/SKILL.md")); err != nil {
				t.Fatal(err)
			}
			p := write(t, d, "harness/h.yaml", "agent: agents/a.md\nskills: [skills/ln]\n")
			h, err := Load(p, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			err = h.Validate(nil)
			if !errors.Is(err, ErrWrongType) || !strings.Contains(err.Error(), "skills/ln/SKILL.md") || !strings.Contains(err.Error(), "is a symlink") {
				t.Fatalf("err = %v, want SKILL.md refused as a symlink", err)
			}
			if !strings.Contains(err.Error(), "h.yaml:2: skills") {
				t.Fatalf("err = %v, want file:line: field", err)
			}
		})
	}
}

// TestLocalDirectoryReads: a directory opened by OpenLocal yields its
// regular files only; symlinks in it (in or out of it) are skipped by
// Files and refused by ReadFile, never followed.
func TestLocalDirectoryReads(t *testing.T) {
	d := tree(t, baseTree())
	outside := t.TempDir()
	write(t, outside, "secret.txt", outsideMarker)
	write(t, outside, "sub/more.txt", outsideMarker)
	write(t, d, "skills/s1/docs/guide.md", "guide")
	for name, target := range map[string]string{
		"out-abs.txt": filepath.Join(outside, "secret.txt"),
		"in.txt":      "SKILL.md",
		"outdir":      filepath.Join(outside, "sub"),
	} {
		if err := os.Symlink(target, filepath.Join(d, "skills/s1", name)); err != nil {
			t.Fatal(err)
		}
	}
	h, err := Load(write(t, d, "harness/h.yaml", "agent: agents/a.md\n"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := h.OpenLocal("skills/s1")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !l.IsDir() || l.Path != filepath.Join(d, "skills/s1") {
		t.Fatalf("IsDir %v Path %s", l.IsDir(), l.Path)
	}
	files, err := l.Files()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for k, v := range files {
		names = append(names, k)
		if strings.Contains(string(v), outsideMarker) {
			t.Errorf("%s: outside content read", k)
		}
	}
	if len(files) != 2 || files["SKILL.md"] == nil || string(files["docs/guide.md"]) != "guide" {
		t.Fatalf("files = %v, want SKILL.md and docs/guide.md", names)
	}
	for _, n := range []string{"out-abs.txt", "in.txt", "outdir/more.txt"} {
		b, err := l.ReadFile(n)
		if err == nil {
			t.Errorf("ReadFile(%s) = %q, want an error", n, b)
		}
	}
	if _, err := l.ReadAll(); !errors.Is(err, ErrWrongType) {
		t.Errorf("ReadAll on a directory: %v", err)
	}
	// A file reference: ReadAll reads it, Files and ReadFile refuse.
	f, err := h.OpenLocal("agents/a.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if b, err := f.ReadAll(); err != nil || string(b) != baseTree()["agents/a.md"] {
		t.Fatalf("ReadAll = %q, %v", b, err)
	}
	if _, err := f.Files(); !errors.Is(err, ErrWrongType) {
		t.Errorf("Files on a file: %v", err)
	}
}
