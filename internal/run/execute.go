package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fullsend-ai/fullsend/internal/fetchsvc"
	"github.com/fullsend-ai/fullsend/internal/progress"
	"github.com/fullsend-ai/fullsend/internal/resolve"
	"github.com/fullsend-ai/fullsend/internal/rundir"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/builtin"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/backends"
	"github.com/fullsend-ai/fullsend/internal/scan"
	"github.com/fullsend-ai/fullsend/internal/secrets"
	"github.com/fullsend-ai/fullsend/internal/trace"
)

// TimeoutGrace is how long after timeout_minutes a run may take to stop:
// transcript, sandbox teardown and report (the proxy cuts the agent's
// open connections at teardown).
const TimeoutGrace = 5 * time.Second

// TeardownTimeout bounds sandbox termination (which runs on a fresh
// context, so it also happens after cancellation).
const TeardownTimeout = 30 * time.Second

// ScanContextTimeout bounds each in-sandbox `fullsend scan context`.
const ScanContextTimeout = 2 * time.Minute

// ExecOptions are the collaborators of Execute; the zero value is the
// production setup.
type ExecOptions struct {
	// Backend provisions the sandbox (nil: backends.Open(plan.Backend,
	// SandboxOptions)).
	Backend        sandbox.Backend
	SandboxOptions sandbox.Options
	// Runtime runs the agent (nil: builtin.Get(plan.Runtime)).
	Runtime runtime.Runtime
	// Progress receives the run's progress events: each phase's start and
	// end, the agent's turns and tool calls, model retries (nil: none).
	Progress progress.Sink
	// Warn receives warnings: open-mode findings, notes (nil: discarded).
	Warn io.Writer
	// Now is the clock (default time.Now).
	Now func() time.Time
	// RunID overrides the generated run id (tests).
	RunID string
	// OnProvisioned is called with the session right after provisioning
	// (tests inspect the sandbox through it).
	OnProvisioned func(sandbox.Session)
	// Fetch configures the runtime fetch service (package fetchsvc) for
	// harnesses with allow_runtime_fetch: true: store, scanner, audit log,
	// network. Nil: no service (a note says fetch_skill will fail).
	Fetch *fetchsvc.Options
	// BeforeTeardown is called with the session before it is terminated,
	// also after failures (tests inspect the final sandbox state).
	BeforeTeardown func(sandbox.Session)
	// Interactive, when set, replaces the agent loop, download and
	// post_script (see Agent): the run ends when it returns.
	Interactive func(ctx context.Context, a *Agent) error
	// CI is recorded as report.json's "ci" (nil: not in CI).
	CI *CIInfo
	// Anomalies are resolution's fetches that differ from lock.yaml
	// (report.json "anomalies"); with Frozen or in CI any anomalous
	// fetch, these or runtime ones, fails the run (anomaly.go).
	Anomalies []resolve.Anomaly
	Frozen    bool
}

type execution struct {
	// traceID is findingTraceID's, once made (upstream.go).
	traceID string
	// repoSettingsBlocked: the runtime's check of the target repository's
	// own agent-CLI settings blocked the host scan; escalate never turns
	// that into a review (upstream.go).
	repoSettingsBlocked bool
	// feedbackScript is the last validation's failed script run, the
	// last entry of its errors (feedback.go).
	feedbackScript *scriptRun
	// ctx carries the run's span (package trace): teardown and the egress
	// decision events hang off it.
	ctx    context.Context
	plan   *Plan
	o      ExecOptions
	report *Report
	dir    string
	rd     *rundir.Dir // dir, held open: every file of the run goes through it
	getenv func(string) string

	backend  sandbox.Backend
	sess     sandbox.Session // watch, once provisioned
	watch    *limitWatch
	rt       runtime.Runtime
	pipeline *scan.Pipeline
	bin      runtime.BootstrapInput
	fetch    *fetchsvc.Server
	fetchLog *os.File
	fetched  *fetchedSkills // skills the runtime-fetch service placed in the sandbox

	evMu   sync.Mutex
	events *os.File

	// hostsvc.go: the host services forwarder; verdict.go: the current
	// iteration and tool names by call id (for verdict findings).
	stopHostServices func()
	timedOut         bool
	broker           *secrets.Broker // secrets.go; nil without secrets
	iteration        int
	toolNames        map[string]string
}

// BlockedError is a run stopped by a security scan (fail_mode closed). It
// wraps scan.ErrBlocked.
type BlockedError struct {
	Phase string // host_scan | scan_context
	Err   error
}

func (e *BlockedError) Error() string { return e.Phase + ": " + e.Err.Error() }
func (e *BlockedError) Unwrap() error { return e.Err }

// InvalidResultError is a run whose agent never produced a valid result.
type InvalidResultError struct {
	Iterations int
	Errors     []string
}

