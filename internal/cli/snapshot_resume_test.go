//go:build unix

package cli

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	runpkg "github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
)

// killedAfterWriting runs the hello harness natively against a scripted
// model whose first turn writes files in the workspace and in the
// agent's home, and SIGKILLs the run while it waits for the second
// answer. The steps after the kill (i >= 2) come from after. It returns
// the workspace, the run id and the model server.
func killedAfterWriting(t *testing.T, after func(i int) modeltest.Step) (string, string, *modeltest.Server) {
	t.Helper()
	needLocalSandbox(t)
	bin := cliBinary(t)
	var pid atomic.Int64
	srv := modeltest.NewFunc(t, model.APIOpenAI, func(i int, r modeltest.Received) modeltest.Step {
		switch i {
		case 0:
			return modeltest.Call("c1", native.ToolBash, map[string]string{"command": "printf kept > /sandbox/workspace/repo/notes.txt && mkdir -p /sandbox/.cache && printf home > /sandbox/.cache/h"})
		case 1:
			return modeltest.Step{Handler: func(w http.ResponseWriter, r *http.Request) {
				if p := pid.Load(); p > 0 {
					_ = syscall.Kill(int(p), syscall.SIGKILL)
				}
				select {
				case <-r.Context().Done():
				case <-time.After(30 * time.Second):
				}
			}}
		}
		return after(i)
	})
	setModelEnv(t, model.APIOpenAI, srv.URL+"/v1")
	ws := t.TempDir()
	cmd := exec.Command(bin, "--workspace", ws, "run", "--runtime", "native", "--target-repo", "none", helloHarness)
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid.Store(int64(cmd.Process.Pid))
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("first attempt was not killed: %v\n%s", err, out.String())
	}
	ents, err := os.ReadDir(runpkg.RunsDir(ws))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			return ws, e.Name(), srv
		}
	}
	t.Fatalf("no run directory in %s", runpkg.RunsDir(ws))
	return "", "", nil
}

// snapshotFiles lists the snapshots of a run directory.
func snapshotFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, native.SnapshotsDir, "*.tar"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestResumeRestoresWorkspace: a native run killed in the middle of its
// second turn left a workspace snapshot (taken when the first turn's
// tools were done); `run --resume` restores it before its first turn, so
// the resumed agent finds the files it wrote in the workspace and in its
// home, not a fresh checkout.
func TestResumeRestoresWorkspace(t *testing.T) {
	ws, id, srv := killedAfterWriting(t, func(i int) modeltest.Step {
		switch i {
		case 2:
			return modeltest.Call("c2", native.ToolBash, map[string]string{"command": "cat /sandbox/workspace/repo/notes.txt /sandbox/.cache/h"})
		case 3:
			return modeltest.Call("c3", native.ToolWriteFile, map[string]string{"path": resultInSbox, "content": helloResult})
		}
		return modeltest.Say("done after the resume")
	})
	dir := filepath.Join(runpkg.RunsDir(ws), id)
	if n := len(snapshotFiles(t, dir)); n != 1 {
		t.Fatalf("the killed run left %d snapshots, want 1", n)
	}
	code, out, errs := runCLI(t, "--workspace", ws, "run", "--resume", id, "--target-repo", "none", helloHarness)
	if code != 0 {
		t.Fatalf("resume: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("model saw %d requests, want 5", len(reqs))
	}
	msgs := reqs[3].Decoded.Messages
	if got := msgs[len(msgs)-1]; got.Role != model.RoleTool || !strings.Contains(got.Text(), "kepthome") {
		t.Errorf("after the resume the workspace lacks the files written before the kill: %q", got.Text())
	}
	if !strings.Contains(errs+out, "workspace restored from snapshots/") {
		t.Errorf("no restore note:\n%s\n%s", out, errs)
	}
	// Content-addressed, the previous one removed: one file, named by
	// its sha256, holding no runner-owned file.
	snaps := snapshotFiles(t, dir)
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots after the resume, want 1", len(snaps))
	}
	data, err := os.ReadFile(snaps[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, owned := range []string{"./claude-config/", "./workspace/.env", "./.aws/credentials"} {
		if bytes.Contains(data, []byte(owned)) {
			t.Errorf("the snapshot keeps %s", owned)
		}
	}
}

// TestResumeRefusesTamperedSnapshot: a snapshot file changed after the
// run wrote it (its sha256 no longer the one the MAC-chained transcript
// records) is refused before anything is provisioned, in one line.
func TestResumeRefusesTamperedSnapshot(t *testing.T) {
	ws, id, srv := killedAfterWriting(t, func(int) modeltest.Step { return modeltest.Say("must not be asked") })
	dir := filepath.Join(runpkg.RunsDir(ws), id)
	snaps := snapshotFiles(t, dir)
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots, want 1", len(snaps))
	}
	data, err := os.ReadFile(snaps[0])
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("kept"))
	if i < 0 {
		t.Fatalf("the snapshot does not hold notes.txt")
	}
	copy(data[i:], "evil")
	if err := os.WriteFile(snaps[0], data, 0o600); err != nil {
		t.Fatal(err)
	}
	before := len(srv.Requests())
	code, out, errs := runCLI(t, "--workspace", ws, "run", "--resume", id, "--target-repo", "none", helloHarness)
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	last := lines[len(lines)-1]
	if code != 1 || !strings.Contains(last, "snapshot") || !strings.Contains(last, "sha256") || !strings.Contains(last, "start a new run") {
		t.Fatalf("tampered snapshot: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if n := len(srv.Requests()); n != before {
		t.Errorf("the model was asked %d more times after a refused resume", n-before)
	}
}
