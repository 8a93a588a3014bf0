package ci

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/run"
)

func TestOutcomeAnnotations(t *testing.T) {
	valid := false
	ws := t.TempDir()
	rep := &run.Report{
		Status: run.StatusInvalid,
		Target: run.TargetInfo{Repo: filepath.Join(ws, "src")},
		Findings: []run.FindingRecord{
			{Path: "AGENTS.md", Line: 3, Column: 1, Scanner: "injection", Rule: "override", Severity: "critical", Message: "x\n::add-mask::y", Blocked: true},
			{Path: "docs/a.md", Line: 7, Scanner: "ssrf", Rule: "internal", Severity: "warning", Message: "w"},
			{Path: "b.md", Scanner: "unicode", Rule: "zw", Severity: "info", Message: "i"},
		},
		Validation: run.Validation{Valid: &valid, Iterations: []run.Iteration{
			{N: 1, Errors: []string{"old"}},
			{N: 2, Errors: []string{"status: required", "extra: not allowed"}},
		}},
	}
	got := Outcome{Report: rep, Workspace: ws}.Annotations()
	want := []string{
		"::error file=src/AGENTS.md,line=3,col=1,title=fullsend injection%3A override (blocked the run)::x%0A::add-mask::y",
		"::warning file=src/docs/a.md,line=7,title=fullsend ssrf%3A internal::w",
		"::notice file=src/b.md,title=fullsend unicode%3A zw::i",
		"::error title=fullsend%3A result invalid (iteration 2)::status: required",
		"::error title=fullsend%3A result invalid (iteration 2)::extra: not allowed",
	}
	if len(got) != len(want) {
		t.Fatalf("%d annotations: %v", len(got), got)
	}
	for i, a := range got {
		if a.String() != want[i] {
			t.Errorf("annotation %d:\n got %s\nwant %s", i, a.String(), want[i])
		}
	}
}

func TestOutcomeOutputs(t *testing.T) {
	get := func(outs []Output) map[string]string {
		m := map[string]string{}
		for _, o := range outs {
			m[o.Name] = o.Value
		}
		return m
	}
	// No run: status error, skipped unknown.
	m := get(Outcome{Err: errors.New("bad"), Exit: 2}.Outputs())
	if m["status"] != "error" || m["exit-code"] != "2" || m["skipped"] != "" || len(m) != 9 {
		t.Errorf("no run: %v", m)
	}
	// Review: the label to apply.
	m = get(Outcome{Report: &run.Report{Status: run.StatusReview, Review: &run.Review{Label: "needs-human"}}, Exit: 1}.Outputs())
	if m["status"] != "review" || m["review-label"] != "needs-human" {
		t.Errorf("review: %v", m)
	}
	// Skipped.
	m = get(Outcome{Report: &run.Report{Status: run.StatusSkipped, SkipReason: "dup", Phases: []run.Phase{{Name: "pre_script", Status: "ok"}}}}.Outputs())
	if m["status"] != "skipped" || m["skipped"] != "true" || m["skip-reason"] != "dup" {
		t.Errorf("skipped: %v", m)
	}
	// Failed in the pre_script: before the skip decision.
	m = get(Outcome{Report: &run.Report{Status: run.StatusFailed, Phases: []run.Phase{{Name: "pre_script", Status: "failed"}}}, Exit: 1}.Outputs())
	if m["skipped"] != "" || m["status"] != "failed" {
		t.Errorf("pre_script failed: %v", m)
	}
	// Past it.
	m = get(Outcome{Report: &run.Report{Status: run.StatusBlocked, Phases: []run.Phase{{Name: "stage", Status: "ok"}}, Findings: make([]run.FindingRecord, 3)}, Exit: 1}.Outputs())
	if m["skipped"] != "false" || m["findings"] != "3" {
		t.Errorf("blocked: %v", m)
	}
}

func TestSummaryEscapesUntrustedText(t *testing.T) {
	rep := &run.Report{
		RunID: "r1", Status: run.StatusBlocked, Error: "blocked <script>", Agent: "a|b",
		Findings: []run.FindingRecord{{Path: "x|y.md", Line: 2, Severity: "critical", Scanner: "s", Rule: "r", Blocked: true,
			Message: "[click](https://evil.test) ![i](https://evil.test/p.png) <img src=x> @admins\n| forged | row |"}},
	}
	sum := Outcome{Report: rep}.Summary()
	for _, bad := range []string{"<script>", "<img", "](https://", "@admins", "\n| forged", "x|y"} {
		if strings.Contains(sum, bad) {
			t.Errorf("summary holds %q:\n%s", bad, sum)
		}
	}
	for _, want := range []string{"### ⛔ fullsend run r1: blocked", "#### Findings (1)", "| critical | s/r | x\\|y\\.md\\:2 |", "**yes**"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
}
