package harness

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/config"
)

// schemaCase is one harness of today's upstream schema (issue 29 item 3):
// body follows "agent: agents/a.md\n" (so line 2 is its first line).
type schemaCase struct {
	name  string
	body  string
	check func(t *testing.T, h *Harness)
	err   string // "" = accepted and valid
}

func runSchemaCases(t *testing.T, cases []schemaCase, files map[string]string) {
	t.Helper()
	d := tree(t, baseTree())
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

// TestDescriptionAndTrigger: description is kept as written; trigger is
// a CEL bool expression type-checked at load, its errors at harness:line.
func TestDescriptionAndTrigger(t *testing.T) {
	runSchemaCases(t, []schemaCase{
		{name: "description", body: "description: Reviews pull requests\n",
			check: func(t *testing.T, h *Harness) {
				if h.Description != "Reviews pull requests" {
					t.Errorf("description = %q", h.Description)
				}
			}},
		{name: "trigger", body: "trigger: >-\n  event.transition.kind == \"label_changed\" &&\n  event.transition.label.name == \"fullsend\"\n",
			check: func(t *testing.T, h *Harness) {
				if !strings.HasPrefix(h.Trigger, "event.transition.kind") {
					t.Errorf("trigger = %q", h.Trigger)
				}
			}},
		{name: "trigger typo", body: "description: x\ntrigger: event.transiton.kind == \"opened\"\n",
			err: "h.yaml:3: trigger: invalid value: CEL: 1:6: undefined field 'transiton'"},
		{name: "trigger syntax", body: "trigger: event.repo ==\n", err: "h.yaml:2: trigger: invalid value: CEL: 1:14: Syntax error"},
		{name: "trigger not bool", body: "trigger: event.repo\n", err: "h.yaml:2: trigger: invalid value: CEL: must be a bool expression, not string"},
		{name: "trigger in overlay", body: "forge:\n  github:\n    trigger: \"true\"\n", err: "h.yaml:4: forge.github.trigger: unknown field"},
	}, nil)
}

// TestDescriptionTriggerMerge: both are child-wins scalars.
func TestDescriptionTriggerMerge(t *testing.T) {
	d := tree(t, baseTree())
	write(t, d, "harness/b.yaml", "agent: agents/a.md\ndescription: base\ntrigger: event.repo == \"o/b\"\n")
	p := write(t, d, "harness/h.yaml", "base: harness/b.yaml\ndescription: child\n")
	h, err := Load(p, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h.Description != "child" || h.Trigger != `event.repo == "o/b"` {
		t.Errorf("description %q trigger %q", h.Description, h.Trigger)
	}
}

// TestFeedbackMode: each mode loads; an unknown one is a load error
// naming the field; the mode is a child-wins key of validation_loop.
func TestFeedbackMode(t *testing.T) {
	var cases []schemaCase
	for _, m := range FeedbackModes {
		cases = append(cases, schemaCase{name: m, body: "validation_loop:\n  schema: schemas/r.schema.json\n  feedback_mode: " + m + "\n",
			check: func(t *testing.T, h *Harness) {
				if h.ValidationLoop.FeedbackMode != m {
					t.Errorf("feedback_mode = %q", h.ValidationLoop.FeedbackMode)
				}
			}})
	}
	cases = append(cases, schemaCase{name: "unknown", body: "validation_loop:\n  feedback_mode: diff\n",
		err: `h.yaml:3: validation_loop.feedback_mode: invalid value: "diff" is not a feedback mode (stdout, stderr, exit_code, append, none)`})
	runSchemaCases(t, cases, nil)

	d := tree(t, baseTree())
	write(t, d, "harness/b.yaml", "agent: agents/a.md\nvalidation_loop: {feedback_mode: stderr, max_iterations: 3}\n")
	p := write(t, d, "harness/h.yaml", "base: harness/b.yaml\nvalidation_loop: {max_iterations: 2}\n")
	h, err := Load(p, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h.ValidationLoop.FeedbackMode != "stderr" || h.ValidationLoop.MaxIterations != 2 {
		t.Errorf("merged validation_loop = %+v", h.ValidationLoop)
	}
}

// TestSecurityUpstreamFields: security.enabled (false needs the org's
// security.allow_disable), escalation and trace.
func TestSecurityUpstreamFields(t *testing.T) {
	runSchemaCases(t, []schemaCase{
		{name: "enabled false refused by default", body: "security:\n  enabled: false\n",
			err: "h.yaml:3: security.enabled: false is refused: config.yaml does not set security.allow_disable: true"},
		{name: "enabled true", body: "security:\n  enabled: true\n",
			check: func(t *testing.T, h *Harness) {
				if !h.Security.SecurityEnabled() {
					t.Error("disabled")
				}
			}},
		{name: "escalation review", body: "security:\n  escalation:\n    on_critical: review\n",
			check: func(t *testing.T, h *Harness) {
				if ok, l := h.Security.Review(); !ok || l != DefaultReviewLabel {
					t.Errorf("review = %v %q", ok, l)
				}
			}},
		{name: "escalation label", body: "security:\n  escalation: {on_critical: review, review_label: needs-human}\n",
			check: func(t *testing.T, h *Harness) {
				if ok, l := h.Security.Review(); !ok || l != "needs-human" {
					t.Errorf("review = %v %q", ok, l)
				}
			}},
		{name: "escalation halt", body: "security:\n  escalation: {on_critical: halt}\n",
			check: func(t *testing.T, h *Harness) {
				if ok, _ := h.Security.Review(); ok {
					t.Error("review")
				}
			}},
		{name: "escalation unknown", body: "security:\n  escalation:\n    on_critical: ignore\n", err: `h.yaml:4: security.escalation.on_critical: invalid value: "ignore" must be halt or review`},
		{name: "escalation bad label", body: "security:\n  escalation:\n    review_label: \"a,b\"\n", err: `h.yaml:4: security.escalation.review_label: invalid value: "a,b" is not a label`},
		{name: "escalation unknown key", body: "security:\n  escalation:\n    notify: x\n", err: "h.yaml:4: security.escalation.notify: unknown field"},
		{name: "trace off", body: "security:\n  trace:\n    enabled: false\n",
			check: func(t *testing.T, h *Harness) {
				if h.Security.TraceEnabled() {
					t.Error("trace on")
				}
			}},
	}, nil)

	// The org allows it.
	d := tree(t, baseTree())
	p := write(t, d, "harness/h.yaml", "agent: agents/a.md\nsecurity:\n  enabled: false\n")
	cfg := config.Default()
	cfg.Security.AllowDisable = true
	h, err := Load(p, LoadOptions{Config: cfg})
	if err == nil {
		err = h.Validate(cfg)
	}
	if err != nil || h.Security.SecurityEnabled() {
		t.Errorf("allowed: %v, enabled %v", err, h.Security.SecurityEnabled())
	}
	// A child never weakens its base.
	write(t, d, "harness/b.yaml", "agent: agents/a.md\nsecurity:\n  enabled: true\n  escalation: {on_critical: halt}\n  trace: {enabled: true}\n")
	p = write(t, d, "harness/c.yaml", "base: harness/b.yaml\nsecurity:\n  enabled: false\n  escalation: {on_critical: review, review_label: x}\n  trace: {enabled: false}\n")
	h, err = Load(p, LoadOptions{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if !h.Security.SecurityEnabled() || h.Security.OnCritical != "halt" || !h.Security.TraceEnabled() || len(h.Notices) != 3 {
		t.Errorf("merged: %+v notices %q", h.Security, h.Notices)
	}
}

// TestRemoteSecurityOff: remote content may not turn security off or
// ask for review, nor name an agent_input (local only).
func TestRemoteSecurityOff(t *testing.T) {
	cfg := orgCfg(t, "https://github.com/o/")
	cfg.Security.AllowDisable = true
	url := "https://github.com/o/lib/harness/base.yaml"
	for body, want := range map[string]string{
		"agent: agents/a.md#sha256=" + pin + "\nsecurity:\n  enabled: false\n":                    ErrRemoteSecurityOff.Error(),
		"agent: agents/a.md#sha256=" + pin + "\nsecurity:\n  escalation: {on_critical: review}\n": ErrRemoteSecurityOff.Error(),
	} {
		b := []byte(body)
		if _, err := LoadRemote(context.Background(), remotePin(t, url, b), b, LoadOptions{Config: cfg}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v", body, err)
		}
	}
	b := []byte("allowed_remote_resources: [https://github.com/o/lib/]\nagent: agents/a.md#sha256=" + pin + "\nagent_input: inputs\n")
	if _, err := LoadRemote(context.Background(), remotePin(t, url, b), b, LoadOptions{Config: cfg}); !errors.Is(err, ErrExecutableRemote) || !strings.Contains(err.Error(), "agent_input") {
		t.Errorf("remote agent_input: %v", err)
	}
}

// TestAgentInputField: a local directory inside the fullsend dir; a file,
// an escape or a symlink out is refused.
func TestAgentInputField(t *testing.T) {
	d := tree(t, baseTree())
	write(t, d, "inputs/x.json", "{}")
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(d, "linkout")); err != nil {
		t.Fatal(err)
	}
	for body, want := range map[string]string{
		"agent_input: inputs\n":                        "",
		"agent_input: inputs/x.json\n":                 "h.yaml:2: agent_input: ",
		"agent_input: ../../etc\n":                     "h.yaml:2: agent_input: ",
		"agent_input: linkout\n":                       "h.yaml:2: agent_input: ",
		"forge:\n  github:\n    agent_input: inputs\n": "forge.github.agent_input: unknown field",
	} {
		p := write(t, d, "harness/h.yaml", "agent: agents/a.md\n"+body)
		h, err := Load(p, LoadOptions{})
		if err == nil {
			_, err = h.Check(config.Default())
		}
		if want == "" {
			if err != nil || h.AgentInput != "inputs" {
				t.Errorf("%q: %v", body, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", body, err, want)
		}
	}
}

// TestSkillOverrideEntries: skills entries in object form; paths checked
// at load, override files checked like every reference.
func TestSkillOverrideEntries(t *testing.T) {
	files := map[string]string{"overrides/x.md": "x\n"}
	runSchemaCases(t, []schemaCase{
		{name: "object form", body: "skills:\n  - skills/s2\n  - skills/s1:\n      sub/x.md: overrides/x.md\n      sub/y.md: null\n",
			check: func(t *testing.T, h *Harness) {
				want := []SkillOverride{{Skill: "skills/s1", Path: "sub/x.md", Source: "overrides/x.md"}, {Skill: "skills/s1", Path: "sub/y.md"}}
				if len(h.Skills) != 2 || h.Skills[1] != "skills/s1" || len(h.SkillOverrides) != 2 || h.SkillOverrides[0] != want[0] || h.SkillOverrides[1] != want[1] {
					t.Errorf("skills %q overrides %+v", h.Skills, h.SkillOverrides)
				}
				var kinds []string
				for _, r := range h.Refs() {
					kinds = append(kinds, r.Field+"="+r.Kind.String())
				}
				if strings.Join(kinds, " ") != "agent=agent skills[0]=skill skills[1]=skill skill_overrides[0]=skill_override" {
					t.Errorf("refs %v", kinds)
				}
			}},
		{name: "escape", body: "skills:\n  - skills/s1:\n      ../x.md: overrides/x.md\n", err: `h.yaml:4: skills[0].skills/s1.../x.md: invalid value: "../x.md" is not a clean relative path inside the skill`},
		{name: "absolute", body: "skills:\n  - skills/s1: {/etc/passwd: null}\n", err: `is not a clean relative path inside the skill`},
		{name: "missing override file", body: "skills:\n  - skills/s1: {SKILL.md: overrides/none.md}\n", err: "h.yaml:3: skill_overrides[0]: "},
		{name: "override file escapes", body: "skills:\n  - skills/s1: {SKILL.md: ../../x.md}\n", err: "h.yaml:3: skill_overrides[0]: "},
		{name: "override is a URL", body: "skills:\n  - skills/s1: {SKILL.md: \"https://github.com/o/r/blob/v1/x.md#sha256=" + pin + "\"}\n", err: "must be local"},
		{name: "two keys", body: "skills:\n  - {skills/s1: {a.md: null}, skills/s2: {b.md: null}}\n", err: "h.yaml:3: skills[0]: invalid value: want a skill reference, or {REFERENCE"},
		{name: "absolute override file", body: "skills:\n  - skills/s1: {SKILL.md: /etc/passwd}\n", err: `h.yaml:3: skills[0].skills/s1.SKILL.md: invalid value: "/etc/passwd": an override is a file of the fullsend dir`},
		{name: "empty override", body: "skills:\n  - skills/s1: {SKILL.md: \"\"}\n", err: "want a local file, or null to delete the file"},
	}, files)
}

// TestSkillOverridesMergeAndRemote: a child listing a skill replaces the
// base's overrides for it; remote content may not override.
func TestSkillOverridesMergeAndRemote(t *testing.T) {
	d := tree(t, baseTree())
	write(t, d, "overrides/x.md", "x\n")
	write(t, d, "harness/b.yaml", "agent: agents/a.md\nskills:\n  - skills/s1: {SKILL.md: overrides/x.md}\n  - skills/s2: {SKILL.md: null}\n")
	p := write(t, d, "harness/h.yaml", "base: harness/b.yaml\nskills:\n  - other/s1\n")
	h, err := Load(p, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.SkillOverrides) != 1 || h.SkillOverrides[0].Skill != "skills/s2" {
		t.Errorf("merged overrides %+v", h.SkillOverrides)
	}
	cfg := orgCfg(t, "https://github.com/o/")
	b := []byte("agent: agents/a.md#sha256=" + pin + "\nskills:\n  - skills/s1: {SKILL.md: null}\n")
	if _, err := LoadRemote(context.Background(), remotePin(t, "https://github.com/o/lib/harness/base.yaml", b), b, LoadOptions{Config: cfg}); !errors.Is(err, ErrRemoteOverrides) || !strings.Contains(err.Error(), "base.yaml:3: skills:") {
		t.Errorf("remote overrides: %v", err)
	}
}
