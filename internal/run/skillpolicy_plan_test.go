package run_test

import (
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/run"
)

// TestPlanSkillPolicyNarrows: a skill's SKILL.md policy narrows the
// sandbox's egress to what it and the harness both allow; endpoints it
// adds are refused with a note, never allowed.
func TestPlanSkillPolicyNarrows(t *testing.T) {
	f := newFixture(t)
	f.write("policies/p.yaml", "network_policies:\n  a:\n    endpoints:\n      - {host: api.example.test, port: 443}\n      - {host: \"*.github.test\", port: 443}\n")
	f.write("policies/skill.yaml", "filesystem_policy:\n  read_write: [/var]\nnetwork_policies:\n  s:\n    endpoints:\n      - {host: raw.github.test, port: 443}\n      - {host: evil.example, port: 443}\n")
	f.write("skills/alpha/SKILL.md", "---\nname: alpha\ndescription: The alpha skill.\npolicy: policies/skill.yaml\n---\nSay alpha.\n")
	p := f.mustPlan(baseHarness, run.Options{})
	if got := strings.Join(p.Spec.Network.Allow, " "); got != "raw.github.test:443" {
		t.Errorf("allow = %q, want raw.github.test:443 only", got)
	}
	if !noteContains(p.Notes, "egress to evil.example:443 is not allowed by the harness and is not added") ||
		!noteContains(p.Notes, "narrows egress to raw.github.test:443") || !noteContains(p.Notes, "filesystem_policy is not applied") {
		t.Errorf("notes = %v", p.Notes)
	}
	// Widening only: nothing the harness allows is left but what both allow.
	f.write("policies/skill.yaml", "network_policies:\n  s:\n    endpoints:\n      - {host: evil.example, port: 443}\n")
	p = f.mustPlan(baseHarness, run.Options{})
	if len(p.Spec.Network.Allow) != 0 {
		t.Errorf("a skill policy naming only other hosts left %v", p.Spec.Network.Allow)
	}
	// A skill without a policy changes nothing.
	f.write("skills/alpha/SKILL.md", alphaSkill)
	p = f.mustPlan(baseHarness, run.Options{})
	if got := strings.Join(p.Spec.Network.Allow, " "); got != "*.github.test:443 api.example.test:443" {
		t.Errorf("without a skill policy: allow = %q", got)
	}
}
