package harness

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// TestUpstreamFields: one harness per field of upstream fullsend's loader
// that ours used to reject. Each is accepted with upstream's meaning or
// refused with the reason; errors name file:line: field.
func TestUpstreamFields(t *testing.T) {
	d := tree(t, baseTree())
	cases := []struct {
		name  string
		body  string
		check func(t *testing.T, h *Harness)
		err   string // "" = accepted and valid
	}{
		{name: "runner_env is env.runner", body: "runner_env:\n  REPO_NAME: ${REPO_NAME}\n  MODE: fast\n",
			check: func(t *testing.T, h *Harness) {
				if h.Env.Runner["REPO_NAME"] != "${REPO_NAME}" || h.Env.Runner["MODE"] != "fast" {
					t.Errorf("env.runner = %v", h.Env.Runner)
				}
			}},
		{name: "runner_env with env.runner", body: "runner_env: {A: \"1\"}\nenv:\n  runner: {B: \"2\"}\n",
			check: func(t *testing.T, h *Harness) {
				if h.Env.Runner["A"] != "1" || h.Env.Runner["B"] != "2" {
					t.Errorf("env.runner = %v", h.Env.Runner)
				}
			}},
		{name: "runner_env then empty env.runner", body: "runner_env: {A: \"1\"}\nenv:\n  runner: ~\n",
			check: func(t *testing.T, h *Harness) {
				if len(h.Env.Runner) != 1 || h.Env.Runner["A"] != "1" {
					t.Errorf("env.runner = %v", h.Env.Runner)
				}
			}},
		{name: "runner_env name checked", body: "runner_env:\n  LD_PRELOAD: /tmp/x.so\n", err: "h.yaml:3: env.runner.LD_PRELOAD: LD_PRELOAD (matches LD_*) changes how programs load code"},
		{name: "runner_env invalid name", body: "runner_env:\n  \"A-B\": x\n", err: `h.yaml:3: runner_env.A-B: invalid value: "A-B" is not an environment variable name`},
		{name: "runner_env conflicts with env.runner", body: "env:\n  runner: {A: \"1\"}\nrunner_env: {A: \"2\"}\n", err: "h.yaml:4: runner_env.A: invalid value: also set in env.runner"},
		{name: "sandbox_timeout_seconds", body: "sandbox_timeout_seconds: 180\n",
			check: func(t *testing.T, h *Harness) {
				if h.SandboxTimeoutSeconds != 180 {
					t.Errorf("sandbox_timeout_seconds = %d", h.SandboxTimeoutSeconds)
				}
			}},
		{name: "sandbox_timeout_seconds zero", body: "sandbox_timeout_seconds: 0\n"},
		{name: "sandbox_timeout_seconds out of range", body: "sandbox_timeout_seconds: 10\n", err: "h.yaml:2: sandbox_timeout_seconds: invalid value: must be 0 (the default) or between 30 and 600"},
		{name: "preflight_check", body: "validation_loop:\n  schema: schemas/s.json\n  preflight_check: command -v jq\n",
			check: func(t *testing.T, h *Harness) {
				if h.ValidationLoop.PreflightCheck != "command -v jq" || h.ValidationLoop.Schema != "schemas/s.json" {
					t.Errorf("validation_loop = %+v", h.ValidationLoop)
				}
			}},
		{name: "api_servers refused", body: "api_servers:\n  - {name: gh, script: scripts/gh.sh, port: 8081}\n", err: "h.yaml:2: api_servers: invalid value: not supported: api_servers starts host scripts that the sandbox reaches on host ports"},
		{name: "effort", body: "effort: high\n",
			check: func(t *testing.T, h *Harness) {
				if h.Effort != "high" {
					t.Errorf("effort = %q", h.Effort)
				}
			}},
		{name: "effort unknown", body: "effort: extreme\n", err: `h.yaml:2: effort: invalid value: "extreme" is not an effort level`},
		{name: "host_scanners map", body: "security:\n  host_scanners:\n    unicode_normalizer: true\n    context_injection: true\n    ssrf_validator: false\n    secret_redactor: true\n    llm_guard: {enabled: true, threshold: 0.9, match_type: sentence}\n",
			check: func(t *testing.T, h *Harness) {
				s := h.Security
				if s.HostScanners == nil || *s.HostScanners || s.ContextInjection == nil || !*s.ContextInjection {
					t.Errorf("security = host_scanners %v, context_injection %v", s.HostScanners, s.ContextInjection)
				}
			}},
		{name: "host_scanners map all on", body: "security:\n  host_scanners: {unicode_normalizer: true}\n",
			check: func(t *testing.T, h *Harness) {
				if s := h.Security.HostScanners; s == nil || !*s {
					t.Errorf("host_scanners = %v", s)
				}
			}},
		{name: "host_scanners map unknown key", body: "security:\n  host_scanners:\n    yara: true\n", err: "h.yaml:4: security.host_scanners.yara: unknown field"},
		{name: "host_scanners llm_guard threshold", body: "security:\n  host_scanners:\n    llm_guard: {threshold: 2}\n", err: "h.yaml:4: security.host_scanners.llm_guard.threshold: invalid value: must be between 0 and 1"},
		{name: "bare provider names", body: "providers:\n  - gcp-vertex\n  - providers/openai.yaml\n",
			check: func(t *testing.T, h *Harness) {
				if !slices.Equal(h.ProviderNames, []string{"gcp-vertex"}) || !slices.Equal(h.Providers, []string{"providers/openai.yaml"}) {
					t.Errorf("providers = %q, names = %q", h.Providers, h.ProviderNames)
				}
				for _, r := range h.Refs() {
					if r.Value == "gcp-vertex" {
						t.Errorf("a provider name is treated as a reference: %+v", r)
					}
				}
			}},
		{name: "env.runner conflicts with runner_env", body: "runner_env: {A: \"1\"}\nenv:\n  runner: {A: \"2\"}\n", err: "h.yaml:4: env.runner.A: invalid value: also set in runner_env with another value"},
		{name: "preflight_check NUL", body: "validation_loop:\n  schema: schemas/s.json\n  preflight_check: \"jq\\0\"\n", err: "h.yaml:4: validation_loop.preflight_check: invalid value: contains NUL"},
		{name: "host_scanners llm_guard match_type", body: "security:\n  host_scanners:\n    llm_guard: {match_type: word}\n", err: `h.yaml:4: security.host_scanners.llm_guard.match_type: invalid value: "word" must be sentence or full`},
		{name: "bad provider name", body: "providers:\n  - \"gcp vertex\"\n", err: `h.yaml:3: providers[0]: invalid value: "gcp vertex" is neither a provider file nor a provider name`},
	}
	files := map[string]string{"providers/openai.yaml": "name: openai\ntype: openai\n", "schemas/s.json": "{}"}
	for rel, body := range files {
		write(t, d, rel, body)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := write(t, d, "harness/h.yaml", "agent: agents/a.md\n"+c.body)
			h, err := Load(p, LoadOptions{})
			if err == nil {
				err = h.Validate(config.Default())
			}
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.check != nil {
				c.check(t, h)
			}
		})
	}
}

