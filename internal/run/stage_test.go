package run_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/run"
)

// A local skill directory swapped for a symlink leading out of the
// fullsend dir after the harness was checked (and planned) is never read:
// the run fails at staging, and nothing of the outside directory reaches
// the scan or the sandbox.
func TestStageRefusesSwappedSkill(t *testing.T) {
	f := newFixture(t)
	p := f.mustPlan(baseHarness, run.Options{})
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "SKILL.md"), "---\nname: alpha\n---\nOUTSIDE-SECRET\n")
	skill := filepath.Join(f.dir, "skills", "alpha")
	if err := os.RemoveAll(skill); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, skill); err != nil {
		t.Fatal(err)
	}
	rep, _, err := f.execute(p, run.ExecOptions{})
	if err == nil || !strings.Contains(err.Error(), "skill alpha") {
		t.Fatalf("run with a swapped skill: err = %v", err)
	}
	if ph := phase(rep, "stage"); ph == nil || ph.Status != "failed" {
		t.Fatalf("stage phase = %+v", ph)
	}
	if phase(rep, "provision") != nil {
		t.Error("a sandbox was provisioned after the staging failure")
	}
	if found := grepTree(rep.Dir(), "OUTSIDE-SECRET"); found != "" {
		t.Errorf("the outside file was read into %s", found)
	}
}

// What is staged is what the runtime uploads: the plan's local paths point
// into the run directory's private copy.
func TestStageCopiesLocalResources(t *testing.T) {
	f := newFixture(t)
	p := f.mustPlan(baseHarness, run.Options{})
	rep, snap, err := f.execute(p, run.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	staged := filepath.Join(rep.Dir(), run.StageDir, "skills", "alpha", "SKILL.md")
	b, err := os.ReadFile(staged)
	if err != nil || string(b) != alphaSkill {
		t.Fatalf("staged skill: %q %v", b, err)
	}
	if got := snap.read(t, "/sandbox/claude-config/skills/alpha/SKILL.md"); got != alphaSkill {
		t.Errorf("uploaded skill = %q", got)
	}
}

func grepTree(dir, s string) string {
	var found string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && found == "" {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), s) {
				found = p
			}
		}
		return nil
	})
	return found
}
