package harness

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/config"
)

// corpusDir is ../shared/corpus/fullsend-agents from the module root. CI
// keeps ../shared beside the clone, so a missing corpus is a failure.
func corpusDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "corpus", "fullsend-agents"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d, "harness")); err != nil {
		t.Fatalf("corpus missing (expected ../shared beside the repository): %v", err)
	}
	return d
}

func corpusHarnesses(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join(corpusDir(t), "harness", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus harnesses: %v", err)
	}
	sort.Strings(files)
	return files
}

func TestCorpusValidates(t *testing.T) {
	dir := corpusDir(t)
	cfg, _, err := config.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	forgesSeen := map[string]bool{}
	for _, f := range corpusHarnesses(t) {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		h, err := Load(f, LoadOptions{Root: dir, Config: cfg})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		res, err := h.Check(cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(res) < 5 {
			t.Fatalf("%s: only %d refs", name, len(res))
		}
		forges := h.ForgeNames()
		if len(forges) == 0 {
			t.Fatalf("%s: no forge overlays", name)
		}
		for _, fg := range forges {
			forgesSeen[fg] = true
			t.Run(name+"/"+fg, func(t *testing.T) {
				h, err := Load(f, LoadOptions{Root: dir, Config: cfg, Forge: fg})
				if err != nil {
					t.Fatal(err)
				}
				if h.AppliedForge != fg || len(h.Forge) != 0 {
					t.Fatalf("overlay not applied: %q %v", h.AppliedForge, h.ForgeNames())
				}
				res, err := h.Check(cfg)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range res {
					if r.Forge != "" || strings.HasPrefix(r.Field, "forge.") {
						t.Fatalf("overlay field left after apply: %+v", r)
					}
					if r.Local == "" && !r.EnvExpanded() && !r.Optional {
						t.Fatalf("%s not resolved", r.Field)
					}
				}
			})
		}
	}
	for _, fg := range []string{"github", "gitlab", "jira"} {
		if !forgesSeen[fg] {
			t.Errorf("forge %s never exercised", fg)
		}
	}
}

// BenchmarkLoadCheckCode measures Load + ApplyForge + Check of the corpus's
// code harness (part of run's fixed overhead).
func BenchmarkLoadCheckCode(b *testing.B) {
	dir := corpusDir(b)
	cfg, _, err := config.Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(dir, "harness", "code.yaml")
	for b.Loop() {
		h, err := Load(p, LoadOptions{Root: dir, Config: cfg, Forge: "github"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := h.Check(cfg); err != nil {
			b.Fatal(err)
		}
	}
}
