package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/reexec"
	runpkg "github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/sandbox/sandboxtest"
)

// TestMain: the sandboxes run the test binary in their roles (reexec);
// and `fullsend run` in the local sandbox runs `fullsend scan context`
// inside it, and there the test binary is /usr/local/bin/fullsend; it must
// then act as the CLI.
func TestMain(m *testing.M) {
	reexec.Main()
	if filepath.Base(os.Args[0]) == "fullsend" {
		os.Exit(Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	// Sandbox helper processes are this race-built binary: no 1 s exit sleep.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	// Runs and the run key live in a private state directory.
	state, err := os.MkdirTemp("", "fullsend-cli-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", state)
	code := m.Run()
	os.RemoveAll(state)
	os.Exit(code)
}

// cliBinary returns a link named fullsend to this test binary, which
// then acts as the CLI (TestMain). The test is skipped where the link
// cannot be made.
func cliBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("test binary: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "fullsend")
	if err := os.Symlink(exe, bin); err != nil {
		t.Skipf("symlink: %v", err)
	}
	return bin
}

// helloHarness is the README's example harness.
var helloHarness = filepath.Join("..", "..", "examples", "hello", "harness.yaml")

func needLocalSandbox(t *testing.T) {
	t.Helper()
	if err := sandboxtest.Unavailable("local"); err != nil {
		t.Skipf("local sandbox unavailable: %v", err)
	}
}

// inGitRepo makes the current directory (for the rest of the test) a new
// git work tree and returns it: the target repository `fullsend run`
// detects from the current directory. The checkout under test may be a
// plain copy without .git, so the tests do not rely on it being a clone.
func inGitRepo(t *testing.T) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "target")
	writeFiles(t, repo, map[string]string{".git/HEAD": "ref: refs/heads/main\n", "README.md": "# target\n"})
	t.Chdir(repo)
	return repo
}

// TestRunREADMEExample is the README's main command: the hello example
// with the script runtime in the local sandbox, from inside a git work tree
// (the target repository is detected from the current directory), printing
// its summary.
func TestRunREADMEExample(t *testing.T) {
	needLocalSandbox(t)
	hello, err := filepath.Abs(filepath.Join("..", "..", "examples", "hello", "harness.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	repo := inGitRepo(t)
	ws := t.TempDir()
	code, out, errs := runCLI(t, "--workspace", ws, "run", hello)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	for _, want := range []string{"  succeeded\n", "harness   harness.yaml (sha256 ", "agent     hello\n", "runtime   script\n", "sandbox   local\n",
		"result    valid (iteration 1 of 2)\n", "duration  ", "run dir   "} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	reps, err := runpkg.List(runpkg.RunsDir(ws))
	if err != nil || len(reps) != 1 {
		t.Fatalf("runs: %v %d", err, len(reps))
	}
	res, err := os.ReadFile(filepath.Join(reps[0].Dir(), "output", "agent-result.json"))
	if err != nil || !strings.Contains(string(res), `"greeting": "Hello, world!"`) {
		t.Errorf("result = %s (%v)", res, err)
	}
	if reps[0].Target.Repo != repo {
		t.Errorf("target repository %q, want %s detected from the current directory", reps[0].Target.Repo, repo)
	}

	// runs ls / show.
	id := reps[0].RunID
	code, out, _ = runCLI(t, "--workspace", ws, "runs", "ls")
	if code != 0 || !strings.Contains(out, "RUN ID") || !strings.Contains(out, id) || !strings.Contains(out, "succeeded") {
		t.Errorf("runs ls: %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "--workspace", ws, "runs", "ls", "--json")
	var rows []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 || rows[0]["run_id"] != id {
		t.Errorf("runs ls --json: %d %s", code, out)
	}
	code, out, _ = runCLI(t, "--workspace", ws, "runs", "show", id)
	if code != 0 || !strings.Contains(out, "phases:") || !strings.Contains(out, "scan_context") || !strings.Contains(out, "result    valid") {
		t.Errorf("runs show: %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "--workspace", ws, "runs", "show", "--json", id)
	disk, _ := os.ReadFile(filepath.Join(reps[0].Dir(), runpkg.ReportFile))
	if code != 0 || out != string(disk) {
		t.Errorf("runs show --json differs from report.json")
	}
	code, _, errs = runCLI(t, "--workspace", ws, "runs", "show", "20000101T000000.000Z-000000")
	if code != 1 || !strings.Contains(errs, "no such run") {
		t.Errorf("runs show unknown: %d %q", code, errs)
	}
}

// TestRunExitStatus: an invalid result exits 1 after printing the summary;
// bad flags exit 2.
func TestRunExitStatus(t *testing.T) {
	needLocalSandbox(t)
	ws := t.TempDir()
	script := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(script, []byte("steps:\n  - write_result: {json: '{\"greeting\": \"hi\"}'}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "--workspace", ws, "run", "--target-repo", "none", "--script", script, filepath.Join("..", "..", "examples", "hello", "harness.yaml"))
	if code != 1 || !strings.Contains(out, "result    invalid after 2 iteration(s)") || !strings.Contains(errs, "fullsend: result invalid after 2 iteration(s)") {
		t.Errorf("invalid result: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if len(errorLines(errs)) != 1 {
		t.Errorf("stderr is not one line: %q", errs)
	}
	code, _, _ = runCLI(t, "--workspace", ws, "run", "--sandbox", "vm", filepath.Join("..", "..", "examples", "hello", "harness.yaml"))
	if code != 2 {
		t.Errorf("--sandbox vm: exit %d, want 2", code)
	}
	code, _, errs = runCLI(t, "--workspace", ws, "run", "--runtime", "claude", "--script", script, filepath.Join("..", "..", "examples", "hello", "harness.yaml"))
	if code != 2 || !strings.Contains(errs, `--script: only for the script runtime (runtime is "claude")`) {
		t.Errorf("--script with claude: exit %d %q", code, errs)
	}
}
