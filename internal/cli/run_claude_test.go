//go:build unix

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	runpkg "github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/runtime/claude"
	"github.com/fullsend-ai/fullsend/internal/runtime/claude/claudetest"
)

// These tests run `fullsend run --runtime claude` with the real Claude Code
// CLI (the pinned npm package .ci/run installs; FULLSEND_CLAUDE_BIN names
// it, else `claude` on PATH) in the real local sandbox, against a fake
// Anthropic Messages API on loopback declared as a host service. Nothing
// leaves the machine: the CLI only ever talks to the fake, and the
// sandbox reaches nothing but it.

// claudeBin finds the CLI or skips loudly.
func claudeBin(t *testing.T) string {
	t.Helper()
	needLocalSandbox(t)
	bin := os.Getenv("FULLSEND_CLAUDE_BIN")
	if bin == "" {
		p, err := exec.LookPath("claude")
		if err != nil {
			t.Skip("CLAUDE E2E SKIPPED: no Claude Code CLI (set FULLSEND_CLAUDE_BIN or put claude on PATH; .ci/run installs the pinned @anthropic-ai/claude-code)")
		}
		bin = p
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := claude.Locate(abs, os.Getenv); err != nil {
		t.Skipf("CLAUDE E2E SKIPPED: %v", err)
	}
	return abs
}

// claudeProject writes a fullsend dir whose config binds bin and admits
// the fake API as a host service, and a harness of the claude runtime.
func claudeProject(t *testing.T, bin, api string, harnessExtra string) (fsDir, harnessPath string) {
	t.Helper()
	fsDir = filepath.Join(t.TempDir(), ".fullsend")
	// The model key is an org secret: the sandbox sees a placeholder.
	keyFile := filepath.Join(t.TempDir(), "anthropic-key")
	if err := os.WriteFile(keyFile, []byte("sk-ant-fake-key-for-tests\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"config.yaml": "version: \"1\"\nsandbox:\n  host_services: [\"" + api + "\"]\nruntimes:\n  claude:\n    binary: " + bin + "\n    max_turns: 12\n" +
			"secrets:\n  - {name: ANTHROPIC_API_KEY, from_file: " + keyFile + ", hosts: [\"" + api + "\"]}\n",
		"agents/builder.md":          "---\nname: builder\ndescription: builds\n---\nDo the task; write the result JSON where you are told.\n",
		"schemas/result.schema.json": `{"type":"object","required":["status"],"properties":{"status":{"type":"string"}}}`,
		"harness/builder.yaml":       "agent: agents/builder.md\nruntime: claude\nenv:\n  sandbox:\n    ANTHROPIC_BASE_URL: http://" + api + "\n    DISABLE_TELEMETRY: \"1\"\n" + harnessExtra,
	}
	writeFiles(t, fsDir, files)
	return fsDir, filepath.Join(fsDir, "harness", "builder.yaml")
}

// runCLIEnv is runCLI with the process environment visible to the run.
func runCLIEnv(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: os.Getenv}
	code := run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

// lastAssistantTurns counts the assistant messages of the current
// iteration in a request (the CLI sends the whole conversation).
func assistantTurns(r *claudetest.Request) int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// TestRunClaudeE2E: a tool call that runs, one a PreToolUse hook denies,
// one whose output a PostToolUse hook blocks (the canary), an invalid
// result fixed in the validation loop's second iteration; every verdict
// lands in report.json, events.jsonl and the summary.
func TestRunClaudeE2E(t *testing.T) {
	bin := claudeBin(t)
	const result = "/sandbox/output/agent-result.json"
	api := claudetest.NewFunc(t, func(i int, r *claudetest.Request) claudetest.Turn {
		second := strings.Contains(r.Transcript(), "failed validation")
		switch n := assistantTurns(r); {
		case !second && n == 0:
			return claudetest.Bash("toolu_run", "echo tool-ran-in-sandbox > /sandbox/output/probe.txt && echo done")
		case !second && n == 1:
			// Harmless even if it ran: echo, no network.
			return claudetest.Bash("toolu_ssrf", "echo http://169.254.169.254/latest/meta-data/")
		case !second && n == 2:
			// Reads the canary decoy: the output is blocked.
			return claudetest.Bash("toolu_canary", "cat /sandbox/.aws/credentials")
		case !second && n == 3:
			return claudetest.Write("toolu_bad", result, `{"status": 1}`)
		case !second:
			return claudetest.Say("Wrote the result.")
		case second && n == 0:
			return claudetest.Write("toolu_fix", result, `{"status": "ok", "note": "fixed-result"}`)
		}
		return claudetest.Say("Fixed the result.")
	})
	fsDir, h := claudeProject(t, bin, api.Addr(), "validation_loop:\n  schema: schemas/result.schema.json\n  max_iterations: 2\ntimeout_minutes: 5\n")
	repo := inGitRepo(t)
	ws := t.TempDir()
	code, out, errs := runCLIEnv(t, "--fullsend-dir", fsDir, "--workspace", ws, "run", "--runtime", "claude", "--target-repo", repo, h)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	for _, want := range []string{"  succeeded\n", "runtime   claude\n", "result    valid (iteration 2 of 2)\n", "tool call(s) denied and ", "output(s) blocked by sandbox hooks"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	rep := onlyRun(t, ws)
	dir := rep.Dir()
	if len(api.Requests()) == 0 || rep.Runtime != "claude" || rep.Events.Iterations != 2 {
		t.Fatalf("requests %d, report %+v", len(api.Requests()), rep.Events)
	}
	// The key is an org secret: over plain http to the host service, the
	// API gets the real key for the sandbox's placeholder.
	if k := api.Requests()[0].Header.Get("X-Api-Key"); k != "sk-ant-fake-key-for-tests" {
		t.Errorf("the API got x-api-key %q", k)
	}
	// The tool call that ran: its file is in the output, its result in the events.
	if b, err := os.ReadFile(filepath.Join(dir, "output", "probe.txt")); err != nil || string(b) != "tool-ran-in-sandbox\n" {
		t.Errorf("probe.txt: %q %v", b, err)
	}
	verdicts := map[string]runpkg.FindingRecord{}
	for _, f := range rep.Findings {
		if strings.HasPrefix(f.Phase, "agent[") {
			verdicts[f.Scanner] = f
		}
	}
	if f, ok := verdicts["ssrf-pretool"]; !ok || f.Rule != "ssrf.metadata" || f.Path != "Bash" || !f.Blocked || f.Phase != "agent[1]" {
		t.Errorf("no ssrf denial finding: %+v", rep.Findings)
	}
	if f, ok := verdicts["canary-posttool"]; !ok || !strings.HasPrefix(f.Rule, "canary") || f.Severity != "critical" || !strings.Contains(f.Message, "blocked the output of Bash") {
		t.Errorf("no canary finding: %+v", rep.Findings)
	}
	var nVerdict int
	for _, e := range jsonLines(t, filepath.Join(dir, runpkg.EventsFile)) {
		if e["kind"] == "verdict" {
			nVerdict++
		}
	}
	if nVerdict < 2 {
		t.Errorf("events.jsonl has %d verdict events, want >= 2", nVerdict)
	}
	// The model saw the denial as the tool's error.
	var sawDenial bool
	for _, r := range api.Requests() {
		if strings.Contains(r.Transcript(), "Bash blocked") && strings.Contains(r.Transcript(), "cloud metadata") {
			sawDenial = true
		}
	}
	if !sawDenial {
		t.Error("the model never saw the hook's denial")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "output", "agent-result.json")); err != nil || !strings.Contains(string(b), "fixed-result") {
		t.Errorf("result: %q %v", b, err)
	}
}

// TestRunClaudeTimeout: a model slower than timeout_minutes: the run stops
// at the deadline, reports timeout (exit 1, one line) and tears down
// while the model request is still open (the proxy cuts it).
func TestRunClaudeTimeout(t *testing.T) {
	bin := claudeBin(t)
	api := claudetest.NewFunc(t, func(int, *claudetest.Request) claudetest.Turn { return claudetest.Turn{Hold: true} })
	fsDir, h := claudeProject(t, bin, api.Addr(), "timeout_minutes: 1\n")
	repo := inGitRepo(t)
	ws := t.TempDir()
	start := time.Now()
	code, out, errs := runCLIEnv(t, "--fullsend-dir", fsDir, "--workspace", ws, "run", "--json", "--target-repo", repo, h)
	took := time.Since(start)
	if code != 1 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	var j runJSON
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if j.Status != runpkg.StatusTimeout || j.StopReason != "timeout" || j.Error != "timeout: the agent did not finish within timeout_minutes (1m0s)" {
		t.Errorf("status %q stop %q error %q", j.Status, j.StopReason, j.Error)
	}
	if line := oneStderrLine(t, errs); !strings.Contains(line, "timeout: the agent did not finish within timeout_minutes (1m0s)") {
		t.Errorf("stderr line %q", line)
	}
	if len(api.Requests()) == 0 {
		t.Fatal("the CLI never reached the fake API")
	}
	rep := onlyRun(t, ws)
	agent, teardown := 0.0, 0.0
	for _, p := range rep.Phases {
		switch {
		case strings.HasPrefix(p.Name, "agent["):
			agent += p.DurationMS
		case p.Name == "teardown":
			teardown = p.DurationMS
		}
	}
	// Figures for the report; the bound is a hang guard (before the fix
	// the teardown waited on the held model request until it ended).
	t.Logf("timeout run: %s in all; agent phase %.0f ms for a 60000 ms deadline, teardown %.0f ms", took, agent, teardown)
	if took > 60*time.Second+45*time.Second {
		t.Errorf("the run took %s with timeout_minutes: 1", took)
	}
}

// TestRunClaudeFlags: the claude flags, --max-turns and --model shared
// with the native runtime, the refusals for the wrong runtime, and a CLI
// that cannot be found: one line, before anything runs (no run directory).
func TestRunClaudeFlags(t *testing.T) {
	h := filepath.Join("..", "..", "examples", "hello", "harness.yaml")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--runtime", "script", "--effort", "high"}, 2, `--effort: only for the claude runtime (runtime is "script")`},
		{[]string{"--runtime", "native", "--permission-mode", "plan", "--claude-binary", "/x/claude"}, 2, `--claude-binary, --permission-mode: only for the claude runtime (runtime is "native")`},
		{[]string{"--runtime", "claude", "--model-api", "openai", "--max-turns", "3"}, 2, `--model-api: only for the native runtime (runtime is "claude")`},
		{[]string{"--runtime", "claude", "--permission-mode", "yolo"}, 2, `--permission-mode: "yolo" is not a permission mode`},
		{[]string{"--runtime", "claude", "--effort", "huge"}, 2, `--effort: "huge" is not an effort level`},
		{[]string{"--runtime", "claude", "--claude-binary", "bin/claude"}, 2, `--claude-binary: "bin/claude": want an absolute path`},
		{[]string{"--runtime", "claude", "--max-turns", "3", "--model", "m", "--claude-binary", "/nonexistent/claude"}, 1,
			`--claude-binary: Claude Code CLI not found: /nonexistent/claude: lstat /nonexistent`},
		{[]string{"--runtime", "claude", "--claude-binary", "claude-cli-not-installed"}, 1,
			`--claude-binary: Claude Code CLI not found: looked for "claude-cli-not-installed" in PATH`},
	} {
		ws := t.TempDir()
		code, _, errs := runCLIEnv(t, append(append([]string{"--workspace", ws, "run", "--target-repo", "none"}, c.args...), h)...)
		if code != c.code || !strings.Contains(oneStderrLine(t, errs), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %d and %q", c.args, code, errs, c.code, c.want)
		}
		ents, _ := os.ReadDir(filepath.Join(ws, ".fullsend", "runs"))
		for _, e := range ents {
			if e.IsDir() {
				t.Errorf("%v: run directory %s created", c.args, e.Name())
			}
		}
	}
}

// TestCaptureClaudeRecordings refreshes the claude runtime's recordings
// (internal/runtime/claude/testdata/real-<version>/) from the real CLI:
// FULLSEND_CLAUDE_CAPTURE=DIR go test ./internal/cli -run TestCaptureClaudeRecordings
// writes one stream per scenario into DIR. Skipped otherwise.
func TestCaptureClaudeRecordings(t *testing.T) {
	dest := os.Getenv("FULLSEND_CLAUDE_CAPTURE")
	if dest == "" {
		t.Skip("set FULLSEND_CLAUDE_CAPTURE=DIR to capture recordings")
	}
	bin := claudeBin(t)
	scenarios := []struct {
		name  string
		extra string
		turn  func(n int, r *claudetest.Request) claudetest.Turn
	}{
		{"tool_use", "", func(n int, r *claudetest.Request) claudetest.Turn {
			switch n {
			case 0:
				return claudetest.Turn{Text: "Reading the README first.", Tools: []claudetest.ToolUse{{ID: "toolu_read", Name: "Read", Input: map[string]string{"file_path": "/sandbox/workspace/target/README.md"}}}, InputTokens: 1200, OutputTokens: 35}
			case 1:
				return claudetest.Turn{Tools: []claudetest.ToolUse{{ID: "toolu_bash", Name: "Bash", Input: map[string]string{"command": "ls -a && echo ok", "description": "list files"}}}, InputTokens: 1300, OutputTokens: 28}
			case 2:
				return claudetest.Turn{Tools: []claudetest.ToolUse{{ID: "toolu_write", Name: "Write", Input: map[string]string{"file_path": "/sandbox/output/agent-result.json", "content": `{"status":"ok"}`}}}, InputTokens: 1400, OutputTokens: 40}
			}
			return claudetest.Turn{Text: "Done: the result is written.", InputTokens: 1500, OutputTokens: 12}
		}},
		{"hook_denied", "", func(n int, r *claudetest.Request) claudetest.Turn {
			switch n {
			case 0:
				return claudetest.Bash("toolu_ssrf", "echo http://169.254.169.254/latest/meta-data/")
			case 1:
				return claudetest.Bash("toolu_canary", "cat /sandbox/.aws/credentials")
			}
			return claudetest.Say("Both calls were blocked; stopping.")
		}},
		{"max_turns", "", func(n int, r *claudetest.Request) claudetest.Turn {
			return claudetest.Bash("toolu_loop"+string(rune('a'+n)), "echo again")
		}},
		{"api_error", "    CLAUDE_CODE_MAX_RETRIES: \"1\"\n", func(n int, r *claudetest.Request) claudetest.Turn {
			return claudetest.Fail(500, "api_error", "upstream model crashed")
		}},
		{"api_retry", "", func(n int, r *claudetest.Request) claudetest.Turn {
			if len(r.Messages) > 0 && n == 0 {
				return claudetest.Fail(529, "overloaded_error", "Overloaded")
			}
			return claudetest.Say("Answered after a retry.")
		}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			api := claudetest.NewFunc(t, func(i int, r *claudetest.Request) claudetest.Turn { return sc.turn(i, r) })
			fsDir, h := claudeProject(t, bin, api.Addr(), sc.extra+"timeout_minutes: 5\n")
			if sc.name == "max_turns" {
				cfg := filepath.Join(fsDir, "config.yaml")
				b, _ := os.ReadFile(cfg)
				os.WriteFile(cfg, bytes.Replace(b, []byte("max_turns: 12"), []byte("max_turns: 2"), 1), 0o644)
			}
			repo := inGitRepo(t)
			ws := t.TempDir()
			code, out, errs := runCLIEnv(t, "--fullsend-dir", fsDir, "--workspace", ws, "run", "--target-repo", repo, h)
			t.Logf("%s: exit %d\n%s\n%s", sc.name, code, out, errs)
			b, err := os.ReadFile(filepath.Join(onlyRun(t, ws).Dir(), runpkg.TranscriptFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(dest, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dest, sc.name+".jsonl"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}
