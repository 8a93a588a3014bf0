package claude

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/runtime"
)

// The claude runtime's part of the runner's contract: its typed settings,
// flags and planning.
var (
	_ runtime.FlagOwner = (*Runtime)(nil)
	_ runtime.Planner   = (*Runtime)(nil)
	_ runtime.Config    = (*Config)(nil)
)

// KeyNames are the claude runtime's credential variables: an org secret
// (config.yaml secrets) of one of these names is the run's by default.
var KeyNames = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"}

// Config is the claude runtime's settings of one run (RunInput.Options
// in its encoding, Options). Empty fields are Claude Code's defaults.
type Config struct {
	Binary, Node   string // the CLI in the sandbox (OptBinary, OptNode)
	MaxTurns       int    // --max-turns (0 = none)
	PermissionMode string // --permission-mode
	Effort         string // --effort
	Debug          string // "true" | "false" | "" (default: on)
}

// Options implements runtime.Config.
func (c *Config) Options() map[string]string {
	o := map[string]string{}
	for k, v := range map[string]string{OptBinary: c.Binary, OptNode: c.Node, OptPermissionMode: c.PermissionMode, OptEffort: c.Effort, OptDebug: c.Debug} {
		if v != "" {
			o[k] = v
		}
	}
	if c.MaxTurns > 0 {
		o[OptMaxTurns] = strconv.Itoa(c.MaxTurns)
	}
	return o
}

// flagConfig is the command-line settings: the Config given, the CLI
// binary and the model of --model.
type flagConfig struct {
	Config
	binary, model string
}

// flags are the claude runtime's command-line flags; each wins over
// config.yaml runtimes.claude. --model and --max-turns are shared with the
// native runtime (runtime.AddSharedFlags).
type flags struct {
	binary, permissionMode, effort string
	debug                          bool
}

// NewFlags implements runtime.FlagOwner.
func (r *Runtime) NewFlags() runtime.Flags { return &flags{} }

func (c *flags) Add(fl *pflag.FlagSet) {
	fl.StringVar(&c.binary, "claude-binary", "", "claude runtime: the Claude Code CLI on this host, a `PATH` or a command on $PATH, bound into the sandbox (default: config runtimes.claude.binary, claude)")
	fl.StringVar(&c.permissionMode, "permission-mode", "", "claude runtime: --permission-mode `MODE` of Claude Code (default: config runtimes.claude.permission_mode, bypassPermissions; the security hooks apply in every mode)")
	fl.StringVar(&c.effort, "effort", "", "claude runtime: reasoning effort `LEVEL`: "+strings.Join(config.ClaudeEffortLevels, ", ")+" (default: harness effort:, config runtimes.claude.effort)")
	fl.BoolVar(&c.debug, "claude-debug", true, "claude runtime: write Claude Code's debug log into the run directory (default: config runtimes.claude.debug, true)")
	runtime.AddSharedFlags(fl)
}

// Parse checks the claude flags given. The names it returns are the
// claude-only flags first, then the shared ones set.
func (c *flags) Parse(fl *pflag.FlagSet) (runtime.Config, []string, error) {
	fc := &flagConfig{}
	var given []string
	if fl.Changed("claude-binary") {
		given = append(given, "--claude-binary")
		if err := config.CheckClaudeBinary(c.binary); err != nil {
			return nil, nil, fmt.Errorf("--claude-binary: %w", err)
		}
		fc.binary = c.binary
	}
	if fl.Changed("permission-mode") {
		given = append(given, "--permission-mode")
		if err := config.CheckPermissionMode(c.permissionMode); err != nil {
			return nil, nil, fmt.Errorf("--permission-mode: %w", err)
		}
		fc.PermissionMode = c.permissionMode
	}
	if fl.Changed("effort") {
		given = append(given, "--effort")
		if err := config.CheckEffort(c.effort); err != nil {
			return nil, nil, fmt.Errorf("--effort: %w", err)
		}
		fc.Effort = c.effort
	}
	if fl.Changed("claude-debug") {
		given = append(given, "--claude-debug")
		fc.Debug = strconv.FormatBool(c.debug)
	}
	m, set, err := runtime.SharedModel(fl)
	if err != nil {
		return nil, nil, err
	}
	if set {
		given = append(given, "--"+runtime.FlagModel)
		fc.model = m
	}
	n, set, err := runtime.SharedMaxTurns(fl)
	if err != nil {
		return nil, nil, err
	}
	if set {
		given = append(given, "--"+runtime.FlagMaxTurns)
		fc.MaxTurns = n
	}
	return fc, given, nil
}

