package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/lock"
	"github.com/fullsend-ai/fullsend/internal/progress"
	"github.com/fullsend-ai/fullsend/internal/resolve"
	"github.com/fullsend-ai/fullsend/internal/scan"
	"github.com/fullsend-ai/fullsend/internal/termsafe"
)

// testOnlyFetchOptions lets tests point the fetch client at a loopback
// fake forge (test CA, fake resolver).
var testOnlyFetchOptions func(*fetch.Options)

// ResolveFlags are the flags shared by resolve, lock, graph (and run).
type ResolveFlags struct {
	Offline bool
	Frozen  bool
	Yes     bool
	Forge   string
	// forgeOptional: Forge is the overlay a detected CI selected, applied
	// only when the harness has it (package ci).
	forgeOptional bool
	// commits: resolve branch and tag URLs to commits (lock).
	commits bool
	// vendored: vendor: entries being written, used over lock.yaml's.
	vendored []lock.Vendored
}

func (f *ResolveFlags) add(cmd *cobra.Command, forge bool) {
	cmd.Flags().BoolVar(&f.Offline, "offline", false, "use only the cache: no network at all; a cache miss is an error")
	cmd.Flags().BoolVar(&f.Frozen, "frozen", false, "fail (instead of warning) when the lock file is missing or out of date")
	cmd.Flags().BoolVar(&f.Yes, "yes", false, "confirm an untrusted top-level harness URL without a prompt")
	if forge {
		cmd.Flags().StringVar(&f.Forge, "forge", "", "apply the harness's forge.`NAME` overlay (default: resolve every overlay)")
	}
}

// ResolveHarness resolves HARNESS for a command: config, cache, audit log,
// lazily built network and scanner, terminal prompt and progress, and the
// lock file of the fullsend dir. Warnings go to stderr. It is what `run`
// calls too.
//
// The lock file is <fullsend dir>/lock.yaml of the fullsend dir the harness
// resolves against (HarnessTarget.Root: --fullsend-dir, or the one inferred
// from the harness location), the same dir `fullsend lock` writes.
func (e *Env) ResolveHarness(ctx context.Context, cmd *cobra.Command, arg string, f ResolveFlags, useLock bool) (*resolve.Result, error) {
	t, err := e.ResolveHarnessArg(cmd, arg)
	if err != nil {
		return nil, err
	}
	return e.resolveTarget(ctx, cmd, t, f, useLock)
}

// LockPath is the lock file of the fullsend dir a harness resolves against.
func (t HarnessTarget) LockPath() string { return filepath.Join(t.Root, lock.FileName) }

func (e *Env) resolveTarget(ctx context.Context, cmd *cobra.Command, t HarnessTarget, f ResolveFlags, useLock bool) (*resolve.Result, error) {
	cfg, err := e.loadConfigFrom(t.Root)
	if err != nil {
		return nil, err
	}
	opts, err := e.ResolveOptions(cfg, t.Root, f)
	if err != nil {
		return nil, err
	}
	opts.Layers, opts.HarnessCheck = e.harnessTrust(t)
	opts.LockCommand = func(update bool) string { return lockCommand(cmd, t.Arg, update) }
	if useLock {
		lf, err := readLock(t.LockPath())
		if err != nil {
			return nil, err
		}
		opts.Lock = lf
	} else if opts.Lock, err = vendorLock(t.LockPath(), f.vendored); err != nil {
		return nil, err
	}
	target := t.Path
	if t.URL != "" {
		target = t.URL
	}
	pr := e.Progress()
	pr.Event(progress.Event{Kind: progress.PhaseStart, Name: "resolve"})
	start := time.Now()
	res, err := resolve.Resolve(ctx, target, opts)
	status := "ok"
	if err != nil {
		status = "failed"
	}
	pr.Event(progress.Event{Kind: progress.PhaseEnd, Name: "resolve", Status: status, Duration: time.Since(start)})
	if err != nil {
		// The registry tier's warnings often explain the error: printed
		// before it, never dropped.
		for _, w := range resolve.Warnings(err) {
			e.warnf("%s", w)
		}
		return nil, t.explainRoot(err)
	}
	for _, n := range res.Notices {
		e.notef("%s", n)
	}
	for _, w := range res.Warnings {
		e.warnf("%s", w)
	}
	if m := movableWarning(res.MovableRefs); m != "" {
		e.warnf("%s", m)
	}
	return res, nil
}

// readLock reads a lock file; a missing one is nil.
func readLock(path string) (*lock.File, error) {
	lf, err := lock.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return lf, err
}

