package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/fetchsvc"
	"github.com/fullsend-ai/fullsend/internal/resolve"
	"github.com/fullsend-ai/fullsend/internal/runtime/builtin"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// Request is one run as a caller (the CLI) asks for it: the plan's options
// and the few services only the caller can provide. Run calls them in a
// fixed order (see Run); an error a service returns is returned unchanged.
type Request struct {
	// Options are the plan's options. FullsendDir is the fallback when the
	// resolved harness has no fullsend dir of its own; Run sets
	// ResolveTime, and with Resume but no Runtime, the resumed run's
	// recorded runtime (native when it left no report).
	Options Options
	// Resolve resolves the harness (lock file, prompts, progress). Required.
	Resolve func(context.Context) (*resolve.Result, error)
	// LoadConfig loads the org config of a fullsend dir. Required.
	LoadConfig func(dir string) (*config.Config, error)
	// CheckPlan is the caller's own check of the plan (the CLI refuses
	// flags of another runtime), made right after the scan acceptances are
	// loaded, before the runtime and model checks. Nil: none.
	CheckPlan func(*Plan) error
	// FetchOptions gives the cache, scanner, audit log and network of the
	// runtime fetch service. Called only for a harness with
	// allow_runtime_fetch, and required then.
	FetchOptions func(cfg *config.Config, dir string) (resolve.Options, error)
	// PrepareRunsDir creates the runs directory for a new run (the CLI adds
	// its .gitignore). Nil: os.MkdirAll.
	PrepareRunsDir func(dir string) error
	// SandboxOptions completes the sandbox options Run derives from
	// config.yaml for the plan's backend (the CLI: kubernetes namespace and
	// gateway key). Nil: none.
	SandboxOptions func(cfg *config.Config, backend string, o *sandbox.Options) error
	// Exec are Execute's options; Run sets Fetch and SandboxOptions, and
	// Anomalies and Frozen from the resolution and Frozen below.
	Exec ExecOptions
	// Frozen is --frozen: an anomalous fetch fails the run (anomaly.go).
	Frozen bool
}

// UsageError is an error in what the caller asked for, found before
// anything ran: no target repository, or native model settings the
// runtime would refuse. The CLI exits 2 on it.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Run resolves, plans and executes one run. The order of its checks is
// part of the contract: nothing is resolved before the resumed run's
// runtime is known; the runtime names, the plan, the scan acceptances,
// the caller's CheckPlan, the runtime (Plan.CheckRuntime) and the native
// model settings are all checked before any host script runs or any
// sandbox exists. A nil report means the run never started.
func Run(ctx context.Context, req Request) (*Report, error) {
	o := req.Options
	if o.Resume != "" && o.Runtime == "" {
		o.Runtime = resumedRuntime(o.runsDir(), o.Resume)
	}
	start := time.Now()
	res, err := req.Resolve(ctx)
	if err != nil {
		return nil, err
	}
	o.ResolveTime = time.Since(start)
	if res.Root != "" {
		o.FullsendDir = res.Root
	}
	cfg, err := req.LoadConfig(o.FullsendDir)
	if err != nil {
		return nil, err
	}
	plan, err := preparePlan(req, res, cfg, o)
	if err != nil {
		return nil, err
	}
	exec := req.Exec
	exec.Anomalies, exec.Frozen = res.Anomalies, exec.Frozen || req.Frozen
	if exec.Fetch, err = fetchOptions(req, res, cfg, o.FullsendDir); err != nil {
		return nil, err
	}
	if o.Resume == "" {
		if err := prepareRunsDir(req, plan.RunsDir); err != nil {
			return nil, fmt.Errorf("run directory: %w", err)
		}
	}
	if exec.SandboxOptions, err = sandboxOptions(req, cfg, plan.Backend); err != nil {
		return nil, err
	}
	return Execute(ctx, plan, exec)
}

