package run_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/run"
)

// TestSecurityDisabled: security.enabled: false (the org allowing it)
// turns the context scans advisory and every sandbox hook off, and says
// so; without the org's consent the plan is refused.
func TestSecurityDisabled(t *testing.T) {
	h := baseHarness + "security:\n  enabled: false\n"
	f := newFixture(t)
	f.newRepo(map[string]string{"AGENTS.md": maliciousAgentsMD})
	if _, err := f.plan(h, run.Options{}); !errors.Is(err, harness.ErrSecurityDisabled) || !strings.Contains(err.Error(), "harness.yaml:11: security.enabled: false is refused") {
		t.Fatalf("without security.allow_disable: %v", err)
	}
	f.cfg.Security.AllowDisable = true
	p := f.mustPlan(h, run.Options{})
	if !p.SecurityDisabled || !slices.Equal(p.DisabledHooks, harness.KnownSandboxHooks) {
		t.Errorf("plan: disabled %v hooks %v", p.SecurityDisabled, p.DisabledHooks)
	}
	var warn bytes.Buffer
	rep, _, err := f.execute(p, run.ExecOptions{Warn: &warn})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if !findingAt(rep, "host_scan", "AGENTS.md", false) {
		t.Errorf("finding not recorded as advisory: %+v", rep.Findings)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "security.enabled: false") || !strings.Contains(warn.String(), "security.enabled: false") {
		t.Errorf("security off not named: notes %q warn %q", rep.Notes, warn.String())
	}
}

// TestEscalationReview: on_critical: review lets the run complete with
// status review, exit code 1 and the label in the report; halt (the
// default) blocks as before.
func TestEscalationReview(t *testing.T) {
	f := newFixture(t)
	f.newRepo(map[string]string{"AGENTS.md": maliciousAgentsMD})
	p := f.mustPlan(baseHarness+"security:\n  escalation: {on_critical: review, review_label: needs-human}\n", run.Options{})
	rep, _, err := f.execute(p, run.ExecOptions{})
	if !errors.Is(err, run.ErrReview) || !strings.Contains(err.Error(), `label "needs-human"`) {
		t.Fatalf("err = %v, want ErrReview", err)
	}
	if rep.Status != run.StatusReview || rep.ExitCode != 1 || rep.Review == nil || rep.Review.Label != "needs-human" ||
		!slices.Contains(rep.Review.Phases, "host_scan") {
		t.Errorf("report: status %s exit %d review %+v", rep.Status, rep.ExitCode, rep.Review)
	}
	if phase(rep, "agent[1]") == nil || rep.Validation.Valid == nil || !*rep.Validation.Valid {
		t.Errorf("the agent did not run to a valid result: %+v", rep.Phases)
	}
	if !findingAt(rep, "host_scan", "AGENTS.md", true) {
		t.Errorf("the finding is not recorded as blocking: %+v", rep.Findings)
	}

	p = f.mustPlan(baseHarness+"security:\n  escalation: {on_critical: halt}\n", run.Options{})
	rep, _, err = f.execute(p, run.ExecOptions{})
	var be *run.BlockedError
	if !errors.As(err, &be) || rep.Status != run.StatusBlocked || rep.Review != nil {
		t.Errorf("halt: err %v status %s", err, rep.Status)
	}
}

// TestFindingTrace: findings carry the run's trace id unless
// security.trace.enabled is false.
func TestFindingTrace(t *testing.T) {
	f := newFixture(t)
	f.cfg.Security.FailMode = "open"
	f.newRepo(map[string]string{"AGENTS.md": maliciousAgentsMD})
	for _, c := range []struct {
		yaml string
		want bool
	}{{"", true}, {"security:\n  trace: {enabled: false}\n", false}} {
		rep, _ := f.mustExecute(f.mustPlan(baseHarness+c.yaml, run.Options{}), run.ExecOptions{})
		if len(rep.Findings) == 0 {
			t.Fatal("no findings")
		}
		ids := map[string]bool{}
		for _, fr := range rep.Findings {
			ids[fr.TraceID] = true
		}
		if c.want && (len(ids) != 1 || ids[""] || len(slices.Collect(func(y func(string) bool) {
			for k := range ids {
				y(k)
			}
		})[0]) != 32) {
			t.Errorf("trace on: ids %v", ids)
		}
		if !c.want && (len(ids) != 1 || !ids[""]) {
			t.Errorf("trace off: ids %v", ids)
		}
	}
}

