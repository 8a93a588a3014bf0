package run

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/frontmatter"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/resolve"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/builtin"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/scan"
	"github.com/fullsend-ai/fullsend/internal/trust"
)

// Sandbox paths the runner owns (besides the runtime layout constants).
const (
	// OutputDir is FULLSEND_OUTPUT_DIR inside the sandbox; it is downloaded
	// into <run dir>/output after every iteration.
	OutputDir = "/sandbox/output"
	// ResultName is the agent's result file inside OutputDir.
	ResultName = "agent-result.json"
	// EmptyRepoName is the working directory created under
	// /sandbox/workspace when there is no target repository.
	EmptyRepoName = "repo"
	// DefaultRuntime is used when neither flag, harness nor config name one.
	DefaultRuntime = "claude"
	// DefaultScriptTimeout bounds pre_script, post_script and
	// validation_loop.script when the harness has no timeout_minutes.
	DefaultScriptTimeout = 10 * time.Minute
	// DefaultWallTime bounds the agent when the harness has no
	// timeout_minutes.
	DefaultWallTime = 60 * time.Minute
)

// Options are the run settings that do not come from the harness or the
// config (command-line flags and the caller's environment).
type Options struct {
	Runtime string // --runtime; "" = harness runtime:, config runtime:, DefaultRuntime
	Sandbox string // --sandbox; "" = config sandbox.backend, "local"
	// TargetRepo is the repository the agent works on; "" = the git
	// repository containing Cwd; none = an empty working directory.
	TargetRepo string
	Cwd        string // default: os.Getwd
	// Workspace holds the run directories (<Workspace>/.fullsend/runs)
	// and the cache.
	Workspace string
	// RunsDir, when set, is where the run directories live instead
	// (the CLI's choice: see package rundir).
	RunsDir string
	// FullsendDir is where the org default AGENTS.md is looked up (the
	// resolved harness's fullsend dir when it has one).
	FullsendDir string
	// CacheDir is the resource cache (excluded from the repo copy; the
	// findings log lives there). "" = none.
	CacheDir string
	Prompt   string // --prompt; "" = a default naming the agent
	Resume   string // --resume RUN_ID (a runtime.Resumer's run)
	// RuntimeFlags are each runtime's settings from the command line, by
	// runtime name (its runtime.Flags' Parse); the plan's runtime's are
	// handed to its runtime.Planner.
	RuntimeFlags map[string]runtime.Config
	// Getenv reads the runner's environment (${VAR} expansion, host
	// scripts). Default os.Getenv.
	Getenv func(string) string
	// ResolveTime is how long resolution took (recorded in the report).
	ResolveTime time.Duration
	// Trust is the command's trust decision (nil: FullsendDir is trusted).
	Trust *trust.Decision
}

// SkillPlan is one skill uploaded to the personal level.
type SkillPlan struct {
	Name    string `json:"name"`     // directory name under skills/
	HostDir string `json:"host_dir"` // local directory (cache or fullsend dir)
	Ref     string `json:"ref"`      // reference as written
	Remote  bool   `json:"remote"`
}

// HostFile is one host_files entry after ${VAR} expansion.
type HostFile struct {
	Index    int    `json:"index"`
	Src      string `json:"src"` // absolute host path; "" when skipped
	Written  string `json:"written"`
	Dest     string `json:"dest"`
	Expand   bool   `json:"expand,omitempty"`
	Optional bool   `json:"optional,omitempty"`
	Skipped  string `json:"skipped,omitempty"` // why an optional file is not copied
}

// Plan is everything a run will do, computed without side effects from
// the resolved harness, the config and the options: Plan reads files (the
// policy, profiles, frontmatter, host file existence) but writes nothing,
// starts nothing and never touches a sandbox. It is the serialisable
// PlanRecord plus what lives only in memory: the environment values
// (which may hold secrets), the scan options, the resolved harness and
// config. A Plan serialises as its PlanRecord alone, so a field added
// here never reaches JSON.
type Plan struct {
	PlanRecord

	SandboxEnv map[string]string // env.sandbox, expanded (may hold secrets)
	RunnerEnv  map[string]string // env.runner, expanded (may hold secrets)
	Scan       scan.Options      // the scan pipeline's options (Getenv, acceptances)
	CacheDir   string
	// ResolveTime is how long resolution took (the report's resolve phase).
	ResolveTime time.Duration
	// Harness and Config are the resolved harness and the org config
	// (the runtime fetch service needs them).
	Harness    *harness.Materialized
	Config     *config.Config
	runtimeErr error
	// planned is the runtime's part of the plan (planRuntime), applied
	// at the steps it concerns.
	planned *runtime.PlanOutput
}