func (e *InvalidResultError) Error() string {
	first := ""
	if len(e.Errors) > 0 {
		first = ": " + e.Errors[0]
		if len(e.Errors) > 1 {
			first += fmt.Sprintf(" (and %d more)", len(e.Errors)-1)
		}
	}
	return fmt.Sprintf("result invalid after %d iteration(s)%s", e.Iterations, first)
}

// AgentError is an agent that failed (non-zero exit, runtime error).
type AgentError struct {
	Iteration int
	ExitCode  int
	Err       error
}

func (e *AgentError) Error() string {
	return fmt.Sprintf("agent failed (iteration %d, exit status %d): %v", e.Iteration, e.ExitCode, e.Err)
}
func (e *AgentError) Unwrap() error { return e.Err }

// Execute runs a plan: pre_script, host scan, provision, layout, runtime
// bootstrap, in-sandbox context scan, the agent with its validation loop,
// download, post_script, teardown. It creates the run directory first and
// always writes report.json there, also after failures and cancellation;
// the returned report is non-nil whenever the run directory was created.
// The error is nil exactly when the agent succeeded and its result
// validated (or there was nothing to validate). The sandbox is terminated
// on every path, on a fresh context so that cancellation (Ctrl-C) still
// tears it down.
func Execute(ctx context.Context, p *Plan, o ExecOptions) (rep *Report, err error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	start := o.Now()
	id := o.RunID
	if p.Resume != "" {
		id = p.Resume
	}
	if id == "" {
		id = NewRunID(start)
	}
	if err := CheckRunID(id); err != nil {
		return nil, err
	}
	dir := filepath.Join(p.RunsDir, id)
	// The run directory is held open (package rundir) for the life of the
	// run: no file in it is ever reached through a symlink.
	var rd *rundir.Dir
	if p.Resume == "" {
		if err := os.MkdirAll(p.RunsDir, 0o700); err != nil {
			return nil, fmt.Errorf("run directory: %w", err)
		}
		if rd, err = rundir.Make(p.RunsDir, id); err != nil {
			return nil, fmt.Errorf("run directory: %w", err)
		}
	} else {
		if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("--resume: run %s: %w (in %s)", id, ErrNoRun, p.RunsDir)
		}
		if rd, err = openResumed(dir, id); err != nil {
			return nil, err
		}
	}
	defer rd.Close()
	unlock, err := lockRunDir(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var resumeNote string
	resumes := 0
	if p.Resume != "" {
		if resumes, resumeNote, err = prepareResume(rd, id, p.SHA256, p.Runtime); err != nil {
			return nil, err
		}
	}
	x := &execution{plan: p, o: o, dir: dir, rd: rd, getenv: p.Scan.Getenv}
	// The run's span: the command's root span when the CLI started one,
	// else a root of its own (a no-op either way when tracing is off).
	span := trace.FromContext(ctx)
	if !span.IsRecording() {
		ctx, span = trace.Start(ctx, "run")
		defer span.End()
	}
	x.ctx = ctx
	x.traceStart(span, id)
	if x.getenv == nil {
		x.getenv = os.Getenv
	}
	x.report = &Report{
		Version: ReportVersion, RunID: id, Status: StatusRunning, StartedAt: start.UTC(), dir: dir,
		Harness: HarnessInfo{Source: p.Source, SHA256: p.SHA256, Forge: p.Forge}, GraphHash: p.GraphHash,
		Runtime: p.Runtime, Agent: p.AgentName,
		Sandbox:    SandboxInfo{Backend: p.Backend, Network: p.Spec.Network.Allow, Mounts: p.Spec.Mounts, Image: p.Spec.Image, Limits: p.Limits},
		Target:     TargetInfo{Repo: p.TargetRepo, Dir: p.RepoDir()},
		Validation: Validation{Schema: p.Schema, Script: p.ValidationScript, MaxIterations: p.MaxIterations, Iterations: []Iteration{}},
		Findings:   []FindingRecord{},
		Notes:      slices.Clone(p.Notes),
		Resumes:    resumes,
		CI:         o.CI,
		Trust:      p.Trust,
		Anomalies:  slices.Clone(o.Anomalies),
	}
	if resumeNote != "" {
		x.note(resumeNote)
	}
	if p.ResolveTime > 0 {
		x.report.Phases = append(x.report.Phases, Phase{Name: "resolve", Status: "ok", DurationMS: ms(p.ResolveTime)})
	}
	ev, ferr := rd.Append(EventsFile, 0o600)
	if ferr != nil {
		return nil, fmt.Errorf("run %s: %w", id, ferr)
	}
	x.events = ev
	defer func() {
		x.teardown()
		err = x.runtimeAnomaly(err)
		x.evMu.Lock()
		x.events.Close()
		x.events = nil
		x.evMu.Unlock()
		err = x.limitErr(err)
		x.finish(ctx, err)
		if errors.Is(err, errSkipped) {
			err = nil
		}
		x.traceFinish(span, err)
		if werr := x.report.save(); werr != nil && err == nil {
			err = fmt.Errorf("run %s: writing %s: %w", id, ReportFile, werr)
		}
		rep = x.report
	}()
	return nil, x.reviewErr(x.execute(ctx))
}