// Options implements runtime.Config for the command-line settings.
func (fc *flagConfig) Options() map[string]string { return fc.Config.Options() }

// FlagSettings are the claude runtime's command-line settings for callers
// without a command line (tests): the options given (OptMaxTurns,
// OptPermissionMode, OptEffort, OptDebug), the CLI binary and the model.
func FlagSettings(c Config, binary, model string) runtime.Config {
	return &flagConfig{Config: c, binary: binary, model: model}
}

// Plan implements runtime.Planner: the settings (flags > harness effort >
// config.yaml runtimes.claude), the CLI the local backend binds into the
// sandbox (the docker and kubernetes backends run the image's), and the
// model endpoint of the runner's own configuration when it is on
// loopback (a host service of the run). A CLI that cannot be found is
// reported as Unavailable, not returned.
func (r *Runtime) Plan(in runtime.PlanInput) (*runtime.PlanOutput, error) {
	cc := in.Org.Runtimes.Claude
	fc, _ := in.Flags.(*flagConfig)
	if fc == nil {
		fc = &flagConfig{}
	}
	c := fc.Config
	out := &runtime.PlanOutput{Config: &c, Model: fc.model, KeySecrets: KeyNames}
	if in.Harness.Effort != "" && c.Effort == "" {
		c.Effort = in.Harness.Effort
	}
	if c.MaxTurns == 0 && cc.MaxTurns > 0 {
		c.MaxTurns = cc.MaxTurns
	}
	if c.PermissionMode == "" {
		c.PermissionMode = cc.PermissionMode
	}
	if c.Effort == "" {
		c.Effort = cc.Effort
	}
	if c.Debug == "" && cc.Debug != nil {
		c.Debug = strconv.FormatBool(*cc.Debug)
	}
	r.planCLI(in, fc.binary, out, &c)
	// The runner's own model configuration names the endpoint the agent
	// CLI talks to; a loopback one is a host service of the run.
	for _, v := range []string{model.EnvBaseURL, "ANTHROPIC_BASE_URL"} {
		if ep := loopbackEndpoint(in.Getenv(v)); ep != "" {
			out.HostServices = append(out.HostServices, runtime.HostService{Addr: ep, From: "runner " + v})
		}
	}
	return out, nil
}

// planCLI locates the CLI the local backend binds into the sandbox.
func (r *Runtime) planCLI(in runtime.PlanInput, binary string, out *runtime.PlanOutput, c *Config) {
	from := "--claude-binary"
	if binary == "" && in.Org.Runtimes.Claude.Binary != "" {
		binary, from = in.Org.Runtimes.Claude.Binary, "config.yaml runtimes.claude.binary"
	}
	if in.Backend != "local" {
		out.Notes = append(out.Notes, fmt.Sprintf("claude: the %s backend runs the Claude Code CLI installed in the sandbox image (claude on its PATH); the runner's CLI is not used", in.Backend))
		return
	}
	inst, err := Locate(binary, in.Getenv)
	if err != nil {
		if binary == "" {
			from = "runtime claude"
		}
		out.Unavailable = &runtime.PlanError{Field: from, Err: err}
		return
	}
	out.Install = inst
	if inst.Note != "" {
		out.Notes = append(out.Notes, "claude: "+inst.Note)
	}
	out.Mounts = append(out.Mounts, inst.Mounts...)
	if c.Binary == "" {
		c.Binary = inst.Binary
	}
	if c.Node == "" {
		c.Node = inst.NodeBinary
	}
}

// loopbackEndpoint is the "IP:PORT" of an http(s) URL on a loopback host
// ("" otherwise); localhost is 127.0.0.1.
func loopbackEndpoint(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	ep, err := config.HostService(net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return ""
	}
	return ep
}