// MarshalJSON writes the PlanRecord only.
func (p Plan) MarshalJSON() ([]byte, error) { return json.Marshal(p.PlanRecord) }

// PlanRecord is the serialisable part of a Plan: no secret, nothing only
// the running process can use.
type PlanRecord struct {
	Source    string       `json:"source"` // harness source (path or URL)
	SHA256    string       `json:"sha256"`
	GraphHash string       `json:"graph_hash"`
	Forge     string       `json:"forge,omitempty"`
	Runtime   string       `json:"runtime"`
	Settings  *Settings    `json:"runtime_options,omitempty"`
	Backend   string       `json:"sandbox"`
	Spec      sandbox.Spec `json:"spec"`

	AgentName string `json:"agent_name"`
	Model     string `json:"model,omitempty"`
	// DisabledHooks are the security.sandbox_hooks set to false.
	DisabledHooks []string    `json:"disabled_hooks,omitempty"`
	AgentFile     string      `json:"agent_file"`
	Skills        []SkillPlan `json:"skills,omitempty"`
	Plugins       []SkillPlan `json:"plugins,omitempty"`
	HostFiles     []HostFile  `json:"host_files,omitempty"`

	// TrustRepoSettings is security.trust_repo_settings (claude runtime).
	TrustRepoSettings bool `json:"trust_repo_settings,omitempty"`

	// Secrets are the names of the org secrets the run gets (secrets.go).
	Secrets []string `json:"secrets,omitempty"`

	PreScript        string        `json:"pre_script,omitempty"`
	PostScript       string        `json:"post_script,omitempty"`
	ValidationScript string        `json:"validation_script,omitempty"`
	Schema           string        `json:"schema,omitempty"`
	MaxIterations    int           `json:"max_iterations"`
	WallTime         time.Duration `json:"wall_time"`
	ScriptTimeout    time.Duration `json:"script_timeout"`

	// FeedbackMode is validation_loop.feedback_mode (feedback.go).
	FeedbackMode string `json:"feedback_mode,omitempty"`
	// Upstream-schema settings (upstream.go): agent_input's host dir,
	// security.enabled: false, on_critical: review's label, and
	// security.trace.enabled: false.
	AgentInput       string `json:"agent_input,omitempty"`
	SecurityDisabled bool   `json:"security_disabled,omitempty"`
	ReviewLabel      string `json:"review_label,omitempty"`
	NoFindingTrace   bool   `json:"no_finding_trace,omitempty"`
	// SkillOverrides are the skills' file overrides (overrides.go).
	SkillOverrides []PlannedOverride `json:"skill_overrides,omitempty"`
	// Limits are the resource limits in force: the org's sandbox.limits
	// lowered by the harness's resources:.
	Limits config.Limits `json:"limits"`

	TargetRepo   string `json:"target_repo,omitempty"` // host dir; "" = empty working dir
	RepoName     string `json:"repo_name"`
	ReadonlyRepo bool   `json:"readonly_repo,omitempty"`
	OrgAgentsMD  string `json:"org_agents_md,omitempty"` // host file; "" = embedded default
	// ExcludeFromRepo are host paths inside TargetRepo not copied (the run
	// directories and the cache when they live in the repository).
	ExcludeFromRepo []string `json:"exclude_from_repo,omitempty"`

	FailMode string `json:"fail_mode"`

	Prompt     string   `json:"prompt"`
	Resume     string   `json:"resume,omitempty"`
	RunsDir    string   `json:"runs_dir"`
	AllowFetch bool     `json:"allow_runtime_fetch,omitempty"`
	Notes      []string `json:"notes,omitempty"`
	// Downgrades are the notes that say an enforcement is weaker than the
	// harness asked for (also in Notes); Execute prints them as warnings
	// before anything runs (downgrade.go).
	Downgrades []string `json:"downgrades,omitempty"`

	// Install is what of the runner host the runtime uses in the sandbox
	// (the claude runtime's CLI on the local backend: runtime.PlanOutput;
	// serialised as "claude", the one runtime that has one);
	// HostServices are the runner-host endpoints the sandbox reaches at
	// the same address; ProvisionTimeout is the harness's
	// sandbox_timeout_seconds; PreflightCheck its
	// validation_loop.preflight_check (hostsvc.go).
	Install          any           `json:"claude,omitempty"`
	HostServices     []HostService `json:"host_services,omitempty"`
	ProvisionTimeout time.Duration `json:"provision_timeout,omitempty"`
	PreflightCheck   string        `json:"preflight_check,omitempty"`
	// Trust is which layers the run trusted (report.json trust).
	Trust *trust.Info `json:"trust,omitempty"`
}