func (x *execution) execute(ctx context.Context) error {
	p := x.plan
	if err := x.staticAnomalies(); err != nil {
		return err
	}
	x.warnPlanDowngrades()
	if x.o.Runtime == nil {
		if err := p.CheckRuntime(); err != nil {
			return err
		}
	}
	if p.PreflightCheck != "" {
		if err := x.phase(ctx, "preflight_check", func(ctx context.Context) error { return x.runPreflight(ctx) }); err != nil {
			return err
		}
	}
	if p.PreScript != "" {
		if err := x.phase(ctx, "pre_script", func(ctx context.Context) error { return x.preScript(ctx) }); err != nil {
			return err
		}
		if x.report.Status == StatusSkipped {
			return errSkipped
		}
	}
	if err := x.phase(ctx, "stage", func(context.Context) error { return x.stage() }); err != nil {
		return err
	}
	if err := x.phase(ctx, "host_scan", func(ctx context.Context) error { return x.escalate("host_scan", x.hostScan(ctx)) }); err != nil {
		return err
	}
	if p.AllowFetch {
		if err := x.phase(ctx, "fetch_service", func(ctx context.Context) error { return x.startFetch(ctx) }); err != nil {
			return err
		}
	}
	if err := x.phase(ctx, "provision", func(ctx context.Context) error { return x.provision(ctx) }); err != nil {
		return err
	}
	if err := x.phase(ctx, "layout", func(ctx context.Context) error { return x.layout(ctx) }); err != nil {
		return err
	}
	if err := x.phase(ctx, "bootstrap", func(ctx context.Context) error { return x.bootstrap(ctx) }); err != nil {
		return err
	}
	if len(p.HostServices) > 0 {
		if err := x.phase(ctx, "host_services", func(ctx context.Context) error { return x.startHostServices(ctx) }); err != nil {
			return err
		}
	}
	if err := x.phase(ctx, "scan_context", func(ctx context.Context) error { return x.escalate("scan_context", x.scanContext(ctx)) }); err != nil {
		return err
	}
	if x.o.Interactive != nil {
		return x.phase(ctx, "interactive", func(ctx context.Context) error { return x.interactive(ctx) })
	}
	if err := x.agentLoop(ctx); err != nil {
		return err
	}
	if p.PostScript != "" {
		return x.phase(ctx, "post_script", func(ctx context.Context) error {
			return runHostScript(ctx, "post_script", p.PostScript, filepath.Join(x.dir, PostScriptLog), x.scriptEnv(map[string]string{
				"FULLSEND_RESULT_FILE": x.resultHostPath(),
			}), p.ScriptTimeout)
		})
	}
	return nil
}

// scriptEnv is the environment of host scripts on top of the runner's own:
// env.runner, FULLSEND_RUN_DIR, FULLSEND_OUTPUT_DIR (host copy of the
// sandbox output) and extra.
func (x *execution) scriptEnv(extra map[string]string) map[string]string {
	env := map[string]string{}
	for k, v := range x.plan.RunnerEnv {
		env[k] = v
	}
	env["FULLSEND_RUN_DIR"] = x.dir
	env["FULLSEND_OUTPUT_DIR"] = filepath.Join(x.dir, OutputSubdir)
	for k, v := range extra {
		env[k] = v
	}
	return env
}

