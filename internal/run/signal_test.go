package run_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/run"
)

// TestSIGINTTearsDown runs `fullsend run` in a child process, interrupts
// it while the agent runs, and checks that the run ends as canceled with
// its report written, no sandbox process left and nothing left in the temp
// dir (sandbox session dirs, staging dirs).
func TestSIGINTTearsDown(t *testing.T) {
	needLocal(t)
	f := newFixture(t)
	marker := fmt.Sprintf("41%d.25", os.Getpid())
	f.write("script.yaml", "steps:\n  - say: starting\n  - exec: {cmd: 'sleep "+marker+"'}\n  - write_result: {value: {status: ok}}\n")
	hp := f.write("harness.yaml", baseHarness)
	// Mounts under the fixture's directories: anything the interrupted run
	// left mounted would be there (other packages' tests may mount and
	// unmount elsewhere on the host meanwhile).
	root := filepath.Dir(f.dir)
	mountsBefore := mountsUnder(t, root)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "run", "--fullsend-dir", f.dir, "--workspace", f.workspace, "--target-repo", "none",
		"--script", filepath.Join(f.dir, "script.yaml"), hp)
	cmd.Env = append(os.Environ(), envCLI+"=1", "TMPDIR="+f.tmp)
	cmd.Dir = f.workspace
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Wait until the agent's sleep is running.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if len(processesMatching("sleep "+marker)) > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("run ended before the agent started: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("agent never started\nstderr: %s", stderr.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("run did not stop after SIGINT\nstderr: %s", stderr.String())
	}
	if cmd.ProcessState.ExitCode() != 130 {
		t.Errorf("exit code = %d (%v), want 130\nstderr: %s", cmd.ProcessState.ExitCode(), err, stderr.String())
	}
	if pids := processesMatching("sleep " + marker); len(pids) != 0 {
		t.Errorf("processes left after SIGINT: %v", pids)
	}
	f.assertTornDown()
	if after := mountsUnder(t, root); after != mountsBefore {
		t.Errorf("mounts under %s changed by the interrupted run:\nbefore:\n%s\nafter:\n%s", root, mountsBefore, after)
	}
	reps, err := run.List(run.RunsDir(f.workspace))
	if err != nil || len(reps) != 1 {
		t.Fatalf("runs: %v %d", err, len(reps))
	}
	r := reps[0]
	if r.Status != run.StatusCanceled {
		t.Errorf("status = %s, want canceled", r.Status)
	}
	if ph := phase(r, "teardown"); ph == nil || ph.Status != "ok" {
		t.Errorf("teardown phase = %+v", ph)
	}
	if !strings.Contains(stdout.String(), "canceled") {
		t.Errorf("summary does not say canceled: %q", stdout.String())
	}
	var back map[string]any
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(r.Dir(), run.ReportFile))), &back); err != nil {
		t.Errorf("report.json: %v", err)
	}
}

// mountsUnder returns the mount points of /proc/self/mountinfo at or below
// dir, one per line.
func mountsUnder(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(readFile(t, "/proc/self/mountinfo"), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			out = append(out, f[4])
		}
	}
	return strings.Join(out, "\n")
}