// TestAgentInput: agent_input's files land in <target>/agent-input
// (symbolic links left out), named by FULLSEND_AGENT_INPUT; a target
// repository that already has agent-input is refused, not merged.
func TestAgentInput(t *testing.T) {
	f := newFixture(t)
	f.newRepo(map[string]string{"README.md": "hi\n"})
	f.write("inputs/issue.json", `{"n": 1}`)
	f.write("inputs/sub/notes.md", "notes\n")
	if err := os.Symlink("/etc/hostname", filepath.Join(f.dir, "inputs", "link")); err != nil {
		t.Fatal(err)
	}
	f.write("script.yaml", `steps:
  - expect: {path: "${FULLSEND_AGENT_INPUT}/issue.json", contains: '"n": 1'}
  - expect: {path: "${WORKDIR}/agent-input/sub/notes.md", contains: notes}
  - expect: {path: "${WORKDIR}/agent-input/link", exists: false}
  - write_result: {value: {status: ok}}
`)
	h := baseHarness + "agent_input: inputs\n"
	rep, snap := f.mustExecute(f.mustPlan(h, run.Options{}), run.ExecOptions{})
	if rep.Status != run.StatusSucceeded || snap.read(t, "/sandbox/workspace/myrepo/README.md") != "hi\n" {
		t.Errorf("status %s", rep.Status)
	}

	f.newRepo(map[string]string{"agent-input/mine.txt": "repo's own\n"})
	_, _, err := f.execute(f.mustPlan(h, run.Options{}), run.ExecOptions{})
	if err == nil || !strings.Contains(err.Error(), "agent_input: the target repository already has agent-input") {
		t.Errorf("collision: %v", err)
	}
}

// TestSkillOverrides: a skills entry's overrides apply to the staged copy
// after verification: a file replaced by the local override, another
// deleted; the fullsend dir's skill itself is untouched; an override of a
// file the skill does not have fails the run.
func TestSkillOverrides(t *testing.T) {
	f := newFixture(t)
	f.write("skills/alpha/sub/x.md", "original x\n")
	f.write("skills/alpha/sub/y.md", "original y\n")
	f.write("overrides/x.md", "overridden x\n")
	h := strings.Replace(baseHarness, "  - skills/alpha\n", "  - skills/alpha:\n      sub/x.md: overrides/x.md\n      sub/y.md: null\n", 1)
	p := f.mustPlan(h, run.Options{})
	if len(p.SkillOverrides) != 2 || p.SkillOverrides[1].Source != "" || !strings.HasSuffix(p.SkillOverrides[0].Source, "overrides/x.md") {
		t.Fatalf("plan overrides = %+v", p.SkillOverrides)
	}
	rep, snap := f.mustExecute(p, run.ExecOptions{})
	if rep.Status != run.StatusSucceeded {
		t.Fatalf("status %s: %s", rep.Status, rep.Error)
	}
	if got := snap.read(t, "/sandbox/claude-config/skills/alpha/sub/x.md"); got != "overridden x\n" {
		t.Errorf("sub/x.md = %q", got)
	}
	if _, err := os.Stat(filepath.Join(snap.root, "claude-config/skills/alpha/sub/y.md")); !os.IsNotExist(err) {
		t.Errorf("sub/y.md not deleted: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.dir, "skills/alpha/sub/x.md")); string(b) != "original x\n" {
		t.Errorf("the fullsend dir's skill changed: %q", b)
	}

	h = strings.Replace(baseHarness, "  - skills/alpha\n", "  - skills/alpha:\n      sub/z.md: null\n", 1)
	_, _, err := f.execute(f.mustPlan(h, run.Options{}), run.ExecOptions{})
	if err == nil || !strings.Contains(err.Error(), "skill override sub/z.md: no such file in the verified skill") {
		t.Errorf("missing target: %v", err)
	}
}
