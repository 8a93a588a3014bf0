package resolve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/corpustest"
	"github.com/fullsend-ai/fullsend/internal/lock"
	"github.com/fullsend-ai/fullsend/internal/resolve/resolvetest"
)

func localOpts(t *testing.T, cfg *config.Config) Options {
	store, err := cas.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return Options{Config: cfg, Store: store, Offline: true, Scanner: &resolvetest.Scanner{}}
}

func skillMD(deps ...string) string {
	var b strings.Builder
	b.WriteString("---\nname: s\ndescription: d\n")
	if len(deps) > 0 {
		b.WriteString("dependencies:\n")
		for _, d := range deps {
			fmt.Fprintf(&b, "  - %s\n", d)
		}
	}
	b.WriteString("---\nbody\n")
	return b.String()
}

func TestLocalCycleShowsPath(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"agents/a.md":         "agent\n",
		"skills/a/SKILL.md":   skillMD("skills/b"),
		"skills/b/SKILL.md":   skillMD("skills/a"),
		"harness/h.yaml":      "agent: agents/a.md\nskills: [skills/a]\n",
		"skills/ok/SKILL.md":  skillMD(),
		"harness/ok.yaml":     "agent: agents/a.md\nskills: [skills/ok]\n",
		"skills/top/SKILL.md": skillMD("skills/a"),
	})
	_, err := Resolve(context.Background(), filepath.Join(dir, "harness/h.yaml"), localOpts(t, config.Default()))
	if !errors.Is(err, ErrCycle) || !strings.Contains(err.Error(), "skills/a -> skills/b -> skills/a") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Resolve(context.Background(), filepath.Join(dir, "harness/ok.yaml"), localOpts(t, config.Default())); err != nil {
		t.Fatal(err)
	}
}

// chainDir makes a harness whose skill s0 depends on s1 … s(n-1): the
// deepest node is at depth n.
func chainDir(t *testing.T, n int) string {
	files := map[string]string{"agents/a.md": "agent\n", "harness/h.yaml": "agent: agents/a.md\nskills: [skills/s0]\n"}
	for i := 0; i < n; i++ {
		if i+1 < n {
			files[fmt.Sprintf("skills/s%d/SKILL.md", i)] = skillMD(fmt.Sprintf("skills/s%d", i+1))
		} else {
			files[fmt.Sprintf("skills/s%d/SKILL.md", i)] = skillMD()
		}
	}
	return writeDir(t, files)
}