func (x *execution) resultHostPath() string {
	return filepath.Join(x.dir, OutputSubdir, ResultName)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// phase runs f as a named phase, recording its timing and outcome,
// printing a progress line and tracing it as a span (f gets the span's
// context).
func (x *execution) phase(ctx context.Context, name string, f func(context.Context) error) error {
	progress.Emit(x.o.Progress, progress.Event{Kind: progress.PhaseStart, Name: name})
	ctx, span := x.phaseSpan(ctx, name)
	start := time.Now()
	err := f(ctx)
	ph := Phase{Name: name, Status: "ok", DurationMS: ms(time.Since(start))}
	if err != nil {
		ph.Status, ph.Error = "failed", err.Error()
	}
	x.endPhaseSpan(span, name, err)
	x.report.Phases = append(x.report.Phases, ph)
	progress.Emit(x.o.Progress, progress.Event{Kind: progress.PhaseEnd, Name: name, Status: ph.Status, Duration: time.Since(start)})
	return err
}

func (x *execution) note(s string) {
	x.report.Notes = append(x.report.Notes, s)
	if x.o.Warn != nil {
		fmt.Fprintf(x.o.Warn, "fullsend: note: %s\n", s)
	}
}

func (x *execution) warn(s string) {
	if x.o.Warn != nil {
		fmt.Fprintf(x.o.Warn, "fullsend: warning: %s\n", s)
	}
}

// scanPipeline builds the pipeline once.
func (x *execution) scanPipeline() (*scan.Pipeline, error) {
	if x.pipeline == nil {
		pl, err := scan.New(x.plan.Scan)
		if err != nil {
			return nil, fmt.Errorf("scan pipeline: %w", err)
		}
		x.pipeline = pl
	}
	return x.pipeline, nil
}

// record adds findings to the report; in open mode critical ones are
// printed as warnings.
func (x *execution) record(phase string, fs []scan.Finding, blocked bool) {
	for _, f := range fs {
		x.report.Findings = append(x.report.Findings, FindingRecord{
			Phase: phase, Path: f.Path, Scanner: f.Scanner, Rule: f.Rule, Severity: f.Severity.String(),
			Line: f.Line, Column: f.Column, Message: f.Message, Blocked: blocked && f.Blocks(), Accepted: f.Accepted,
			TraceID: x.findingTraceID(x.ctx),
		})
		if !blocked && f.Blocks() {
			loc := f.Path
			if f.Line > 0 {
				loc = fmt.Sprintf("%s:%d:%d", f.Path, f.Line, f.Column)
			}
			x.warn(fmt.Sprintf("%s: %s: %s: %s (fail_mode open: not blocking)", phase, loc, f.Rule, f.Message))
		}
	}
}

// hostScan is Path A of seed 002: the target repository's context files,
// the org AGENTS.md when it will be injected, and the runtime content
// (agent definition, skills, plugins) are scanned on the host before
// anything enters the sandbox.
func (x *execution) hostScan(ctx context.Context) error {
	p := x.plan
	pl, err := x.scanPipeline()
	if err != nil {
		return err
	}
	files, err := repoContextFiles(p.TargetRepo)
	if err != nil {
		return err
	}
	imported, refusedImports, err := repoImports(p.TargetRepo, p.RepoDir(), files)
	if err != nil {
		return err
	}
	files = append(files, imported...)
	org, err := p.orgAgentsMD()
	if err != nil {
		return err
	}
	inj := p.decideInjection(org)
	rc, err := p.runtimeContentFiles()
	if err != nil {
		return err
	}
	files = append(files, rc...)
	if shadow := intersect(repoSkillNames(p.TargetRepo), skillNames(p.Skills)); len(shadow) > 0 {
		x.report.Target.Shadowed = shadow
		x.note("repository skills shadowed by fullsend skills of the same name (personal level wins): " + strings.Join(shadow, ", "))
	}
	var firstBlock error
	scanOne := func(data []byte, m scan.Meta) error {
		res, err := pl.Scan(ctx, data, m)
		if err != nil {
			return fmt.Errorf("scanning %s: %w", m.Path, err)
		}
		x.record("host_scan", res.Findings, res.Blocked)
		if res.Blocked && firstBlock == nil {
			firstBlock = &BlockedError{Phase: "host_scan", Err: res.Err()}
		}
		return nil
	}
	if inj.agentsMD != nil {
		name := "AGENTS.md (embedded org default)"
		if p.OrgAgentsMD != "" {
			name = p.OrgAgentsMD
		}
		if err := scanOne(inj.agentsMD, scan.Meta{Path: name, Origin: scan.Local, Kind: "context"}); err != nil {
			return err
		}
	}
	for _, f := range files {
		data, err := f.read() // repository files: read once, no symlink followed (layout.go)
		if err != nil {
			return err
		}
		origin := scan.Local
		if f.remote {
			origin = scan.Remote
		}
		if err := scanOne(data, scan.Meta{Path: f.display, Origin: origin, Kind: f.kind}); err != nil {
			return err
		}
	}
	// Imports that leave the repository, judged like scanner findings of
	// the importing file.
	if err := x.judgeImports(pl, files, refusedImports, &firstBlock); err != nil {
		return err
	}
	// The repository's own settings for the runtime's agent CLI (claude:
	// .claude/settings*.json): refused keys block whatever the fail mode
	// (the runtime refuses them again in the sandbox).
	cs, err := p.repoSettingsFindings()
	if err != nil {
		return err
	}
	x.record("host_scan", cs, true)
	res := &scan.Result{Findings: cs}
	res.Blocked = len(res.Blocking()) > 0
	x.repoSettingsBlocked = res.Blocked
	if res.Blocked && firstBlock == nil {
		firstBlock = &BlockedError{Phase: "host_scan", Err: res.Err()}
	}
	return firstBlock
}

func skillNames(l []SkillPlan) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = s.Name
	}
	return out
}