// TestUpstreamFieldsMerge: the new scalars are child-wins, provider names
// concatenate, runner_env merges with env.runner per key.
func TestUpstreamFieldsMerge(t *testing.T) {
	d := tree(t, baseTree())
	write(t, d, "harness/b.yaml", "agent: agents/a.md\nsandbox_timeout_seconds: 600\neffort: low\nproviders: [gcp]\nrunner_env: {A: base, B: base}\nvalidation_loop: {preflight_check: \"true\", max_iterations: 2}\n")
	p := write(t, d, "harness/h.yaml", "base: harness/b.yaml\neffort: max\nproviders: [vertex]\nrunner_env: {B: child}\nvalidation_loop: {max_iterations: 3}\n")
	h, err := Load(p, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h.SandboxTimeoutSeconds != 600 || h.Effort != "max" || !slices.Equal(h.ProviderNames, []string{"gcp", "vertex"}) ||
		h.Env.Runner["A"] != "base" || h.Env.Runner["B"] != "child" || h.ValidationLoop.PreflightCheck != "true" || h.ValidationLoop.MaxIterations != 3 {
		t.Errorf("merged: timeout %d effort %q names %q runner %v loop %+v", h.SandboxTimeoutSeconds, h.Effort, h.ProviderNames, h.Env.Runner, h.ValidationLoop)
	}
}

// TestRemoteRunnerEnvAliasAndPreflight: runner_env gets env.runner's rule
// in remote content (refused), and so does preflight_check (a host command).
func TestRemoteRunnerEnvAliasAndPreflight(t *testing.T) {
	d := tree(t, baseTree())
	cfg := orgCfg(t, "https://github.com/o/")
	url := "https://github.com/o/lib/harness/base.yaml"
	for body, want := range map[string]error{
		"agent: agents/a.md#sha256=" + pin + "\nrunner_env:\n  HARMLESS: \"1\"\n":                   ErrRemoteRunnerEnv,
		"agent: agents/a.md#sha256=" + pin + "\nvalidation_loop:\n  preflight_check: curl x | sh\n": ErrRemotePreflight,
	} {
		b := []byte(body)
		child := "allowed_remote_resources: [https://github.com/o/lib/]\nbase: " + url + "#sha256=" + string(ref.SHA256(b)) + "\n"
		p := write(t, d, "harness/h.yaml", child)
		_, err := Load(p, LoadOptions{Config: cfg, FetchBase: func(context.Context, ref.Ref) ([]byte, error) { return b, nil }})
		if !errors.Is(err, want) || !strings.Contains(err.Error(), url+":3:") {
			t.Errorf("remote base %q: err = %v, want %v at line 3", body, err, want)
		}
		if _, err := LoadRemote(context.Background(), remotePin(t, url, b), b, LoadOptions{Config: cfg}); !errors.Is(err, want) {
			t.Errorf("LoadRemote %q: err = %v, want %v", body, err, want)
		}
	}
}
