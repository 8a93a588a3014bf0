//go:build unix

package run_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/run"
)

// TestPlanNativeOptions: the native runtime gets the command-line options
// unchanged, resume for --resume and allow_runtime_fetch from the harness;
// --resume with another runtime is refused.
func TestPlanNativeOptions(t *testing.T) {
	f := newFixture(t)
	f.cfg.AllowedRemoteResources = []string{"https://example.com/"}
	h := baseHarness + "allowed_remote_resources:\n  - https://example.com/org/lib/\nallow_runtime_fetch: true\n"
	p, err := f.planKeep(h, run.Options{Runtime: "native", Resume: "20260101T000000.000Z-abcdef",
		RuntimeOptions: map[string]string{"model": "m", "max_turns": "7"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"model": "m", "max_turns": "7", "resume": "true", "allow_runtime_fetch": "true"}
	if !reflect.DeepEqual(p.RunOptions, want) {
		t.Errorf("RunOptions = %v, want %v", p.RunOptions, want)
	}
	if p.Schema == "" || p.Resume == "" {
		t.Errorf("schema %q resume %q", p.Schema, p.Resume)
	}
	_, err = f.planKeep(baseHarness, run.Options{Runtime: "claude", Resume: "20260101T000000.000Z-abcdef"})
	if err == nil || !strings.Contains(err.Error(), "--resume is only supported by the native runtime") {
		t.Errorf("resume with claude: %v", err)
	}
}

// TestResumeChecks: --resume continues only an existing native run that
// did not succeed and that no other process is executing; the checks run
// before anything is started.
func TestResumeChecks(t *testing.T) {
	f := newFixture(t)
	const id = "20260101T000000.000Z-abcdef"
	p, err := f.planKeep(baseHarness, run.Options{Runtime: "native", Resume: id})
	if err != nil {
		t.Fatal(err)
	}
	exec := func() error {
		rep, err := run.Execute(context.Background(), p, run.ExecOptions{})
		if rep != nil {
			t.Errorf("report returned for a refused resume")
		}
		return err
	}
	if err := exec(); !errors.Is(err, run.ErrNoRun) {
		t.Errorf("missing run: %v", err)
	}
	dir := filepath.Join(p.RunsDir, id)
	writeFile(t, filepath.Join(dir, "events.jsonl"), "")
	if err := exec(); !errors.Is(err, run.ErrNotResumable) || !strings.Contains(err.Error(), "transcript.jsonl") {
		t.Errorf("no transcript: %v", err)
	}
	writeFile(t, filepath.Join(dir, "transcript.jsonl"), "")
	writeFile(t, filepath.Join(dir, run.ReportFile), `{"run_id":"`+id+`","runtime":"claude","status":"failed"}`)
	if err := exec(); !errors.Is(err, run.ErrNotResumable) || !strings.Contains(err.Error(), "claude runtime") {
		t.Errorf("claude run: %v", err)
	}
	writeFile(t, filepath.Join(dir, run.ReportFile), `{"run_id":"`+id+`","runtime":"native","status":"succeeded"}`)
	if err := exec(); !errors.Is(err, run.ErrNotResumable) || !strings.Contains(err.Error(), "already succeeded") {
		t.Errorf("succeeded run: %v", err)
	}
	// Another process holds the run directory.
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Skipf("flock: %v", err)
	}
	writeFile(t, filepath.Join(dir, run.ReportFile), `{"run_id":"`+id+`","runtime":"native","status":"running"}`)
	if err := exec(); !errors.Is(err, run.ErrRunInProgress) {
		t.Errorf("locked run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.attempt-1.json")); err == nil {
		t.Errorf("a refused resume kept a previous report")
	}
}

// TestPlanNativeDropsModelKey: with the native runtime, an env.sandbox
// entry carrying the model API key (by value or by the key variable's
// name) is not written into the sandbox; other runtimes and auth none keep
// env.sandbox as written.
func TestPlanNativeDropsModelKey(t *testing.T) {
	f := newFixture(t)
	f.env["MY_KEY"] = "sk-test-0123456789"
	h := baseHarness + "env:\n  sandbox:\n    LEAK: \"Bearer ${MY_KEY}\"\n    MY_KEY: other\n    KEEP: plain\n"
	p, err := f.planKeep(h, run.Options{Runtime: "native", RuntimeOptions: map[string]string{"key_env": "MY_KEY"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"KEEP": "plain"}; !reflect.DeepEqual(p.SandboxEnv, want) {
		t.Errorf("SandboxEnv = %v, want %v", p.SandboxEnv, want)
	}
	if notes := strings.Join(p.Notes, "\n"); !strings.Contains(notes, "env.sandbox.LEAK: dropped") || !strings.Contains(notes, "env.sandbox.MY_KEY: dropped") || strings.Contains(notes, "sk-test") {
		t.Errorf("notes = %q", notes)
	}
	for _, o := range []run.Options{
		{Runtime: "script", Script: filepath.Join(f.dir, "script.yaml")},
		{Runtime: "native", RuntimeOptions: map[string]string{"key_env": "MY_KEY", "auth": "none"}},
	} {
		p, err := f.planKeep(h, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.SandboxEnv) != 3 {
			t.Errorf("%s %v: SandboxEnv = %v", o.Runtime, o.RuntimeOptions, p.SandboxEnv)
		}
	}
}