func intersect(a, b []string) []string {
	var out []string
	for _, s := range a {
		if slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

func (x *execution) provision(ctx context.Context) error {
	b := x.o.Backend
	if b == nil {
		var err error
		if b, err = backends.Open(x.plan.Backend, x.o.SandboxOptions); err != nil {
			return err
		}
	}
	x.backend = b
	x.report.Sandbox.Capabilities = b.Capabilities()
	x.warnBackendDowngrades(b.Name(), x.report.Sandbox.Capabilities)
	var err error
	if x.broker, err = x.newBroker(); err != nil {
		return err
	}
	spec := x.sessionSpec()
	x.traceProvision(ctx, b.Name(), &spec)
	x.applySecrets(&spec)
	if x.plan.ProvisionTimeout > 0 { // sandbox_timeout_seconds
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, x.plan.ProvisionTimeout)
		defer cancel()
	}
	s, err := b.Provision(ctx, spec)
	if err != nil {
		return fmt.Errorf("sandbox %s: %w", b.Name(), err)
	}
	x.watch = &limitWatch{Session: s, limits: x.plan.Limits}
	x.sess = x.watch
	x.report.Sandbox.SessionID = s.ID()
	if err := x.uploadCABundle(ctx); err != nil {
		return err
	}
	x.fetched = &fetchedSkills{up: s}
	x.fetch.Attach(x.fetched, skillNames(x.plan.Skills))
	if x.o.OnProvisioned != nil {
		x.o.OnProvisioned(s)
	}
	return nil
}

// sessionSpec is the spec of the run's sandbox sessions (the agent's and
// those of native delegate_task children).
func (x *execution) sessionSpec() sandbox.Spec {
	spec := x.plan.Spec
	spec.Env = map[string]string{"FULLSEND_OUTPUT_DIR": OutputDir}
	spec.Network.Services = append(slices.Clone(spec.Network.Services), x.fetch.Services()...)
	return spec
}

// provisionChild provisions a session for a native delegate_task child
// (max_parallel_children above 1): the run's spec on the run's backend,
// bounded like the agent's session; the runtime fills and terminates it.
func (x *execution) provisionChild(ctx context.Context) (sandbox.Session, error) {
	if x.plan.ProvisionTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, x.plan.ProvisionTimeout)
		defer cancel()
	}
	spec := x.sessionSpec()
	x.applySecrets(&spec)
	s, err := x.backend.Provision(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("sandbox %s: %w", x.backend.Name(), err)
	}
	return s, nil
}

func (x *execution) bootstrap(ctx context.Context) error {
	p := x.plan
	rt := x.o.Runtime
	if rt == nil {
		var err error
		if rt, err = builtin.Get(p.Runtime); err != nil {
			return err
		}
	}
	x.rt = rt
	if cs, ok := rt.(runtime.ChildSessioner); ok && x.backend != nil {
		cs.SetChildSessions(x.provisionChild)
	}
	if err := x.configureWeb(); err != nil {
		return err
	}
	if err := x.baseCapabilities(); err != nil {
		return err
	}
	bin := runtime.BootstrapInput{
		AgentName: p.AgentName, AgentFile: p.AgentFile, RepoDir: p.RepoDir(), Env: p.SandboxEnv,
		RunDir: x.dir, DisabledHooks: p.DisabledHooks, TrustRepoSettings: p.TrustRepoSettings,
	}
	for _, s := range p.Skills {
		bin.Skills = append(bin.Skills, runtime.Skill{Name: s.Name, HostDir: s.HostDir})
	}
	for _, pl := range p.Plugins {
		bin.Plugins = append(bin.Plugins, runtime.Plugin{Name: pl.Name, HostDir: pl.HostDir})
	}
	x.bin = bin
	if err := rt.Bootstrap(ctx, x.sess, bin); err != nil {
		return err
	}
	if hb, ok := rt.(runtime.HooksBootstrap); ok {
		if err := hb.BootstrapHooks(ctx, x.sess, bin); err != nil {
			return err
		}
	}
	return nil
}

