package harness

import (
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/corpustest"
)

func libraryHarnesses(t testing.TB, lib corpustest.Library) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(lib.Dir, "harness", "*.yaml"))
	if err != nil || len(files) < lib.MinHarnesses {
		t.Fatalf("%d harnesses in %s, want at least %d: %v", len(files), lib.Dir, lib.MinHarnesses, err)
	}
	sort.Strings(files)
	return files
}

// TestLibrariesValidate: every harness of the project's library and of the
// real one loads and checks, alone and with each of its forge overlays;
// with an overlay applied no overlay field is left and every reference is
// resolved (or is a ${VAR} host file, or optional). github, gitlab and jira
// loadConfig loads the config.yaml of the fullsend dir dir.
func loadConfig(t testing.TB, dir string) *config.Config {
	t.Helper()
	cfg, _, err := config.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// overlays are all exercised.
func TestLibrariesValidate(t *testing.T) {
	corpustest.Each(t, func(t *testing.T, lib corpustest.Library) {
		dir := lib.Dir
		cfg := loadConfig(t, dir)
		forgesSeen := map[string]bool{}
		for _, f := range libraryHarnesses(t, lib) {
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
	})
}

// TestLibraryBaseChain: the project's library composes a chain of two
// bases (inspect-nightly -> inspect-strict -> inspect) with a forge
// overlay as the composition rules say.
func TestLibraryBaseChain(t *testing.T) {
	lib := corpustest.Own(t)
	cfg := loadConfig(t, lib.Dir)
	file := filepath.Join(lib.Dir, "harness", "inspect-nightly.yaml")
	h, err := Load(file, LoadOptions{Root: lib.Dir, Config: cfg, Forge: "github"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Check(cfg); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(h.Chain, []string{file, "harness/inspect-strict.yaml", "harness/inspect.yaml"}) {
		t.Errorf("chain = %v", h.Chain)
	}
	// Child scalars win; readonly_repo and the agent come from the root.
	if h.Model != "sonnet" || h.TimeoutMinutes != 30 || !h.ReadonlyRepo || h.Agent != "agents/inspect.md" {
		t.Errorf("scalars: model %q timeout %d readonly %v agent %q", h.Model, h.TimeoutMinutes, h.ReadonlyRepo, h.Agent)
	}
	// Skills: base first, then child, then the overlay.
	want := []string{"skills/pr-inspection", "skills/code-inspection", "skills/docs-drift", "skills/queue-tools",
		"skills/github-cli", "skills/labels/github", "skills/pr-inspection/github"}
	if !slices.Equal(h.Skills, want) {
		t.Errorf("skills = %v\nwant     %v", h.Skills, want)
	}
	// env merges per key: the middle harness's threshold, the overlay's
	// mode, the root's token.
	sb := h.Env.Sandbox
	if sb["FINDING_THRESHOLD"] != "medium" || sb["INSPECT_MODE"] != "nightly" || sb["GH_TOKEN"] != "${GH_TOKEN}" {
		t.Errorf("env.sandbox = %v", sb)
	}
	if h.Security.FailMode != "closed" || !h.Security.SandboxHooks["secret_redact"] || h.Policy != "policies/github/inspect.yaml" {
		t.Errorf("security %+v policy %q", h.Security, h.Policy)
	}
	if n := len(h.HostFiles); n != 5 {
		t.Errorf("%d host files, want the base's 4 and the overlay's 1", n)
	}
}

// BenchmarkLoadCheckCode measures Load + ApplyForge + Check of the corpus's
// code harness (part of run's fixed overhead). It needs the corpus
// (FULLSEND_CORPUS): README's figure is measured on it.
func BenchmarkLoadCheckCode(b *testing.B) {
	lib := corpustest.Corpus(b)
	dir := lib.Dir
	cfg := loadConfig(b, dir)
	p := filepath.Join(dir, "harness", lib.Main+".yaml")
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