// resumedRuntime is the runtime of a resumed run: the recorded one, else
// the runtime that can resume runs (runtime.Resumer; a run killed before
// its first report).
func resumedRuntime(runsDir, id string) string {
	if prev, err := Load(runsDir, id); err == nil && prev.Runtime != "" {
		return prev.Runtime
	}
	if r := builtin.Resumable(); len(r) > 0 {
		return r[0]
	}
	return ""
}

// preparePlan checks the runtime names, builds the plan, loads the scan
// acceptances and makes every check that must come before a host script.
func preparePlan(req Request, res *resolve.Result, cfg *config.Config, o Options) (*Plan, error) {
	// The harness's (or config's) runtime name.
	if o.Runtime == "" {
		if err := CheckHarnessRuntime(res.Loaded, cfg); err != nil {
			return nil, err
		}
	}
	plan, err := NewPlan(res, cfg, o)
	if errors.Is(err, ErrNoTargetRepo) || errors.Is(err, ErrImage) || errors.Is(err, ErrCannotSucceed) {
		return nil, &UsageError{err}
	}
	if err != nil {
		return nil, err
	}
	// Reviewed findings accepted in the fullsend dir, for the host scan and
	// the in-sandbox scan alike (a malformed file stops the run here).
	// (never a repository layer's: trust.Decision.AcceptDir).
	if dir, _ := o.Trust.AcceptDir(o.FullsendDir); dir != "" {
		if plan.Scan.Accept, err = scan.LoadAcceptances(filepath.Join(dir, scan.AcceptFile)); err != nil {
			return nil, err
		}
	}
	// The model settings: still before any host script runs or any
	// sandbox exists.
	if req.CheckPlan != nil {
		if err := req.CheckPlan(plan); err != nil {
			return nil, err
		}
	}
	if err := plan.CheckRuntime(); err != nil {
		return nil, err
	}
	if err := checkCredentialEnv(res.Loaded, plan); err != nil {
		return nil, &UsageError{err}
	}
	if err := preflightRuntime(plan); err != nil {
		return nil, &UsageError{err}
	}
	return plan, nil
}

// fetchOptions configures the runtime fetch service of a harness with
// allow_runtime_fetch (nil otherwise).
func fetchOptions(req Request, res *resolve.Result, cfg *config.Config, dir string) (*fetchsvc.Options, error) {
	if !res.Harness.AllowRuntimeFetch {
		return nil, nil
	}
	if req.FetchOptions == nil {
		return nil, errors.New("run: allow_runtime_fetch: no fetch options given")
	}
	ro, err := req.FetchOptions(cfg, dir)
	if err != nil {
		return nil, err
	}
	return &fetchsvc.Options{
		Config: cfg, Store: ro.Store, Scanner: ro.Scanner, Audit: ro.Audit, Network: ro.Network,
		Getenv: req.Options.Getenv, TraceID: res.TraceID, Offline: ro.Offline,
	}, nil
}

// prepareRunsDir creates the runs directory of a new run.
func prepareRunsDir(req Request, dir string) error {
	if req.PrepareRunsDir != nil {
		return req.PrepareRunsDir(dir)
	}
	return os.MkdirAll(dir, 0o755)
}

// sandboxOptions derives the sandbox options from config.yaml for backend.
func sandboxOptions(req Request, cfg *config.Config, backend string) (sandbox.Options, error) {
	o := sandbox.Options{
		AllowedPrivateNetworks: cfg.Security.RemoteResources.AllowedPrivateNetworks,
		DockerHost:             cfg.Sandbox.Docker.Host,
		OCIRuntime:             cfg.Sandbox.Docker.OCIRuntime,
		Image:                  cfg.Sandbox.Docker.Image,
	}
	if req.SandboxOptions != nil {
		if err := req.SandboxOptions(cfg, backend, &o); err != nil {
			return sandbox.Options{}, err
		}
	}
	return o, nil
}