// scanContext is Path B of seed 002: `fullsend scan context` inside the
// sandbox, once over the assembled repository copy and the agent
// configuration (--config-dir), with the run's fail mode; --remote when any
// skill came from a URL (the stricter policy for everything). Exit 0 =
// pass (findings recorded, critical ones warned in open mode), 1 with a
// JSON result = blocked, anything else = the scan did not run, which blocks
// in closed mode and warns in open mode.
func (x *execution) scanContext(ctx context.Context) error {
	closed := x.plan.FailMode != scan.FailOpen
	mode := scan.FailClosed
	if !closed {
		mode = scan.FailOpen
	}
	args := []string{runtime.FullsendBinary, "scan", "context", "--json", "--fail-mode", mode, "--config-dir", x.rt.ConfigDir()}
	for _, s := range x.plan.Skills {
		if s.Remote {
			args = append(args, "--remote")
			break
		}
	}
	if acc, err := x.uploadAcceptances(ctx); err != nil {
		return err
	} else if acc != "" {
		args = append(args, "--accept", acc)
	}
	dir := x.plan.RepoDir()
	args = append(args, dir)
	res, err := x.sess.Exec(ctx, sandbox.ExecRequest{
		Args: args, Cwd: "/tmp", Timeout: ScanContextTimeout,
		Env: map[string]string{"FULLSEND_CACHE_DIR": "/tmp/.fullsend-scan"},
	})
	if err != nil {
		return fmt.Errorf("scan context: %w", err)
	}
	var out scan.Result
	parsed := json.Unmarshal(bytes.TrimSpace(res.Stdout), &out) == nil
	switch {
	case res.ExitCode == 0 && parsed:
		x.record("scan_context", out.Findings, false)
	case res.ExitCode == 1 && parsed && closed:
		x.record("scan_context", out.Findings, true)
		c := out.Blocking()
		first := ""
		if len(c) > 0 {
			first = fmt.Sprintf(": %s:%d: %s: %s", c[0].Path, c[0].Line, c[0].Rule, c[0].Message)
		}
		return &BlockedError{Phase: "scan_context", Err: fmt.Errorf("%w: %d critical finding(s) in the sandbox context%s", scan.ErrBlocked, len(c), first)}
	default:
		msg := fmt.Sprintf("`fullsend scan context` could not run (exit status %d): %s", res.ExitCode, firstLine(res.Stderr, res.Stdout))
		f := scan.Finding{Scanner: "scan-context", Rule: "scan-context/failed", Severity: scan.Critical, Path: dir, Message: msg}
		x.record("scan_context", []scan.Finding{f}, closed)
		if closed {
			return &BlockedError{Phase: "scan_context", Err: fmt.Errorf("%w: %s", scan.ErrBlocked, msg)}
		}
	}
	return nil
}

func firstLine(bufs ...[]byte) string {
	for _, b := range bufs {
		s := strings.TrimSpace(string(b))
		if s == "" {
			continue
		}
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[:i]
		}
		if len(s) > 300 {
			s = s[:300] + "…"
		}
		return s
	}
	return "no output"
}

// onEvent appends a runtime event to events.jsonl and counts errors.
func (x *execution) onEvent(e runtime.Event) {
	if e.Kind == runtime.EventInfo && (e.Name == runtime.InfoEndpointChanged || e.Name == runtime.InfoWorkspace) {
		// A resumed transcript recorded another endpoint, a workspace
		// snapshot was not taken or restored: a note of the report, shown
		// even with --quiet.
		x.note(e.Text)
	} else {
		x.progressEvent(e)
	}
	x.evMu.Lock()
	defer x.evMu.Unlock()
	switch e.Kind {
	case runtime.EventError:
		x.report.Events.Errors++
	case runtime.EventToolCall:
		if x.toolNames == nil {
			x.toolNames = map[string]string{}
		}
		x.toolNames[e.ID] = e.Name
	case runtime.EventVerdict:
		x.verdict(e)
	}
	if x.events == nil {
		return
	}
	b, err := json.Marshal(e)
	if err == nil {
		x.events.Write(append(b, '\n'))
	}
}

// agentLoop runs the agent up to MaxIterations times, validating its
// result after each run and feeding the errors back.
func (x *execution) agentLoop(ctx context.Context) error {
	p := x.plan
	actx, cancel := context.WithTimeout(ctx, p.WallTime)
	defer cancel()
	var validator *schemaValidator
	if p.Schema != "" {
		v, err := newSchemaValidator(p.Schema)
		if err != nil {
			return err
		}
		validator = v
	}
	needResult := validator != nil || p.ValidationScript != ""
	env, opts := x.agentEnv(), x.agentOptions()
	feedback := ""
	var lastErrs []string
	defer x.saveTranscript()
	for i := 1; i <= p.MaxIterations; i++ {
		it := Iteration{N: i}
		start := time.Now()
		x.iteration = i
		agentErr, err := x.runAgent(ctx, actx, i, feedback, env, opts, &it)
		if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
			// The wall time is over: the run stops here (no download with
			// an expired context, no further iteration).
			it.DurationMS = ms(time.Since(start))
			x.report.Validation.Iterations = append(x.report.Validation.Iterations, it)
			x.timedOut = true
			return p.timeoutError()
		}
		if err == nil {
			err = x.phase(ctx, fmt.Sprintf("download[%d]", i), func(ctx context.Context) error { return x.download(actx) })
		}
		if err == nil && agentErr != nil {
			err = agentErr
		}
		if err != nil {
			it.DurationMS = ms(time.Since(start))
			x.report.Validation.Iterations = append(x.report.Validation.Iterations, it)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		var errs []string
		if needResult {
			err = x.phase(ctx, fmt.Sprintf("validate[%d]", i), func(ctx context.Context) error {
				var verr error
				errs, verr = x.validate(ctx, validator, i)
				return verr
			})
			if err != nil {
				return err
			}
		}
		it.Valid, it.Errors, it.DurationMS = len(errs) == 0, errs, ms(time.Since(start))
		x.report.Validation.Iterations = append(x.report.Validation.Iterations, it)
		if len(errs) == 0 {
			if needResult {
				ok := true
				x.report.Validation.Valid = &ok
				x.report.Validation.Result = filepath.ToSlash(filepath.Join(OutputSubdir, ResultName))
			}
			return nil
		}
		lastErrs = errs
		own := errs // fullsend's own errors: all but the script's line
		if x.feedbackScript != nil {
			own = errs[:len(errs)-1]
		}
		feedback = nextFeedback(p.FeedbackMode, i, own, x.feedbackScript, feedback)
	}
	bad := false
	x.report.Validation.Valid = &bad
	return &InvalidResultError{Iterations: p.MaxIterations, Errors: lastErrs}
}