// Settings are the runtime's typed settings of the run (its
// runtime.Config), serialised as their RunInput options.
type Settings struct{ runtime.Config }

// MarshalJSON writes the settings as their options.
func (s *Settings) MarshalJSON() ([]byte, error) { return json.Marshal(s.Options()) }

// RuntimeConfig is the runtime's settings of the run (nil: none).
func (p *Plan) RuntimeConfig() runtime.Config {
	if p.Settings == nil {
		return nil
	}
	return p.Settings.Config
}

// RunOptions are the runtime's settings as RunInput.Options (a fresh map).
func (p *Plan) RunOptions() map[string]string {
	if c := p.RuntimeConfig(); c != nil {
		return c.Options()
	}
	return map[string]string{}
}

// RepoDir is the sandbox path of the agent's working directory.
func (p *Plan) RepoDir() string { return path.Join(runtime.WorkspaceDir, p.RepoName) }

// ResultPath is the sandbox path of the agent's result file.
func (p *Plan) ResultPath() string { return path.Join(OutputDir, ResultName) }

// PlanError is a planning failure naming the harness field.
type PlanError struct {
	Field string
	Err   error
}

func (e *PlanError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *PlanError) Unwrap() error { return e.Err }

// ErrHostFileMissing marks a required host file whose source is missing.
var ErrHostFileMissing = errors.New("required host file is missing")

// NewPlan computes the plan of a run of res (a resolved harness) under cfg.
func NewPlan(res *resolve.Result, cfg *config.Config, o Options) (*Plan, error) {
	if res == nil || res.Harness == nil {
		return nil, errors.New("run: no resolved harness")
	}
	if cfg == nil {
		cfg = config.Default()
	}
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	h := res.Harness
	p := &Plan{PlanRecord: PlanRecord{
		Source: res.Source, SHA256: string(res.SHA256), Forge: h.AppliedForge,
		RunsDir: o.runsDir(), Resume: o.Resume, ReadonlyRepo: h.ReadonlyRepo, AllowFetch: h.AllowRuntimeFetch,
	}, CacheDir: o.CacheDir, ResolveTime: o.ResolveTime, Harness: h, Config: cfg}
	if res.Graph != nil {
		p.GraphHash = GraphHash(res.Graph)
	}
	if err := p.planRuntime(res, cfg, o); err != nil {
		return nil, err
	}
	if err := p.planAgent(h); err != nil {
		return nil, err
	}
	if err := p.planSkillsAndPlugins(res); err != nil {
		return nil, err
	}
	p.planEnv(h, o)
	if err := p.setHostFiles(h, o); err != nil {
		return nil, err
	}
	p.planScripts(h)
	// Sandbox spec: policy, profiles, image, limits.
	if err := p.planSpec(h, cfg); err != nil {
		return nil, err
	}
	if err := p.narrowBySkillPolicies(res); err != nil {
		return nil, err
	}
	// The runtime's sandbox needs, host services, upstream run fields
	// (hostsvc.go).
	p.planAgentCLI(h, cfg)
	if err := p.planSecrets(h, cfg); err != nil {
		return nil, err
	}
	if err := p.planTarget(o); err != nil {
		return nil, err
	}
	if err := p.planRuntimeTarget(o); err != nil {
		return nil, err
	}
	p.planOrgAgentsMD(o)
	p.Trust = o.Trust.Describe(o.FullsendDir, harnessFile(res))
	p.planScan(h, cfg, o)
	p.planUpstream(res)
	p.Prompt = o.Prompt
	if p.Prompt == "" {
		p.Prompt = fmt.Sprintf("Run the %s agent on the repository in your working directory, following your agent definition. Write your result as JSON to %s.", p.AgentName, p.ResultPath())
	}
	return p, nil
}

