package run_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/run"
)

// TestPlanNoTargetRepo: outside a git repository and without
// --target-repo, planning fails (the agent would otherwise get an empty
// directory without anyone noticing) with one line suggesting both fixes;
// "none" still plans an empty working directory.
func TestPlanNoTargetRepo(t *testing.T) {
	f := newFixture(t)
	outside := t.TempDir()
	if _, err := os.Lstat(filepath.Join(outside, ".git")); err == nil {
		t.Fatal("temp dir is a git repository")
	}
	_, err := f.plan(baseHarness, run.Options{TargetRepo: "cwd", Cwd: outside})
	if !errors.Is(err, run.ErrNoTargetRepo) {
		t.Fatalf("err = %v, want ErrNoTargetRepo", err)
	}
	msg := err.Error()
	for _, want := range []string{outside, "--target-repo DIR", "--target-repo none"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("message is not one line: %q", msg)
	}
	p, err := f.plan(baseHarness, run.Options{TargetRepo: "none", Cwd: outside})
	if err != nil || p.TargetRepo != "" {
		t.Fatalf("none: %v %q", err, p.TargetRepo)
	}
}
