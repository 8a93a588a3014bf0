package claude_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/cli/clitest"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/claude"
	"github.com/fullsend-ai/fullsend/internal/runtime/runtimetest"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// envCLI makes a re-executed test binary act as the fullsend CLI, so the
// hook commands the runtime writes into settings.json can be run as they
// are. Inside the local sandbox the test binary is /usr/local/bin/fullsend.
const envCLI = "FULLSEND_CLAUDETEST_CLI"

func TestMain(m *testing.M) {
	clitest.ActAsCLI(envCLI)
	os.Exit(m.Run())
}

const triageAgent = "---\nname: triage\ndescription: Inspect an issue.\ntools: Bash(gh,curl,jq), Skill\nmodel: opus\n---\nTriage the issue.\n"

// preToolHooks returns the command lines of the PreToolUse hooks
// settings.json wires for tool (matchers as Claude Code reads them: "*"
// or a regular expression over the tool name).
func preToolHooks(t *testing.T, settings []byte, tool string) []string {
	t.Helper()
	var doc struct {
		Hooks map[string][]struct {
			Matcher string                     `json:"matcher"`
			Hooks   []struct{ Command string } `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(settings, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range doc.Hooks["PreToolUse"] {
		if g.Matcher != "*" && !regexp.MustCompile("^(?:"+g.Matcher+")$").MatchString(tool) {
			continue
		}
		for _, h := range g.Hooks {
			out = append(out, h.Command)
		}
	}
	return out
}

// bootTriage runs Bootstrap and BootstrapHooks of the claude runtime in s
// for triageAgent, whose repository is /sandbox/workspace/demo.
func bootTriage(t *testing.T, s sandbox.Session) {
	t.Helper()
	ctx := context.Background()
	agent := filepath.Join(t.TempDir(), "triage.md")
	if err := os.WriteFile(agent, []byte(triageAgent), 0o644); err != nil {
		t.Fatal(err)
	}
	rt := claude.New()
	boot := runtime.BootstrapInput{AgentName: "triage", AgentFile: agent, RepoDir: "/sandbox/workspace/demo"}
	if err := rt.Bootstrap(ctx, s, boot); err != nil {
		t.Fatal(err)
	}
	if err := rt.BootstrapHooks(ctx, s, boot); err != nil {
		t.Fatal(err)
	}
}

// allowlistHooks keeps the hook commands that run the tool allowlist hook.
func allowlistHooks(cmds []string) []string {
	var out []string
	for _, c := range cmds {
		if strings.Contains(c, " tool-allowlist-pretool ") {
			out = append(out, c)
		}
	}
	return out
}

func bashPayload(command string) []byte {
	b, _ := json.Marshal(map[string]any{
		"session_id": "s1", "transcript_path": "/sandbox/claude-config/projects/x.jsonl", "cwd": "/sandbox/workspace/demo",
		"permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse", "tool_name": "Bash",
		"tool_input": map[string]any{"command": command}, "tool_use_id": "toolu_1",
	})
	return b
}

// decision runs every PreToolUse hook command for a Bash call as Claude
// Code does (sh -c, payload on stdin) and returns "deny: reason" for the
// first hook that denies (JSON decision or exit 2), "" when all allow.
func decision(t *testing.T, s sandbox.Session, cmds []string, payload []byte, env map[string]string) string {
	t.Helper()
	for _, c := range cmds {
		res, err := s.Exec(context.Background(), sandbox.ExecRequest{Args: []string{"sh", "-c", c}, Stdin: payload, Env: env})
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		switch res.ExitCode {
		case 0:
		case 2:
			return "deny: " + strings.TrimSpace(string(res.Stderr))
		default:
			t.Fatalf("%s: exit %d (Claude Code would not block): %s", c, res.ExitCode, res.Stderr)
		}
		if out := strings.TrimSpace(string(res.Stdout)); out != "" {
			var resp struct {
				HookSpecificOutput struct{ PermissionDecision, PermissionDecisionReason string } `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal([]byte(out), &resp); err != nil {
				t.Fatalf("%s: answer %q: %v", c, out, err)
			}
			if resp.HookSpecificOutput.PermissionDecision == "deny" {
				return "deny: " + resp.HookSpecificOutput.PermissionDecisionReason
			}
		}
	}
	return ""
}