// withDefaults fills in the runner's environment, working directory and
// workspace when the options leave them empty.
func (o Options) withDefaults() (Options, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return o, err
		}
		o.Cwd = wd
	}
	if o.Workspace == "" {
		o.Workspace = o.Cwd
	}
	return o, nil
}

// planRuntime picks the runtime (flag > harness > config > default) and
// lets it plan its settings (runtime.Planner) from its command-line
// settings and the harness; their parts are applied at the steps they
// concern (planEnv, planAgentCLI, planSecrets, planRuntimeTarget).
func (p *Plan) planRuntime(res *resolve.Result, cfg *config.Config, o Options) error {
	h := res.Harness
	switch {
	case o.Runtime != "":
		p.Runtime = o.Runtime
	case h.Runtime != "":
		p.Runtime = h.Runtime
	case cfg.Runtime != "":
		p.Runtime = cfg.Runtime
	default:
		p.Runtime = DefaultRuntime
	}
	backend := p.planBackend(cfg, o)
	p.planned = &runtime.PlanOutput{}
	rt, err := builtin.Get(p.Runtime)
	if err != nil {
		return nil // an unknown runtime fails at bootstrap (CheckRuntimeName refuses it earlier)
	}
	if _, ok := rt.(runtime.Resumer); o.Resume != "" && !ok {
		return &PlanError{Field: "runtime", Err: fmt.Errorf("--resume is only supported by the %s runtime (runtime is %q)", strings.Join(builtin.Resumable(), ", "), p.Runtime)}
	}
	pl, ok := rt.(runtime.Planner)
	if !ok {
		return nil
	}
	out, err := pl.Plan(runtime.PlanInput{Harness: h, HarnessFile: harnessFile(res), Org: cfg, Backend: backend,
		Flags: o.RuntimeFlags[p.Runtime], Resume: o.Resume != "", Getenv: o.Getenv})
	if err != nil {
		return err
	}
	p.planned = out
	p.setSettings(out.Config)
	if out.Model != "" {
		p.Model = out.Model
	}
	return nil
}

// setSettings sets the runtime's settings; settings without options are
// none (runtime_options is left out).
func (p *Plan) setSettings(c runtime.Config) {
	p.Settings = nil
	if c != nil && len(c.Options()) > 0 {
		p.Settings = &Settings{c}
	}
}

// planRuntimeTarget lets a runtime.TargetPlanner complete its settings
// once the target repository is known (the native runtime's images).
func (p *Plan) planRuntimeTarget(o Options) error {
	rt, err := builtin.Get(p.Runtime)
	if err != nil {
		return nil
	}
	tp, ok := rt.(runtime.TargetPlanner)
	if !ok || p.planned.Config == nil {
		return nil
	}
	if err := tp.PlanTarget(p.planned.Config, runtime.TargetInput{Repo: p.TargetRepo, Excluded: p.ExcludeFromRepo, Cwd: o.Cwd, Resume: o.Resume != ""}); err != nil {
		return err
	}
	p.setSettings(p.planned.Config)
	return nil
}

// planBackend picks the sandbox backend: flag > config > local.
func (p *Plan) planBackend(cfg *config.Config, o Options) string {
	p.Backend = o.Sandbox
	if p.Backend == "" {
		p.Backend = cfg.Sandbox.Backend
	}
	if p.Backend == "" {
		p.Backend = sandbox.DefaultBackend
	}
	return p.Backend
}