func TestMaxDepth(t *testing.T) {
	for _, tc := range []struct {
		depth, max int
		ok         bool
	}{{10, 10, true}, {11, 10, false}, {3, 3, true}, {4, 3, false}} {
		t.Run(fmt.Sprintf("%d_of_%d", tc.depth, tc.max), func(t *testing.T) {
			cfg := config.Default()
			cfg.Security.RemoteResources.MaxDepth = tc.max
			res, err := Resolve(context.Background(), filepath.Join(chainDir(t, tc.depth), "harness/h.yaml"), localOpts(t, cfg))
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				deepest := 0
				for _, n := range res.Graph.Nodes {
					deepest = max(deepest, n.Depth)
				}
				if deepest != tc.depth {
					t.Errorf("deepest node at %d, want %d", deepest, tc.depth)
				}
				return
			}
			if !errors.Is(err, ErrTooDeep) || !strings.Contains(err.Error(), "max_depth") {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestMaxResources(t *testing.T) {
	mk := func(skills int) string {
		files := map[string]string{"agents/a.md": "agent\n"}
		var l []string
		for i := 0; i < skills; i++ {
			files[fmt.Sprintf("skills/k%d/SKILL.md", i)] = skillMD()
			l = append(l, fmt.Sprintf("skills/k%d", i))
		}
		files["harness/h.yaml"] = "agent: agents/a.md\nskills: [" + strings.Join(l, ", ") + "]\n"
		return filepath.Join(writeDir(t, files), "harness/h.yaml")
	}
	cfg := config.Default()
	cfg.Security.RemoteResources.MaxResources = 5
	res, err := Resolve(context.Background(), mk(4), localOpts(t, cfg)) // agent + 4 skills = 5
	if err != nil || len(res.Graph.Nodes) != 5 {
		t.Fatalf("at limit: %v", err)
	}
	if _, err := Resolve(context.Background(), mk(5), localOpts(t, cfg)); !errors.Is(err, ErrTooMany) {
		t.Fatalf("over limit: err = %v", err)
	}
	// Default limit is 50.
	if _, err := Resolve(context.Background(), mk(49), localOpts(t, config.Default())); err != nil {
		t.Fatalf("50 resources: %v", err)
	}
	if _, err := Resolve(context.Background(), mk(50), localOpts(t, config.Default())); !errors.Is(err, ErrTooMany) {
		t.Fatalf("51 resources: %v", err)
	}
}

func TestAgentSkillsAndPolicySchemas(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"agents/a.md":           "---\nname: a\nskills:\n  - code-implementation\n  - skills/extra\n---\nbody\n",
		"skills/extra/SKILL.md": skillMD(),
		"policies/p.yaml":       "version: 1\nschemas:\n  - schemas/s.json\n",
		"schemas/s.json":        "{}",
		"harness/h.yaml":        "agent: agents/a.md\npolicy: policies/p.yaml\n",
	})
	res, err := Resolve(context.Background(), filepath.Join(dir, "harness/h.yaml"), localOpts(t, config.Default()))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, n := range res.Graph.Nodes {
		got[n.Field+" "+n.Ref] = n.Kind
	}
	if got["skills[1] skills/extra"] != "skill" || got["schemas[0] schemas/s.json"] != "schema" || len(got) != 4 {
		t.Fatalf("nodes = %v (a bare skill name must not be a reference)", got)
	}
	if len(res.Skills()) != 1 || res.Skills()[0].Name != "extra" {
		t.Errorf("Skills() = %+v", res.Skills())
	}
}

// TestLibrariesLocalEveryForge resolves every harness of each library from
// its local dir, with every forge overlay: every node is local and hashed.
func TestLibrariesLocalEveryForge(t *testing.T) {
	corpustest.Each(t, func(t *testing.T, lib corpustest.Library) {
		files, _ := filepath.Glob(filepath.Join(lib.Dir, "harness", "*.yaml"))
		if len(files) < lib.MinHarnesses {
			t.Fatalf("%d harnesses in %s", len(files), lib.Dir)
		}
		for _, f := range files {
			for _, fg := range []string{"", "github", "gitlab", "jira"} {
				o := localOpts(t, nil)
				o.Forge = fg
				res, err := Resolve(context.Background(), f, o)
				if err != nil {
					if fg == "jira" && strings.Contains(err.Error(), `no forge overlay "jira"`) {
						continue
					}
					t.Fatalf("%s --forge %q: %v", filepath.Base(f), fg, err)
				}
				if len(res.Graph.Nodes) == 0 || res.Harness.Agent == "" || !filepath.IsAbs(res.Harness.Agent) {
					t.Fatalf("%s: %d nodes, agent %q", filepath.Base(f), len(res.Graph.Nodes), res.Harness.Agent)
				}
				for _, n := range res.Graph.Nodes {
					if n.Remote || n.SHA256 == "" {
						t.Errorf("%s: %s %+v", filepath.Base(f), n.Field, n)
					}
				}
			}
		}
	})
}

func TestLockRoundTripStaleAndFrozen(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"agents/a.md":       "agent\n",
		"skills/a/SKILL.md": skillMD("skills/b"),
		"skills/b/SKILL.md": skillMD(),
		"harness/h.yaml":    "agent: agents/a.md\nskills: [skills/a]\n",
	})
	h := filepath.Join(dir, "harness/h.yaml")
	res, err := Resolve(context.Background(), h, localOpts(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	entry := LockEntry(res, time.Unix(0, 0))
	if entry.Source != "harness/h.yaml" || len(entry.Dependencies) != 2 || len(entry.Dependencies[1].Deps[0].TransitiveDeps) != 1 {
		t.Fatalf("entry = %+v", entry)
	}
	lf := &lock.File{}
	lf.Put("h", entry, "2026-01-01T00:00:00Z")
	data, err := lf.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	lf2, err := lock.Parse("lock.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	o := localOpts(t, nil)
	o.Lock = lf2
	res, err = Resolve(context.Background(), h, o)
	if err != nil || len(res.Warnings) != 0 {
		t.Fatalf("with lock: %v %v", err, res.Warnings)
	}
	// A transitive dependency changes: stale.
	if err := os.WriteFile(filepath.Join(dir, "skills/b/SKILL.md"), []byte(skillMD()+"more\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = Resolve(context.Background(), h, o)
	if err != nil || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "skills/b") || !strings.Contains(res.Warnings[0], "fullsend lock --update harness/h.yaml") {
		t.Fatalf("stale dep: %v %q", err, res.Warnings)
	}
	// The harness changes: the warning names it and the fix.
	if err := os.WriteFile(h, []byte("agent: agents/a.md\nskills: [skills/a]\nmodel: opus\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = Resolve(context.Background(), h, o)
	if err != nil || len(res.Warnings) == 0 || !strings.Contains(res.Warnings[0], "harness/h.yaml has changed since lock.yaml was written; run `fullsend lock --update harness/h.yaml`") {
		t.Fatalf("stale harness: %v %q", err, res.Warnings)
	}
	o.Frozen = true
	if _, err := Resolve(context.Background(), h, o); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "fullsend lock --update harness/h.yaml") {
		t.Fatalf("frozen: err = %v", err)
	}
	o.Lock = nil
	if _, err := Resolve(context.Background(), h, o); !errors.Is(err, ErrStale) {
		t.Fatalf("frozen without lock: err = %v", err)
	}
}
