package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/trust"
)

// HarnessTarget is a HARNESS argument after resolution.
type HarnessTarget struct {
	Arg   string // as given
	Path  string // local harness file (absolute), "" when URL is set
	URL   string // remote harness reference as given (https…#sha256=…)
	Root  string // the fullsend dir its local references resolve against
	Agent string // agent name from config.yaml agents:, when given by name
	// RootFrom says how Root was chosen (for errors about missing files).
	RootFrom string
	// RepoLayer: the harness file or its fullsend dir is untrusted input
	// (inside the target repository's work tree; package trust), so the
	// harness is checked as a repository layer's.
	RepoLayer bool
}

// ResolveHarnessArg interprets HARNESS: an https URL; a path (relative to
// the current directory, else to the fullsend dir); or the name of an agent
// registered under agents: in config.yaml (the harness file's basename
// without .yaml, e.g. "triage"). The fullsend dir is --fullsend-dir when
// given explicitly or when it contains the harness; otherwise it is derived
// from the harness location (harness.FindRoot), so
// "fullsend run examples/hello/harness.yaml" works from a fresh clone.
func (e *Env) ResolveHarnessArg(cmd *cobra.Command, arg string) (HarnessTarget, error) {
	d, err := e.trustDecision(cmd.Context())
	if err != nil {
		return HarnessTarget{Arg: arg}, err
	}
	t, err := e.resolveHarnessArg(cmd, arg)
	if err != nil {
		return t, err
	}
	if p, root, ok := trustedHarnessPath(d, t.Path); ok {
		t.Path, t.Root = p, root
	} else if d.Untrusted(t.Path) && !d.IsRepoLayer(t.Root) && d.Mode == trust.ModeTrustedRef && pathWithin(t.Path, d.WorktreeFullsendDir) {
		// A changed or new harness of the work tree's copy of the org
		// dir: a repository layer over the org layer read from git.
		t.Root = d.WorktreeFullsendDir
		if r := harness.FindRoot(t.Path); pathWithin(r, d.WorktreeFullsendDir) {
			t.Root = r
		}
	}
	t.RepoLayer = d.IsRepoLayer(t.Root) || d.Untrusted(t.Path)
	return t, nil
}

func (e *Env) resolveHarnessArg(cmd *cobra.Command, arg string) (HarnessTarget, error) {
	t := HarnessTarget{Arg: arg, Root: e.FullsendDir}
	if arg == "" {
		return t, usageError{errors.New("HARNESS is empty")}
	}
	k, err := ref.Classify(arg)
	if err != nil {
		return t, fmt.Errorf("harness %w", err)
	}
	if k == ref.URL {
		t.URL = arg
		return t, nil
	}
	explicit := false
	if f := cmd.Flag("fullsend-dir"); f != nil {
		explicit = f.Changed
	}
	if p, ok := harnessFile(arg); ok {
		t.Path = p
	} else if p, ok := harnessFile(filepath.Join(e.FullsendDir, arg)); ok && k == ref.Relative {
		t.Path = p
	} else if isDir(arg) {
		return t, fmt.Errorf("harness %s: is a directory; did you mean %s?", arg, filepath.Join(arg, "harness.yaml"))
	} else if isAgentName(arg) {
		return e.agentTarget(t)
	} else {
		return t, fmt.Errorf("harness %s: no such file (nor under %s)", arg, e.FullsendDir)
	}
	switch {
	case explicit:
		t.RootFrom = "given by --fullsend-dir"
	case !pathWithin(t.Path, e.FullsendDir):
		t.Root = harness.FindRoot(t.Path)
		t.RootFrom = "inferred from the harness's location: the parent of its harness/ directory, else its own directory; --fullsend-dir sets another"
	default:
		t.RootFrom = "the default --fullsend-dir, which holds the harness"
	}
	return t, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// explainRoot adds to an error about a missing local reference which
// fullsend dir it was looked up in and how that dir was chosen.
func (t HarnessTarget) explainRoot(err error) error {
	if err == nil || t.RootFrom == "" || !errors.Is(err, harness.ErrNotFound) {
		return err
	}
	return fmt.Errorf("%w; relative paths resolve against the fullsend dir %s (%s)", err, t.Root, t.RootFrom)
}

func harnessFile(p string) (string, bool) {
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() {
		return "", false
	}
	a, err := filepath.Abs(p)
	return a, err == nil
}

func pathWithin(p, dir string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

func isAgentName(s string) bool {
	return !strings.ContainsAny(s, "/.") && s != ""
}

func (e *Env) agentTarget(t HarnessTarget) (HarnessTarget, error) {
	cfg, err := e.loadConfigFrom(e.FullsendDir)
	if err != nil {
		return t, err
	}
	var names []string
	for _, a := range cfg.Agents {
		name := agentName(a.Source)
		names = append(names, name)
		if name != t.Arg {
			continue
		}
		t.Agent = name
		r, err := ref.Parse(a.Source)
		if err != nil {
			return t, fmt.Errorf("agent %s: %w", name, err)
		}
		switch r.Kind {
		case ref.URL:
			t.URL = a.Source
		case ref.Absolute:
			t.Path = r.Path
		default:
			t.Path = filepath.Join(e.FullsendDir, filepath.FromSlash(r.Path))
		}
		return t, nil
	}
	sort.Strings(names)
	if cfg.Path == "" {
		return t, fmt.Errorf("harness %s: no such file, and no %s in %s to look up agent names", t.Arg, config.FileName, e.FullsendDir)
	}
	return t, fmt.Errorf("harness %s: no such file or registered agent (agents in %s: %s)", t.Arg, cfg.Path, strings.Join(names, ", "))
}

// agentName is the basename of a harness source without .yaml/.yml.
func agentName(source string) string {
	s := source
	if i := strings.LastIndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	s = s[strings.LastIndexByte(s, '/')+1:]
	s = strings.TrimSuffix(s, ".yaml")
	return strings.TrimSuffix(s, ".yml")
}

// LoadHarness resolves HARNESS, loads config.yaml of its fullsend dir and
// the harness (base chain composed, forge overlay applied when forge != "").
// Remote harnesses are not loaded here (the resolver fetches them).
func (e *Env) LoadHarness(cmd *cobra.Command, arg, forge string) (*harness.Harness, *config.Config, HarnessTarget, error) {
	return e.loadHarness(cmd, arg, forge, false)
}

// loadHarness is LoadHarness; forgeOptional applies forge only when the
// harness has that overlay (the overlay a detected CI selects).
func (e *Env) loadHarness(cmd *cobra.Command, arg, forge string, forgeOptional bool) (*harness.Harness, *config.Config, HarnessTarget, error) {
	t, err := e.ResolveHarnessArg(cmd, arg)
	if err != nil {
		return nil, nil, t, err
	}
	if t.URL != "" {
		return nil, nil, t, fmt.Errorf("harness %s: a remote harness is fetched by `fullsend resolve` or `fullsend run`, not loaded locally", ref.Redact(t.URL))
	}
	cfg, err := e.loadConfigFrom(t.Root)
	if err != nil {
		return nil, nil, t, err
	}
	layers, check := e.harnessTrust(t)
	h, err := harness.Load(t.Path, harness.LoadOptions{Root: t.Root, Layers: layers, Config: cfg, Forge: forge, ForgeOptional: forgeOptional, Check: check})
	if err != nil {
		return nil, nil, t, t.explainRoot(err)
	}
	for _, n := range h.Notices {
		e.notef("%s", n)
	}
	return h, cfg, t, nil
}
