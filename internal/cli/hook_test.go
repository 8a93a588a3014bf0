package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runHook(t *testing.T, stdin []byte, getenv map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: bytes.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return getenv[k] }}
	code := run(context.Background(), env, append([]string{"hook"}, args...))
	return code, out.String(), errb.String()
}

func hookPayload(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "hooks", "testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHookCommandDeny(t *testing.T) {
	code, stdout, stderr := runHook(t, hookPayload(t, "pre_bash_metadata"), nil, "ssrf-pretool")
	if code != 0 || stderr != "" {
		t.Fatalf("code %d stderr %q", code, stderr)
	}
	var resp struct {
		HookSpecificOutput struct {
			HookEventName, PermissionDecision, PermissionDecisionReason string
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(stdout), &resp); err != nil {
		t.Fatalf("stdout %q: %v", stdout, err)
	}
	h := resp.HookSpecificOutput
	if h.HookEventName != "PreToolUse" || h.PermissionDecision != "deny" || !strings.Contains(h.PermissionDecisionReason, "169.254.169.254") {
		t.Fatalf("response %+v", h)
	}
}

func TestHookCommandAllowAndPost(t *testing.T) {
	code, stdout, stderr := runHook(t, hookPayload(t, "pre_bash_public_ok"), nil, "ssrf-pretool")
	if code != 0 || stdout != "" || stderr != "" {
		t.Fatalf("allow: code %d stdout %q stderr %q", code, stdout, stderr)
	}
	code, stdout, _ = runHook(t, hookPayload(t, "post_webfetch_injection"), nil, "context-suppress-posttool")
	if code != 0 || !strings.Contains(stdout, `"decision":"block"`) {
		t.Fatalf("post block: code %d stdout %q", code, stdout)
	}
	code, stdout, _ = runHook(t, hookPayload(t, "pre_write_file"), map[string]string{"FULLSEND_TOOL_ALLOWLIST": "Read"}, "tool-allowlist-pretool")
	if code != 0 || !strings.Contains(stdout, `"permissionDecision":"deny"`) {
		t.Fatalf("allowlist from env: code %d stdout %q", code, stdout)
	}
}

func TestHookCommandFailsClosed(t *testing.T) {
	for _, c := range []struct {
		name  string
		stdin []byte
		args  []string
		want  string
	}{
		{"garbage payload", []byte("{"), []string{"ssrf-pretool"}, "hook ssrf-pretool: decoding payload"},
		{"wrong event", hookPayload(t, "post_bash_ls"), []string{"canary-pretool"}, `payload is for event "PostToolUse"`},
		{"unknown hook", nil, []string{"no-such-hook"}, `hook "no-such-hook": unknown (known: bash-risk-pretool,`},
		{"no hook", nil, nil, "missing hook name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runHook(t, c.stdin, nil, c.args...)
			if code != hookBlockCode || stdout != "" {
				t.Fatalf("code %d stdout %q, want exit 2 and no stdout", code, stdout)
			}
			if line := oneStderrLine(t, stderr); !strings.Contains(line, c.want) {
				t.Fatalf("stderr %q, want %q", line, c.want)
			}
		})
	}
}