// agentEnv is the agent's environment in the sandbox: env.sandbox, the
// runtime's own variables, the output and result paths and the fetch
// service's address.
func (x *execution) agentEnv() map[string]string {
	env := map[string]string{}
	for k, v := range x.plan.SandboxEnv {
		env[k] = v
	}
	for k, v := range x.rt.Env(x.bin) {
		env[k] = v
	}
	env["FULLSEND_OUTPUT_DIR"] = OutputDir
	env["FULLSEND_RESULT_FILE"] = x.plan.ResultPath()
	if dir, ok := x.plan.agentInputEnv(); ok {
		env["FULLSEND_AGENT_INPUT"] = dir
	}
	for k, v := range x.fetch.SandboxEnv("") {
		env[k] = v
	}
	return env
}

// agentOptions are the runtime's RunInput options: its settings in its
// own encoding.
func (x *execution) agentOptions() map[string]string { return x.plan.RunOptions() }

// runAgent runs iteration i of the agent as phase agent[i], within actx
// (the agent loop's wall time), recording its exit code and stop reason
// in it. agentErr is the agent's own failure (an *AgentError), err that
// of the phase (the runtime could not run, or ctx ended).
func (x *execution) runAgent(ctx, actx context.Context, i int, feedback string, env, opts map[string]string, it *Iteration) (agentErr, err error) {
	p := x.plan
	deadline, _ := actx.Deadline()
	err = x.phase(ctx, fmt.Sprintf("agent[%d]", i), func(sctx context.Context) error {
		actx := trace.With(actx, trace.FromContext(sctx))
		if i > 1 {
			if err := x.rt.CleanupIteration(actx, x.sess); err != nil {
				return err
			}
		}
		iterEnv := env
		if tp := trace.Traceparent(actx); tp != "" {
			// An agent CLI's own telemetry joins the run's trace.
			iterEnv = maps.Clone(env)
			iterEnv["TRACEPARENT"] = tp
		}
		in := runtime.RunInput{
			AgentName: p.AgentName, Prompt: p.Prompt, Model: p.Model, Iteration: i, Feedback: feedback,
			ResultPath: p.ResultPath(), ResultSchema: p.Schema, WorkDir: p.RepoDir(), Env: iterEnv, RunDir: x.dir,
			Options: maps.Clone(opts), Events: x.onEvent, Timeout: time.Until(deadline), FetchedSkills: x.fetched.skills(),
		}
		out, err := x.rt.Run(actx, x.sess, in)
		x.runtimeCapabilities()
		if out == nil {
			if err == nil {
				err = errors.New("runtime returned no outcome")
			}
			return err
		}
		x.count(out)
		traceOutcome(trace.FromContext(sctx), out)
		it.ExitCode, it.StopReason = out.ExitCode, out.StopReason
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, runtime.ErrResult) {
			return nil // judged by validation below
		}
		if err != nil || out.ExitCode != 0 {
			if err == nil {
				err = fmt.Errorf("stop reason %s", out.StopReason)
			}
			agentErr = &AgentError{Iteration: i, ExitCode: out.ExitCode, Err: err}
		}
		return nil
	})
	return agentErr, err
}

func (x *execution) count(o *runtime.Outcome) {
	e := &x.report.Events
	e.Iterations++
	e.Turns += o.Turns
	e.ToolCalls += o.ToolCalls
	e.InputTokens += o.InputTokens
	e.OutputTokens += o.OutputTokens
	e.CacheReadInputTokens += o.CacheReadInputTokens
	e.CacheCreationInputTokens += o.CacheCreationInputTokens
	e.CostUSD += o.CostUSD
	e.StopReason = o.StopReason
	e.AgentExit = o.ExitCode
}

// download replaces <run dir>/output with the sandbox's OutputDir.
func (x *execution) download(ctx context.Context) error {
	dst := filepath.Join(x.dir, OutputSubdir)
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := x.sess.Download(ctx, OutputDir, dst); err != nil {
		return fmt.Errorf("download %s: %w", OutputDir, err)
	}
	return nil
}

