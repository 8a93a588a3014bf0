package resolve

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// marker is the content of the files standing for what lies outside the
// fullsend dir (a root-only file): it must never be read.
const outsideMarker = "OUTSIDE-MARKER-7c1f"

// swapForSymlink replaces the directory dir/name with a symlink to target
// (the original is kept beside it as name.orig).
func swapForSymlink(t *testing.T, dir, name, target string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.Rename(p, p+".orig"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// TestLocalReadAfterSwapFails: a local resource checked by package harness
// and then replaced — a path component swapped for a symlink leading out
// of the fullsend dir — before the resolver reads it is not read: the
// read goes through an os.Root on the fullsend dir and fails.
func TestLocalReadAfterSwapFails(t *testing.T) {
	cases := []struct {
		name, swap, node string
		absolute         bool
	}{
		{name: "agent dir, relative link out", swap: "agents", node: "agents/a.md"},
		{name: "agent dir, absolute link", swap: "agents", node: "agents/a.md", absolute: true},
		{name: "skill dir parent, relative link out", swap: "skills", node: "skills/s"},
		{name: "policy dir, absolute link", swap: "policies", node: "policies/p.yaml", absolute: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			top := t.TempDir()
			dir := filepath.Join(top, "fs")
			outside := filepath.Join(top, "outside")
			writeFiles(t, dir, map[string]string{
				"agents/a.md":       "---\nname: a\n---\nagent\n",
				"skills/s/SKILL.md": skillMD(),
				"policies/p.yaml":   "version: 1\n",
				"harness/h.yaml":    "agent: agents/a.md\nskills: [skills/s]\npolicy: policies/p.yaml\n",
			})
			// The same layout outside, every file carrying the marker.
			writeFiles(t, outside, map[string]string{
				c.swap + "/a.md":         "---\nname: a\n---\n" + outsideMarker + "\n",
				c.swap + "/s/SKILL.md":   "---\nname: s\ndescription: " + outsideMarker + "\n---\n",
				c.swap + "/p.yaml":       "version: 1\n# " + outsideMarker + "\n",
				c.swap + "/s/secret.txt": outsideMarker,
			})
			target := filepath.Join("..", "outside", c.swap)
			if c.absolute {
				target = filepath.Join(outside, c.swap)
			}
			var once sync.Once
			swapped := false
			testHookLocalRead = func(n *Node) {
				if n.Ref == c.node {
					once.Do(func() {
						swapForSymlink(t, dir, c.swap, target)
						swapped = true
					})
				}
			}
			t.Cleanup(func() { testHookLocalRead = nil })
			opts := localOpts(t, config.Default())
			opts.Concurrency = 1
			res, err := Resolve(context.Background(), filepath.Join(dir, "harness/h.yaml"), opts)
			if !swapped {
				t.Fatalf("the hook never saw %s (err %v)", c.node, err)
			}
			if err == nil {
				t.Fatalf("resolution read %s through a symlink out of the fullsend dir (%d nodes)", c.node, len(res.Graph.Nodes))
			}
			if !errors.Is(err, harness.ErrEscapes) || !strings.Contains(err.Error(), c.swap) {
				t.Fatalf("err = %v, want ErrEscapes naming %s", err, c.swap)
			}
			if strings.Contains(err.Error(), outsideMarker) {
				t.Fatalf("the error carries outside content: %v", err)
			}
		})
	}
}

// TestLocalSkillMDSymlinkNotFollowed: a SKILL.md that is a symlink (here
// to a file outside the fullsend dir) is not part of the skill; it is
// refused, and its target is never parsed for dependencies.
func TestLocalSkillMDSymlinkNotFollowed(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "fs")
	secret := filepath.Join(top, "secret.md")
	if err := os.WriteFile(secret, []byte(skillMD("skills/"+strings.ToLower(outsideMarker))), 0o600); err != nil {
		t.Fatal(err)
	}
	for rel, content := range map[string]string{
		"agents/a.md":        "agent\n",
		"skills/s/x.txt":     "x\n",
		"harness/h.yaml":     "agent: agents/a.md\nskills: [skills/s]\n",
		"skills/ok/SKILL.md": skillMD(),
	} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(secret, filepath.Join(dir, "skills/s/SKILL.md")); err != nil {
		t.Fatal(err)
	}
	_, err := Resolve(context.Background(), filepath.Join(dir, "harness/h.yaml"), localOpts(t, config.Default()))
	if err == nil || !strings.Contains(err.Error(), "SKILL.md") || !strings.Contains(err.Error(), "is a symlink") {
		t.Fatalf("err = %v, want SKILL.md refused as a symlink", err)
	}
	if strings.Contains(err.Error(), strings.ToLower(outsideMarker)) {
		t.Fatalf("the symlink's target was parsed: %v", err)
	}
}

// TestLocalHashIsWhatWasRead: the hash recorded for a local file is that
// of the bytes read through the fullsend dir (an in-dir symlink is fine).
func TestLocalHashIsWhatWasRead(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"agents/real.md": "---\nname: a\n---\nbody\n",
		"harness/h.yaml": "agent: agents/a.md\n",
	})
	if err := os.Symlink("real.md", filepath.Join(dir, "agents/a.md")); err != nil {
		t.Fatal(err)
	}
	res, err := Resolve(context.Background(), filepath.Join(dir, "harness/h.yaml"), localOpts(t, config.Default()))
	if err != nil {
		t.Fatal(err)
	}
	want := ref.SHA256([]byte("---\nname: a\n---\nbody\n"))
	for _, n := range res.Graph.Nodes {
		if n.Field == "agent" {
			if n.SHA256 != want {
				t.Fatalf("agent sha256 %s, want %s", n.SHA256, want)
			}
			return
		}
	}
	t.Fatal("no agent node")
}