// The allowlist travels on the hook's command line (settings.json); the
// environment cannot loosen it, and a broken or empty list blocks.
func TestHookAllowFlag(t *testing.T) {
	tamper := map[string]string{"FULLSEND_TOOL_ALLOWLIST": ""}
	code, stdout, stderr := runHook(t, hookPayload(t, "pre_bash_gh"), tamper, "tool-allowlist-pretool", "--allow", "Bash(gh,jq),Read")
	if code != 0 || stdout != "" || stderr != "" {
		t.Fatalf("gh | jq under Bash(gh,jq): code %d stdout %q stderr %q", code, stdout, stderr)
	}
	code, stdout, _ = runHook(t, hookPayload(t, "pre_bash_gh"), map[string]string{"FULLSEND_TOOL_ALLOWLIST": "Bash"}, "tool-allowlist-pretool", "--allow", "Bash(gh)")
	if code != 0 || !strings.Contains(stdout, `"permissionDecision":"deny"`) || !strings.Contains(stdout, `Bash command \"jq\" is not allowed`) {
		t.Fatalf("jq under --allow Bash(gh) with a wider variable: code %d stdout %q", code, stdout)
	}
	code, stdout, _ = runHook(t, hookPayload(t, "pre_bash_gh"), nil, "tool-allowlist-pretool", "--allow", "Bash(gh,jq)", "--allow", "Bash(gh)")
	if code != 0 || !strings.Contains(stdout, `"permissionDecision":"deny"`) {
		t.Fatalf("two lists, the second refuses jq: code %d stdout %q", code, stdout)
	}
	for _, args := range [][]string{{"--allow", ""}, {"--allow", "Bash(gh"}, {"--allow=Read", "--nope"}} {
		code, stdout, stderr := runHook(t, hookPayload(t, "pre_bash_gh"), nil, append([]string{"tool-allowlist-pretool"}, args...)...)
		if code != hookBlockCode || stdout != "" || oneStderrLine(t, stderr) == "" {
			t.Errorf("%q: code %d stdout %q stderr %q, want exit 2 (Claude Code blocks)", args, code, stdout, stderr)
		}
	}
}

// `fullsend hook each` runs several hooks of one event in one process, the
// tool allowlist from --allow replacing the environment's, and fails closed.
func TestHookEachCommand(t *testing.T) {
	pre := []string{"each", "bash-risk-pretool", "ssrf-pretool", "tool-allowlist-pretool", "canary-pretool"}
	code, stdout, stderr := runHook(t, hookPayload(t, "pre_bash_metadata"), nil, append(pre, "--allow", "Bash")...)
	if code != 0 || !strings.Contains(stdout, `"permissionDecision":"deny"`) || !strings.Contains(stdout, "ssrf-pretool") || stderr != "" {
		t.Fatalf("metadata: code %d stdout %q stderr %q", code, stdout, stderr)
	}
	code, stdout, _ = runHook(t, hookPayload(t, "pre_bash_gh"), map[string]string{"FULLSEND_TOOL_ALLOWLIST": "Bash"}, append(pre, "--allow", "Bash(jq)")...)
	if code != 0 || !strings.Contains(stdout, `"permissionDecision":"deny"`) || !strings.Contains(stdout, "tool-allowlist-pretool") {
		t.Fatalf("gh under --allow Bash(jq): code %d stdout %q", code, stdout)
	}
	code, stdout, stderr = runHook(t, hookPayload(t, "pre_bash_gh"), nil, append(pre, "--allow", "Bash(gh,jq)")...)
	if code != 0 || stdout != "" || stderr != "" {
		t.Fatalf("gh allowed: code %d stdout %q stderr %q", code, stdout, stderr)
	}
	code, stdout, _ = runHook(t, hookPayload(t, "post_webfetch_injection"), nil, "each", "canary-posttool", "secret-redact-posttool", "unicode-posttool", "context-suppress-posttool")
	if code != 0 || !strings.Contains(stdout, `"decision":"block"`) {
		t.Fatalf("post: code %d stdout %q", code, stdout)
	}
	for _, args := range [][]string{
		{"each"},
		{"each", "ssrf-pretool", "--allow", "Bash"},
		{"each", "ssrf-pretool", "canary-posttool"},
		{"each", "nope"},
		{"each", "tool-allowlist-pretool", "--allow", "Bash(gh"},
	} {
		code, stdout, stderr := runHook(t, hookPayload(t, "pre_bash_gh"), nil, args...)
		if code != hookBlockCode || stdout != "" || stderr == "" {
			t.Errorf("%q: code %d stdout %q stderr %q, want exit %d with a reason", args, code, stdout, stderr, hookBlockCode)
		}
	}
}