// validate checks the downloaded result: it must exist, match the schema,
// and make the host validation script exit 0. It returns the problems
// (nil = valid); the error is for a canceled run only.
func (x *execution) validate(ctx context.Context, v *schemaValidator, i int) ([]string, error) {
	p := x.plan
	x.feedbackScript = nil
	file := x.resultHostPath()
	data, err := readBounded(file, MaxResultSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return []string{fmt.Sprintf("no result: the agent did not write %s", p.ResultPath())}, nil
		}
		return []string{fmt.Sprintf("result %s: %v", p.ResultPath(), err)}, nil
	}
	var errs []string
	if v != nil {
		errs = v.validate(data)
	}
	if p.ValidationScript != "" {
		log := filepath.Join(x.dir, fmt.Sprintf("validation_script.%d.log", i))
		sr, err := runValidationScript(ctx, p.ValidationScript, log, x.scriptEnv(map[string]string{
			"FULLSEND_RESULT_FILE": file, "FULLSEND_SCHEMA_FILE": p.Schema, "FULLSEND_ITERATION": fmt.Sprint(i),
		}), p)
		if err != nil {
			return nil, err
		}
		if sr.err != nil {
			x.feedbackScript = sr
			errs = append(errs, sr.reportLine())
		}
	}
	return errs, nil
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// saveTranscript copies the runtime's transcript into the run dir, or the
// event log when the runtime keeps none.
func (x *execution) saveTranscript() {
	if th, ok := x.rt.(runtime.TranscriptHandler); ok && x.sess != nil {
		limit := TeardownTimeout
		if x.timedOut {
			limit = TimeoutGrace / 2 // the run is already past its deadline
		}
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		if err := th.SaveTranscript(ctx, x.sess, x.dir); err != nil {
			x.note("transcript: " + err.Error())
		}
		return
	}
	x.evMu.Lock()
	defer x.evMu.Unlock()
	if data, err := x.rd.ReadFile(EventsFile); err == nil {
		_ = x.rd.WriteAtomic(TranscriptFile, data, 0o600)
	}
}

// startFetch starts the runtime fetch service (loopback, per-run token);
// its log goes to <run dir>/fetch.log.
func (x *execution) startFetch(ctx context.Context) error {
	if x.o.Fetch == nil {
		x.note("allow_runtime_fetch: no runtime fetch service configured for this run; fetch_skill will fail")
		return nil
	}
	o := *x.o.Fetch
	if o.Config == nil {
		o.Config = x.plan.Config
	}
	if o.Getenv == nil {
		o.Getenv = x.getenv
	}
	lf, err := x.rd.Append(FetchLog, 0o600)
	if err != nil {
		return err
	}
	x.fetchLog = lf
	o.Log = lf
	srv, err := fetchsvc.StartIfAllowed(ctx, x.plan.Harness, o)
	if err != nil {
		return err
	}
	x.fetch = srv
	if srv != nil {
		x.report.Notes = append(x.report.Notes, fmt.Sprintf("runtime fetch: service on %s, at most %d fetches", srv.Addr(), srv.Service().Max()))
	}
	return nil
}

// teardown stops the fetch service and terminates the sandbox on a fresh
// context.
func (x *execution) teardown() {
	if x.stopHostServices != nil {
		x.stopHostServices()
	}
	if x.fetch != nil {
		x.fetch.Close()
		x.report.Events.RuntimeFetches = x.fetch.Service().Used()
	}
	if x.fetchLog != nil {
		x.fetchLog.Close()
	}
	if x.sess == nil {
		return
	}
	if x.o.BeforeTeardown != nil {
		x.o.BeforeTeardown(x.sess)
	}
	_ = x.phase(x.ctx, "teardown", func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), TeardownTimeout)
		defer cancel()
		return x.sess.Terminate(ctx)
	})
}

// finish sets the final status from the run's error.
func (x *execution) finish(ctx context.Context, err error) {
	r := x.report
	end := x.o.Now()
	r.FinishedAt = end.UTC()
	r.DurationMS = end.Sub(r.StartedAt).Milliseconds()
	var be *BlockedError
	var ie *InvalidResultError
	switch {
	case errors.Is(err, errSkipped):
		r.Status, r.ExitCode = StatusSkipped, 0
		return
	case err == nil:
		r.Status, r.ExitCode = StatusSucceeded, 0
	case ctx.Err() != nil:
		r.Status, r.ExitCode = StatusCanceled, 130
	case errors.As(err, &be) || errors.Is(err, scan.ErrBlocked):
		r.Status, r.ExitCode = StatusBlocked, 1
	case errors.As(err, &ie):
		r.Status, r.ExitCode = StatusInvalid, 1
	case errors.Is(err, ErrReview):
		r.Status, r.ExitCode = StatusReview, 1
	case errors.Is(err, ErrTimeout):
		r.Status, r.ExitCode = StatusTimeout, 1
	default:
		r.Status, r.ExitCode = StatusFailed, 1
	}
	if err != nil {
		r.Error = err.Error()
	}
	out := filepath.Join(x.dir, OutputSubdir)
	_ = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(x.dir, p)
			r.Outputs = append(r.Outputs, filepath.ToSlash(rel))
		}
		return nil
	})
}
