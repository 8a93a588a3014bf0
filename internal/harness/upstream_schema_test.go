package harness

import (
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