// Issue 12 item 7: under `tools: Bash(gh,curl,jq)` the hooks the runtime
// wires deny `ls /` and allow `gh issue list`, and no environment variable
// the agent could set changes that.
func TestAllowlistHookRun(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := runtimetest.NewSession(t)
	s.Mount(runtime.FullsendBinary, exe)
	s.WriteFile(t, "/sandbox/workspace/demo/README.md", []byte("# Demo\n"))
	bootTriage(t, s)
	cmds := preToolHooks(t, s.ReadFile(t, claude.SettingsPath), "Bash")
	// One process per event runs every PreToolUse hook.
	if len(cmds) != 1 || !strings.Contains(cmds[0], " hook each bash-risk-pretool ssrf-pretool tool-allowlist-pretool canary-pretool --allow ") {
		t.Fatalf("PreToolUse hooks for Bash: %q", cmds)
	}
	// Every hook wired for Bash: ls / is denied by the allowlist, gh passes
	// them all.
	env := map[string]string{envCLI: "1"}
	if got := decision(t, s, cmds, bashPayload("ls /"), env); !strings.HasPrefix(got, "deny: ") || !strings.Contains(got, `Bash command "ls" is not allowed: this agent may run only gh, curl, jq`) {
		t.Errorf("ls / → %q, want the allowlist's denial", got)
	}
	if got := decision(t, s, cmds, bashPayload("gh issue list --json number | jq length"), env); got != "" {
		t.Errorf("gh issue list → %q, want allowed", got)
	}
	// What a tampered .env.d could export: an empty list (read as "no
	// restriction") or a wider one. The command line wins.
	allow := allowlistHooks(cmds)
	for _, v := range []string{"", "Bash"} {
		env := map[string]string{envCLI: "1", "FULLSEND_TOOL_ALLOWLIST": v}
		if got := decision(t, s, allow, bashPayload("ls /"), env); !strings.Contains(got, `Bash command "ls" is not allowed`) {
			t.Errorf("FULLSEND_TOOL_ALLOWLIST=%q: ls / → %q, want denied", v, got)
		}
	}
	// A tool the agent does not list at all.
	payload := []byte(`{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/sandbox/workspace/demo/x","content":"x"},"tool_use_id":"t2"}`)
	if got := decision(t, s, allow, payload, map[string]string{envCLI: "1"}); !strings.Contains(got, `tool "Write" is not in this agent's tool allowlist`) {
		t.Errorf("Write → %q", got)
	}
}

// The same hook command, run by the sandbox shell against the real
// /usr/local/bin/fullsend of the local backend.
func TestRealSandboxAllowlistHook(t *testing.T) {
	s := runtimetest.LocalSession(t, sandbox.Spec{WorkDir: runtime.WorkspaceDir})
	ctx := context.Background()
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte("# Demo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Upload(ctx, repo, "/sandbox/workspace/demo"); err != nil {
		t.Fatal(err)
	}
	bootTriage(t, s)
	res, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"cat", claude.SettingsPath}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("reading settings: %v %s", err, res.Stderr)
	}
	// The PreToolUse command (it runs the allowlist hook): each run is a
	// process start.
	cmds := allowlistHooks(preToolHooks(t, res.Stdout, "Bash"))
	if len(cmds) != 1 {
		t.Fatalf("allowlist hook commands %q", cmds)
	}
	if got := decision(t, s, cmds, bashPayload("ls /"), nil); !strings.Contains(got, `Bash command "ls" is not allowed`) {
		t.Errorf("ls / → %q", got)
	}
	if got := decision(t, s, cmds, bashPayload("gh issue list"), nil); got != "" {
		t.Errorf("gh issue list → %q", got)
	}
}
