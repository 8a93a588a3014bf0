package run_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/run"
)

// TestPlanSecrets: which org secrets a run gets (the harness's names,
// declared providers: names, the claude runtime's model key), the
// env.sandbox entries they replace and the warned key in env.sandbox.
func TestPlanSecrets(t *testing.T) {
	f := newFixture(t)
	f.cfg.Secrets = []config.Secret{
		{Name: "GH_TOKEN", FromEnv: "GH_TOKEN", Hosts: []string{"api.github.com"}},
		{Name: "ANTHROPIC_API_KEY", FromEnv: "ANTHROPIC_API_KEY", Hosts: []string{"api.anthropic.com"}},
		{Name: "vertex", FromEnv: "VERTEX", Hosts: []string{"aiplatform.googleapis.com"}},
	}
	p := f.mustPlan("agent: agents/tester.md\nsecrets: [GH_TOKEN]\nproviders: [vertex, other]\nenv:\n  sandbox:\n    GH_TOKEN: literal\n    KEEP: x\n", run.Options{})
	if strings.Join(p.Secrets, ",") != "GH_TOKEN,vertex" {
		t.Errorf("script runtime: secrets %q", p.Secrets)
	}
	if _, ok := p.SandboxEnv["GH_TOKEN"]; ok || p.SandboxEnv["KEEP"] != "x" {
		t.Errorf("env.sandbox %v", p.SandboxEnv)
	}
	if !noteContains(p.Notes, "env.sandbox.GH_TOKEN: dropped") || !noteContains(p.Notes, "providers: vertex is the org secret") {
		t.Errorf("notes %q", p.Notes)
	}

	// The claude runtime takes the declared model key by default.
	p = f.mustPlan("agent: agents/tester.md\n", run.Options{Runtime: "claude"})
	if strings.Join(p.Secrets, ",") != "ANTHROPIC_API_KEY" {
		t.Errorf("claude runtime: secrets %q", p.Secrets)
	}
	// A model key left in env.sandbox (not declared) is warned about.
	f.cfg.Secrets = f.cfg.Secrets[:1]
	p = f.mustPlan("agent: agents/tester.md\nenv:\n  sandbox:\n    ANTHROPIC_API_KEY: sk-ant-x\n", run.Options{Runtime: "claude"})
	if len(p.Secrets) != 0 || len(p.Downgrades) != 1 || !strings.Contains(p.Downgrades[0], "env.sandbox.ANTHROPIC_API_KEY: the model key enters the sandbox") {
		t.Errorf("secrets %q, downgrades %q", p.Secrets, p.Downgrades)
	}

	// An undeclared name never plans.
	_, err := f.plan("agent: agents/tester.md\nsecrets: [NPM_TOKEN]\n", run.Options{})
	if !errors.Is(err, config.ErrSecretNotDeclared) {
		t.Errorf("undeclared: %v", err)
	}
}