// planAgent sets the agent file, its name, the model and the sandbox
// hooks the harness turns off.
func (p *Plan) planAgent(h *harness.Materialized) error {
	if h.Agent == "" {
		return &PlanError{Field: "agent", Err: errors.New("the harness names no agent")}
	}
	p.AgentFile = h.Agent
	name, err := agentName(h.Agent)
	if err != nil {
		return &PlanError{Field: "agent", Err: err}
	}
	p.AgentName = name
	if p.Model == "" {
		p.Model = h.Model
	}
	for _, k := range slices.Sorted(maps.Keys(h.Security.SandboxHooks)) {
		if !h.Security.SandboxHooks[k] {
			p.DisabledHooks = append(p.DisabledHooks, k)
		}
	}
	p.TrustRepoSettings = h.Security.TrustRepoSettings != nil && *h.Security.TrustRepoSettings
	return nil
}

// planSkillsAndPlugins lists the skills (planSkills) and the plugins, each
// plugin named by its basename, once.
func (p *Plan) planSkillsAndPlugins(res *resolve.Result) error {
	var err error
	if p.Skills, err = planSkills(res); err != nil {
		return err
	}
	for i, pl := range res.Harness.Plugins {
		base := filepath.Base(pl)
		if err := runtime.CheckName("plugin", base); err != nil {
			return &PlanError{Field: fmt.Sprintf("plugins[%d]", i), Err: err}
		}
		for _, q := range p.Plugins {
			if q.Name == base {
				return &PlanError{Field: fmt.Sprintf("plugins[%d]", i), Err: fmt.Errorf("plugin %q listed twice", base)}
			}
		}
		p.Plugins = append(p.Plugins, SkillPlan{Name: base, HostDir: pl, Ref: pl})
	}
	return nil
}

// planEnv expands env.sandbox and env.runner from the runner's
// environment (unset variables: empty, with a note); the entries the
// runtime keeps out of the sandbox (the native runtime's model key) are
// dropped with a note.
func (p *Plan) planEnv(h *harness.Materialized, o Options) {
	var missing []string
	p.SandboxEnv, missing = expandMap(h.Env.Sandbox, o.Getenv)
	if len(missing) > 0 {
		p.downgrade("env.sandbox: unset on the runner (empty): " + strings.Join(missing, ", "))
	}
	if f := p.planned.SandboxEnv; f != nil {
		drop := f(p.SandboxEnv)
		for _, k := range slices.Sorted(maps.Keys(drop)) {
			delete(p.SandboxEnv, k)
			p.Notes = append(p.Notes, fmt.Sprintf("env.sandbox.%s: dropped: %s", k, drop[k]))
		}
	}
	p.RunnerEnv, missing = expandMap(h.Env.Runner, o.Getenv)
	if len(missing) > 0 {
		p.downgrade("env.runner: unset on the runner (empty): " + strings.Join(missing, ", "))
	}
}

// setHostFiles plans the host files, noting each one skipped.
func (p *Plan) setHostFiles(h *harness.Materialized, o Options) error {
	var err error
	if p.HostFiles, err = planHostFiles(h, o); err != nil {
		return err
	}
	for _, hf := range p.HostFiles {
		if hf.Skipped != "" {
			p.Notes = append(p.Notes, fmt.Sprintf("host_files[%d] (%s): skipped: %s", hf.Index, hf.Dest, hf.Skipped))
		}
	}
	return nil
}

// planScripts sets the host scripts, the validation settings and the
// time limits.
func (p *Plan) planScripts(h *harness.Materialized) {
	p.PreScript, p.PostScript = h.PreScript, h.PostScript
	p.MaxIterations = 1
	if vl := h.ValidationLoop; vl != nil {
		p.ValidationScript, p.Schema, p.FeedbackMode = vl.Script, vl.Schema, vl.FeedbackMode
		if vl.MaxIterations > 0 {
			p.MaxIterations = vl.MaxIterations
		}
	}
	p.WallTime, p.ScriptTimeout = DefaultWallTime, DefaultScriptTimeout
	if h.TimeoutMinutes > 0 {
		p.WallTime = time.Duration(h.TimeoutMinutes) * time.Minute
		p.ScriptTimeout = p.WallTime
	}
}

// harnessFile is the local file of a resolved harness ("" when remote).
func harnessFile(res *resolve.Result) string {
	if res.Remote || res.Loaded == nil {
		return ""
	}
	return res.Loaded.File
}

