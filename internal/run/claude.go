package run

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/hostsvc"
	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/runtime/claude"
)

// This file holds what the run does for agent CLIs inside the sandbox
// (the claude runtime): where the CLI comes from, the host services the
// sandbox may reach, the runtime's options, the agent's security verdicts
// as findings, and the harness fields of upstream fullsend that concern
// the run (sandbox_timeout_seconds, validation_loop.preflight_check).

// HostService is one host endpoint reachable from the sandbox at the same
// address, and the setting that granted it.
type HostService struct {
	Addr string `json:"addr"` // "IP:PORT" on the runner's loopback
	From string `json:"from"`
}

// ErrTimeout marks a run stopped by its wall time (timeout_minutes).
var ErrTimeout = errors.New("timeout")

// PreflightLog is the log of validation_loop.preflight_check.
const PreflightLog = "preflight_check.log"

// planAgentCLI fills in the claude runtime's CLI, options and model
// endpoint, the host services of the run, and the upstream run fields.
// It runs after planSpec (it adds mounts and services to the spec).
func (p *Plan) planAgentCLI(h *harness.Harness, cfg *config.Config, o Options) error {
	if h.SandboxTimeoutSeconds > 0 {
		p.ProvisionTimeout = time.Duration(h.SandboxTimeoutSeconds) * time.Second
	}
	if vl := h.ValidationLoop; vl != nil {
		p.PreflightCheck = vl.PreflightCheck
	}
	if len(h.ProviderNames) > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("providers: OpenShell provider name(s) %s not applied (credentials reach the sandbox through env.sandbox and host_files)", strings.Join(h.ProviderNames, ", ")))
	}
	add := func(addr, from string) {
		for _, s := range p.HostServices {
			if s.Addr == addr {
				return
			}
		}
		p.HostServices = append(p.HostServices, HostService{Addr: addr, From: from})
	}
	for _, s := range cfg.Sandbox.HostServices {
		add(s, "config.yaml sandbox.host_services")
	}
	if h.Effort != "" && p.Runtime != claude.Name {
		p.Notes = append(p.Notes, fmt.Sprintf("effort: %s ignored: only the claude runtime has a reasoning effort setting", h.Effort))
	}
	if p.Runtime == claude.Name {
		if err := p.planClaude(h, cfg, o); err != nil {
			return err
		}
		// The runner's own model configuration names the endpoint the
		// agent CLI talks to; a loopback one is a host service of the run.
		for _, v := range []string{model.EnvBaseURL, "ANTHROPIC_BASE_URL"} {
			if ep := loopbackEndpoint(o.Getenv(v)); ep != "" {
				add(ep, "runner "+v)
			}
		}
	}
	for _, s := range p.HostServices {
		if !slices.Contains(p.Spec.Network.Services, s.Addr) {
			p.Spec.Network.Services = append(p.Spec.Network.Services, s.Addr)
		}
	}
	return nil
}

// planClaude merges the claude runtime's options (flags > harness effort >
// config.yaml runtimes.claude) and locates the CLI: the local backend
// binds the runner's CLI into the sandbox, the docker backend runs the
// image's. A CLI that cannot be found is recorded, not returned: NewPlan
// stays side-effect free and testable, and the run fails on it before
// anything is provisioned (CheckRuntime).
func (p *Plan) planClaude(h *harness.Harness, cfg *config.Config, o Options) error {
	c := cfg.Runtimes.Claude
	p.RunOptions = maps.Clone(o.ClaudeOptions)
	if p.RunOptions == nil {
		p.RunOptions = map[string]string{}
	}
	if o.Model != "" {
		p.Model = o.Model
	}
	set := func(k, v string) {
		if _, given := p.RunOptions[k]; !given && v != "" {
			p.RunOptions[k] = v
		}
	}
	set(claude.OptEffort, h.Effort)
	if c.MaxTurns > 0 {
		set(claude.OptMaxTurns, strconv.Itoa(c.MaxTurns))
	}
	set(claude.OptPermissionMode, c.PermissionMode)
	set(claude.OptEffort, c.Effort)
	if c.Debug != nil {
		set(claude.OptDebug, strconv.FormatBool(*c.Debug))
	}
	binary, from := o.ClaudeBinary, "--claude-binary"
	if binary == "" && c.Binary != "" {
		binary, from = c.Binary, "config.yaml runtimes.claude.binary"
	}
	if p.Backend != "local" {
		p.Notes = append(p.Notes, fmt.Sprintf("claude: the %s backend runs the Claude Code CLI installed in the sandbox image (claude on its PATH); the runner's CLI is not used", p.Backend))
		return nil
	}
	inst, err := claude.Locate(binary, o.Getenv)
	if err != nil {
		if binary == "" {
			from = "runtime claude"
		}
		p.runtimeErr = &PlanError{Field: from, Err: err}
		return nil
	}
	p.Claude = inst
	if inst.Note != "" {
		p.Notes = append(p.Notes, "claude: "+inst.Note)
	}
	p.Spec.Mounts = append(p.Spec.Mounts, inst.Mounts...)
	for k, v := range inst.Options() {
		set(k, v)
	}
	return nil
}

// CheckRuntime reports a runtime that cannot run before anything is
// provisioned (the claude runtime's CLI not found on the runner).
func (p *Plan) CheckRuntime() error { return p.runtimeErr }

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

// hostServiceAddrs lists the addresses of the run's host services.
func (p *Plan) hostServiceAddrs() []string {
	out := make([]string, 0, len(p.HostServices))
	for _, s := range p.HostServices {
		out = append(out, s.Addr)
	}
	return out
}

// startHostServices runs the in-sandbox forwarder of the host services
// (package hostsvc); stopped at teardown.
func (x *execution) startHostServices(ctx context.Context) error {
	stop, err := hostsvc.Start(ctx, x.sess, x.plan.hostServiceAddrs())
	if err != nil {
		return err
	}
	x.stopHostServices = stop
	var parts []string
	for _, s := range x.plan.HostServices {
		parts = append(parts, s.Addr+" ("+s.From+")")
	}
	// Recorded in the report, not printed: a configured service is no news.
	x.report.Notes = append(x.report.Notes, "host services reachable from the sandbox at the same address: "+strings.Join(parts, ", "))
	return nil
}

// runPreflight runs validation_loop.preflight_check on the runner host
// (`sh -c`, like a host script: the runner's environment plus env.runner,
// a fresh empty working directory) before anything is provisioned.
func (x *execution) runPreflight(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "fullsend-preflight-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "preflight_check.sh")
	if err := os.WriteFile(script, []byte(x.plan.PreflightCheck+"\n"), 0o700); err != nil {
		return err
	}
	err = runHostScript(ctx, "validation_loop.preflight_check", script, filepath.Join(x.dir, PreflightLog), x.scriptEnv(nil), x.plan.ScriptTimeout)
	var se *ScriptError
	if errors.As(err, &se) {
		se.Script = strconv.Quote(x.plan.PreflightCheck)
	}
	return err
}

// timeoutError is the one line of a run stopped by its wall time.
func (p *Plan) timeoutError() error {
	return fmt.Errorf("%w: the agent did not finish within timeout_minutes (%s)", ErrTimeout, p.WallTime)
}