// fetchOptions is a run's FetchOptions hook: ResolveOptions with flags f.
func (e *Env) fetchOptions(f ResolveFlags) func(*config.Config, string) (resolve.Options, error) {
	return func(cfg *config.Config, root string) (resolve.Options, error) {
		return e.ResolveOptions(cfg, root, f)
	}
}

// ResolveOptions builds resolve.Options from the org config and flags.
func (e *Env) ResolveOptions(cfg *config.Config, root string, f ResolveFlags) (resolve.Options, error) {
	cacheDir := cas.DefaultDir(e.Workspace, e.Getenv)
	store, err := cas.Open(cacheDir)
	if err != nil {
		return resolve.Options{}, err
	}
	e.ignoreCache(cacheDir)
	accept, err := e.acceptances(root)
	if err != nil {
		return resolve.Options{}, err
	}
	o := resolve.Options{
		Config:  cfg,
		Root:    root,
		Forge:   f.Forge,
		Store:   store,
		Offline: f.Offline,
		Audit:   audit.Open(audit.Path(cacheDir)),
		Frozen:  f.Frozen,
		Yes:     f.Yes,
		Scanner: &lazyScanner{build: func() (*scan.Pipeline, error) { return newScanPipeline(cfg, cacheDir, e.Getenv, accept) }},

		ResolveCommits: f.commits,
	}
	o.ForgeOptional = f.forgeOptional
	if !f.Offline {
		getenv := e.Getenv
		o.Network = func() (*resolve.Network, error) {
			return resolve.NewNetwork(cfg, getenv, testOnlyFetchOptions), nil
		}
	}
	o.Events = e.Progress()
	if e.IsTerminal(e.Stderr) && e.IsTerminal(e.Stdin) {
		o.Confirm = e.confirm
	}
	return o, nil
}

// confirm asks a yes/no question on the terminal.
func (e *Env) confirm(prompt string) (bool, error) {
	defer e.Progress().Hold()()
	fmt.Fprint(termsafe.SafeWriter(e.Stderr), prompt)
	line, err := bufio.NewReader(e.Stdin).ReadString('\n')
	if err != nil && line == "" {
		return false, err
	}
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", nil
}

// lazyScanner builds the scan pipeline on first use: a fully cached
// resolution never loads the scanners' rule sets.
type lazyScanner struct {
	once  sync.Once
	build func() (*scan.Pipeline, error)
	p     *scan.Pipeline
	err   error
}

func (l *lazyScanner) ScanFiles(ctx context.Context, files map[string][]byte, m scan.Meta) (*scan.Result, error) {
	l.once.Do(func() { l.p, l.err = l.build() })
	if l.err != nil {
		return nil, l.err
	}
	return l.p.ScanFiles(ctx, files, m)
}

// newScanPipeline builds the scan pipeline from the org config, the one
// place its policy is derived (scan.OptionsFromConfig), with the fullsend
// dir's accepted findings.
func newScanPipeline(cfg *config.Config, cacheDir string, getenv func(string) string, accept *scan.Acceptances) (*scan.Pipeline, error) {
	o := scan.OptionsFromConfig(cfg, nil)
	o.FindingsLog = scan.FindingsPath(cacheDir)
	o.Getenv = getenv
	o.Accept = accept
	return scan.New(o)
}