// planOrgAgentsMD finds the fullsend dir's AGENTS.md (the org default).
func (p *Plan) planOrgAgentsMD(o Options) {
	dir := o.FullsendDir
	if o.Trust.IsRepoLayer(dir) {
		dir = o.Trust.OrgDir // a repository layer's AGENTS.md is no org default
	}
	if dir == "" {
		return
	}
	f := filepath.Join(dir, "AGENTS.md")
	if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
		p.OrgAgentsMD = f
	}
}

// planScan sets the scan options and fail mode, with notes for what the
// harness asks that is not applied.
func (p *Plan) planScan(h *harness.Materialized, cfg *config.Config, o Options) {
	p.Scan = scan.OptionsFromConfig(cfg, &scan.Overrides{FailMode: h.Security.FailMode, ContextInjection: h.Security.ContextInjection})
	if o.CacheDir != "" {
		p.Scan.FindingsLog = scan.FindingsPath(o.CacheDir)
	}
	p.Scan.Getenv = o.Getenv
	p.FailMode = p.Scan.FailMode
	if p.FailMode == "" {
		p.FailMode = scan.FailClosed
	}
	if h.Security.HostScanners != nil && !*h.Security.HostScanners {
		p.Notes = append(p.Notes, "security.host_scanners: false ignored: host-side scans always run")
	}
	if len(h.Providers) > 0 {
		p.downgrade(fmt.Sprintf("providers: %d OpenShell provider file(s) not applied (credentials reach the sandbox through env.sandbox and host_files)", len(h.Providers)))
	}
}

