package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/hostsvc"
	"github.com/fullsend-ai/fullsend/internal/runtime"
)

// This file holds what the run does for the sandbox's host services (the
// runner-host endpoints it reaches at the same address), the runtime's
// part of the plan that concerns them, and the harness fields of upstream
// fullsend that concern the run (sandbox_timeout_seconds,
// validation_loop.preflight_check).

// HostService is one host endpoint reachable from the sandbox at the same
// address, and the setting that granted it.
type HostService = runtime.HostService

// ErrTimeout marks a run stopped by its wall time (timeout_minutes).
var ErrTimeout = errors.New("timeout")

// PreflightLog is the log of validation_loop.preflight_check.
const PreflightLog = "preflight_check.log"

// planAgentCLI applies the runtime's part of the plan that concerns the
// sandbox (its notes, mounts, host install and host services, and
// whether it can run here), the host services of the run, and the
// upstream run fields. It runs after planSpec (it adds mounts and
// services to the spec).
func (p *Plan) planAgentCLI(h *harness.Materialized, cfg *config.Config) {
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
	rp := p.planned
	p.Notes = append(p.Notes, rp.Notes...)
	for _, d := range rp.Downgrades {
		p.downgrade(d)
	}
	p.runtimeErr = rp.Unavailable
	p.Install = rp.Install
	p.Spec.Mounts = append(p.Spec.Mounts, rp.Mounts...)
	for _, s := range rp.HostServices {
		add(s.Addr, s.From)
	}
	for _, s := range p.HostServices {
		if !slices.Contains(p.Spec.Network.Services, s.Addr) {
			p.Spec.Network.Services = append(p.Spec.Network.Services, s.Addr)
		}
	}
}

// CheckRuntime reports a runtime that cannot run before anything is
// provisioned (the claude runtime's CLI not found on the runner).
func (p *Plan) CheckRuntime() error { return p.runtimeErr }

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