func newResolveCmd(env *Env) *cobra.Command {
	var f ResolveFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "resolve [--offline] [--json] [--frozen] [--forge NAME] [--yes] HARNESS",
		Short: "Resolve and verify a harness's whole dependency graph; run nothing",
		Long: `resolve loads HARNESS (a path, an https URL pinned with #sha256=, or an
agent name from config.yaml), follows every reference to the full transitive
closure, fetches what is not cached (verified against its pin, scanned before
it is cached), and prints the graph: a tree by default, or with --json one
object {"harness": {...}, "resources": [...]}.

With a lock file in the fullsend dir, every hash is checked against it: a
difference is a warning, or an error with --frozen.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := env.ResolveHarness(cmd.Context(), cmd, args[0], f, true)
			if err != nil {
				return err
			}
			env.finishProgress()
			if asJSON {
				return writeJSON(env.Stdout, struct {
					Harness   harnessView        `json:"harness"`
					Resources []resolve.Resource `json:"resources"`
				}{viewOf(res), res.Graph.Resources()})
			}
			return res.Graph.WriteTree(env.Stdout)
		},
	}
	f.add(cmd, true)
	env.addTrustFlags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the resolved harness and resources as JSON")
	return cmd
}

// harnessView is the "harness" object of resolve --json: the harness's
// settings with every reference replaced by a local path.
type harnessView struct {
	Source                 string                  `json:"source"`
	SHA256                 string                  `json:"sha256"`
	Remote                 bool                    `json:"remote"`
	TraceID                string                  `json:"trace_id"`
	Forge                  string                  `json:"forge,omitempty"`
	Chain                  []string                `json:"chain,omitempty"`
	Agent                  string                  `json:"agent"`
	Doc                    string                  `json:"doc,omitempty"`
	Model                  string                  `json:"model,omitempty"`
	Image                  string                  `json:"image,omitempty"`
	Runtime                string                  `json:"runtime,omitempty"`
	Role                   string                  `json:"role,omitempty"`
	Slug                   string                  `json:"slug,omitempty"`
	Policy                 string                  `json:"policy,omitempty"`
	Profiles               []string                `json:"openshell_profiles,omitempty"`
	Providers              []string                `json:"providers,omitempty"`
	Skills                 []string                `json:"skills,omitempty"`
	Plugins                []string                `json:"plugins,omitempty"`
	PreScript              string                  `json:"pre_script,omitempty"`
	PostScript             string                  `json:"post_script,omitempty"`
	HostFiles              []hostFileView          `json:"host_files,omitempty"`
	ValidationLoop         *validationView         `json:"validation_loop,omitempty"`
	TimeoutMinutes         int                     `json:"timeout_minutes,omitempty"`
	AllowedRemoteResources []string                `json:"allowed_remote_resources,omitempty"`
	Overlays               map[string]*overlayView `json:"forge_overlays,omitempty"`
}

type validationView struct {
	Script        string `json:"script,omitempty"`
	Schema        string `json:"schema,omitempty"`
	MaxIterations int    `json:"max_iterations,omitempty"`
}

type hostFileView struct {
	Src      string `json:"src"`
	Dest     string `json:"dest"`
	Expand   bool   `json:"expand,omitempty"`
	Optional bool   `json:"optional,omitempty"`
}

type overlayView struct {
	Policy    string         `json:"policy,omitempty"`
	Profiles  []string       `json:"openshell_profiles,omitempty"`
	Providers []string       `json:"providers,omitempty"`
	Skills    []string       `json:"skills,omitempty"`
	Plugins   []string       `json:"plugins,omitempty"`
	HostFiles []hostFileView `json:"host_files,omitempty"`
}

func hostFiles(l []harness.HostFileSpec) []hostFileView {
	var out []hostFileView
	for _, h := range l {
		out = append(out, hostFileView{h.Src, h.Dest, h.Expand, h.Optional})
	}
	return out
}

func viewOf(res *resolve.Result) harnessView {
	h := res.Harness
	v := harnessView{
		Source: res.Source, SHA256: string(res.SHA256), Remote: res.Remote, TraceID: res.TraceID,
		Forge: h.AppliedForge, Chain: h.Chain, Agent: h.Agent, Doc: h.Doc, Model: h.Model, Image: h.Image,
		Runtime: h.Runtime, Role: h.Role, Slug: h.Slug, Policy: h.Policy, Profiles: h.Openshell.Profiles,
		Providers: h.Providers, Skills: h.Skills, Plugins: h.Plugins, PreScript: h.PreScript,
		PostScript: h.PostScript, HostFiles: hostFiles(h.HostFiles),
		TimeoutMinutes: h.TimeoutMinutes, AllowedRemoteResources: h.AllowedRemoteResources,
	}
	if vl := h.ValidationLoop; vl != nil {
		v.ValidationLoop = &validationView{vl.Script, vl.Schema, vl.MaxIterations}
	}
	for name, o := range h.Forge {
		if v.Overlays == nil {
			v.Overlays = map[string]*overlayView{}
		}
		v.Overlays[name] = &overlayView{Policy: o.Policy, Profiles: o.Openshell.Profiles, Providers: o.Providers,
			Skills: o.Skills, Plugins: o.Plugins, HostFiles: hostFiles(o.HostFiles)}
	}
	return v
}

// movableWarning is the one warning line about remote references naming a
// branch or tag ("" when there are none).
func movableWarning(urls []string) string {
	if len(urls) == 0 {
		return ""
	}
	what := urls[0]
	if len(urls) > 1 {
		what = fmt.Sprintf("%s and %d more", urls[0], len(urls)-1)
	}
	return fmt.Sprintf("%s: a branch or tag, not a commit, so it can move; write a commit id in its place, or run `fullsend lock`, which records the commit it names now", what)
}