// agentName is the agent's frontmatter name, else the file's basename
// without extension; it must pass runtime.CheckName.
func agentName(file string) (string, error) {
	name := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	if data, err := readBounded(file, maxContextFile); err == nil {
		if fm, err := frontmatter.Parse(file, data); err == nil && fm.Name != "" {
			name = fm.Name
		}
	} else {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	if err := runtime.CheckName("agent", name); err != nil {
		return "", err
	}
	return name, nil
}

// planSkills lists the skill directories the agent gets at the personal
// level: the harness's skills in order, then their transitive dependencies
// and the agent's referenced skills, in graph order. Overlay references not
// applied (fields "forge.NAME.…") are left out. Each skill is named by its
// SKILL.md frontmatter name (when it is a valid name), else its basename;
// a name taken by an earlier skill gets the parent directory's basename as
// prefix ("retro-analysis-github"), then a counter — never a silent
// overwrite.
func planSkills(res *resolve.Result) ([]SkillPlan, error) {
	type cand struct {
		dir, ref string
		remote   bool
	}
	var cands []cand
	seen := map[string]bool{}
	for _, s := range res.Harness.Skills {
		if seen[s] {
			continue
		}
		seen[s] = true
		cands = append(cands, cand{dir: s, ref: s})
	}
	if g := res.Graph; g != nil && g.Root != nil {
		visited := map[*resolve.Node]bool{g.Root: true}
		queue := []*resolve.Node{g.Root}
		for len(queue) > 0 {
			n := queue[0]
			queue = queue[1:]
			for _, e := range n.Edges {
				if n == g.Root && strings.HasPrefix(e.Field, "forge.") {
					continue
				}
				if visited[e.To] {
					continue
				}
				visited[e.To] = true
				queue = append(queue, e.To)
				to := e.To
				if to.Kind != "skill" || to.Type != "directory" {
					continue
				}
				if seen[to.LocalPath] {
					// Mark remote-ness of harness skills found in the graph.
					for i := range cands {
						if cands[i].dir == to.LocalPath {
							cands[i].remote, cands[i].ref = to.Remote, refOf(to)
						}
					}
					continue
				}
				seen[to.LocalPath] = true
				cands = append(cands, cand{dir: to.LocalPath, ref: refOf(to), remote: to.Remote})
			}
		}
	}
	var out []SkillPlan
	taken := map[string]bool{}
	for _, c := range cands {
		st, err := os.Stat(c.dir)
		if err != nil || !st.IsDir() {
			return nil, &PlanError{Field: fmt.Sprintf("skills (%s)", c.ref), Err: fmt.Errorf("skill directory %s: not found", c.dir)}
		}
		base := filepath.Base(c.dir)
		name := base
		if data, err := readBounded(filepath.Join(c.dir, "SKILL.md"), maxContextFile); err == nil {
			if fm, err := frontmatter.Parse(c.dir, data); err == nil && fm.Name != "" && runtime.CheckName("skill", fm.Name) == nil {
				name = fm.Name
			}
		}
		if runtime.CheckName("skill", name) != nil {
			return nil, &PlanError{Field: fmt.Sprintf("skills (%s)", c.ref), Err: runtime.CheckName("skill", name)}
		}
		if taken[name] {
			alt := filepath.Base(filepath.Dir(c.dir)) + "-" + base
			if runtime.CheckName("skill", alt) != nil || taken[alt] {
				alt = name
			}
			for n := 2; taken[alt]; n++ {
				alt = fmt.Sprintf("%s-%d", name, n)
			}
			name = alt
		}
		taken[name] = true
		out = append(out, SkillPlan{Name: name, HostDir: c.dir, Ref: c.ref, Remote: c.remote})
	}
	return out, nil
}

func refOf(n *resolve.Node) string {
	if n.Ref != "" {
		return n.Ref
	}
	return n.ID()
}

// planHostFiles expands ${VAR} in host_files src, resolves relative results
// against the working directory and checks existence: a missing optional
// file is skipped with a reason, a missing required one is an error naming
// the entry.
func planHostFiles(h *harness.Materialized, o Options) ([]HostFile, error) {
	var out []HostFile
	for i, spec := range h.HostFiles {
		field := fmt.Sprintf("host_files[%d]", i)
		hf := HostFile{Index: i, Written: spec.Src, Dest: spec.Dest, Expand: spec.Expand, Optional: spec.Optional}
		if err := sandbox.CheckPath(spec.Dest); err != nil {
			return nil, &PlanError{Field: field + ".dest", Err: err}
		}
		src, missing := expandVars(spec.Src, o.Getenv)
		if len(missing) > 0 {
			why := fmt.Sprintf("src %s: %s not set on the runner", spec.Src, strings.Join(missing, ", "))
			if spec.Optional {
				hf.Skipped = why
				out = append(out, hf)
				continue
			}
			return nil, &PlanError{Field: field, Err: fmt.Errorf("%w: %s", ErrHostFileMissing, why)}
		}
		if !filepath.IsAbs(src) {
			src = filepath.Join(o.Cwd, src)
		}
		st, err := os.Stat(src)
		if err != nil || !st.Mode().IsRegular() {
			why := fmt.Sprintf("src %s: no such regular file", src)
			if spec.Optional {
				hf.Skipped = why
				out = append(out, hf)
				continue
			}
			return nil, &PlanError{Field: field, Err: fmt.Errorf("%w: %s", ErrHostFileMissing, why)}
		}
		hf.Src = src
		out = append(out, hf)
	}
	return out, nil
}

func (p *Plan) planSpec(h *harness.Materialized, cfg *config.Config) error {
	var allow []string
	var pol policyFile
	if h.Policy != "" {
		if err := readYAML(h.Policy, &pol); err != nil {
			return &PlanError{Field: "policy", Err: fmt.Errorf("%s: %w", h.Policy, err)}
		}
		mounts, notes := mapFilesystem(&pol, p.Backend)
		p.Spec.Mounts = mounts
		p.Notes = append(p.Notes, notes...)
		names := make([]string, 0, len(pol.NetworkPolicies))
		for k := range pol.NetworkPolicies {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			e, err := allowEntries(fmt.Sprintf("%s: network_policies.%s", h.Policy, k), pol.NetworkPolicies[k].Endpoints)
			if err != nil {
				return &PlanError{Field: "policy", Err: err}
			}
			allow = append(allow, e...)
		}
	}
	for i, prof := range h.Openshell.Profiles {
		var pf profileFile
		field := fmt.Sprintf("openshell.profiles[%d]", i)
		if err := readYAML(prof, &pf); err != nil {
			return &PlanError{Field: field, Err: fmt.Errorf("%s: %w", prof, err)}
		}
		e, err := allowEntries(prof, pf.Endpoints)
		if err != nil {
			return &PlanError{Field: field, Err: err}
		}
		allow = append(allow, e...)
	}
	if len(allow) > 0 {
		p.downgrade("network: per-binary restrictions of policies and profiles are not enforced; every process may reach the allowed endpoints")
	}
	p.Spec.Network.Allow = sortedUnique(allow)
	p.Limits = cfg.Sandbox.Limits.Lower(h.Resources)
	p.Spec.Limits = p.Limits
	p.Spec.Limits.WallTime = p.WallTime
	p.Spec.Image = h.Image
	if p.Spec.Image == "" {
		// The configured image of the backend that runs this plan.
		switch p.Backend {
		case sandbox.BackendKubernetes:
			p.Spec.Image = cfg.Sandbox.Kubernetes.Image
		default:
			p.Spec.Image = cfg.Sandbox.Docker.Image
		}
	}
	p.Spec.WorkDir = runtime.WorkspaceDir
	p.Spec.Labels = map[string]string{"fullsend.agent": p.AgentName}
	if h.Role != "" {
		p.Spec.Labels["fullsend.role"] = h.Role
	}
	if h.Slug != "" {
		p.Spec.Labels["fullsend.slug"] = h.Slug
	}
	return nil
}

// ErrNoTargetRepo is returned by NewPlan when no --target-repo was given
// and the working directory is not inside a git repository: the agent would
// silently get an empty directory.
var ErrNoTargetRepo = errors.New("no target repository")

func (p *Plan) planTarget(o Options) error {
	repo := o.TargetRepo
	if repo == "none" {
		repo = ""
	} else if repo == "" {
		var err error
		if repo, err = trust.FindGitRoot(o.Cwd); err != nil {
			return &PlanError{Field: "--target-repo", Err: err}
		}
		if repo == "" {
			return &PlanError{Field: "--target-repo", Err: fmt.Errorf("%w: %s is not inside a git repository; give --target-repo DIR (the repository the agent works on) or --target-repo none (an empty working directory)", ErrNoTargetRepo, o.Cwd)}
		}
	} else {
		abs, err := filepath.Abs(repo)
		if err != nil {
			return err
		}
		st, err := os.Stat(abs)
		if err != nil || !st.IsDir() {
			return &PlanError{Field: "--target-repo", Err: fmt.Errorf("%s: not a directory", abs)}
		}
		repo = abs
	}
	p.TargetRepo = repo
	p.RepoName = EmptyRepoName
	if repo == "" {
		p.Notes = append(p.Notes, "target repository: none (the agent works in an empty directory "+p.RepoDir()+")")
		return nil
	}
	base := filepath.Base(repo)
	if runtime.CheckName("repository", base) == nil && base != ".claude" && base != ".env.d" {
		p.RepoName = base
	} else {
		p.Notes = append(p.Notes, fmt.Sprintf("target repository %s: copied as %q (its name is not usable as a directory name)", repo, EmptyRepoName))
	}
	for _, ex := range []string{p.RunsDir, o.CacheDir} {
		if ex != "" && within(ex, repo) {
			p.ExcludeFromRepo = append(p.ExcludeFromRepo, ex)
		}
	}
	return nil
}

// FindGitRoot returns the nearest directory at or above dir that holds
// .git, or "": the default target repository of a run started in dir.
// It follows trust.FindGitRoot (a .git another user owns is not used;
// home and filesystem boundaries stop the search).
func FindGitRoot(dir string) string {
	r, _ := trust.FindGitRoot(dir)
	return r
}

func within(p, dir string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && r != "." && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

// GraphHash identifies a resolved graph: the sha256 of the sorted lines
// "<kind> <id> <sha256>\n", one per node including the root, where id is
// the node's URL (remote) or local path. Two resolutions with the same
// resources at the same hashes have the same graph hash.
func GraphHash(g *resolve.Graph) string {
	var lines []string
	add := func(n *resolve.Node) {
		lines = append(lines, fmt.Sprintf("%s %s %s\n", n.Kind, n.ID(), n.SHA256))
	}
	if g.Root != nil {
		add(g.Root)
	}
	for _, n := range g.Nodes {
		add(n)
	}
	sort.Strings(lines)
	h := sha256.New()
	for _, l := range lines {
		h.Write([]byte(l))
	}
	return hex.EncodeToString(h.Sum(nil))
}
