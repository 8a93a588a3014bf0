package claude

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/hooks"
	"github.com/fullsend-ai/fullsend/internal/runtime"
)

// restrictedAgent is an agent definition restricting its tools the way the
// fullsend-agents triage and prioritize agents do.
const restrictedAgent = `---
name: code
description: Inspect an issue.
# curl: needed on GitLab.
tools: Bash(gh,curl,jq), Read, Write
model: opus
---
Triage the issue.
`

// wiredCommands maps hook name → full command line of the settings file p.
func wiredCommands(t *testing.T, f *fixture, p string) map[string]string {
	t.Helper()
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string } `json:"hooks"`
		} `json:"hooks"`
	}
	must(t, json.Unmarshal(f.s.ReadFile(t, p), &doc))
	out := map[string]string{}
	for _, groups := range doc.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				rest := strings.TrimPrefix(h.Command, runtime.FullsendBinary+" hook "+hooks.EachCommand+" ")
				names, _, _ := strings.Cut(rest, " --")
				for _, name := range strings.Fields(names) {
					out[name] = h.Command
				}
			}
		}
	}
	return out
}

// bootRestricted writes restrictedAgent as f's agent and runs Bootstrap and
// BootstrapHooks.
func bootRestricted(t *testing.T, f *fixture) {
	t.Helper()
	ctx := context.Background()
	must(t, os.WriteFile(f.boot.AgentFile, []byte(restrictedAgent), 0o644))
	must(t, f.rt.Bootstrap(ctx, f.s, f.boot))
	must(t, f.rt.BootstrapHooks(ctx, f.s, f.boot))
}

// Issue 12 item 7: an agent whose frontmatter restricts tools gets the
// allowlist hook, with the list on the hook's command line (not in the
// environment); an unrestricted agent does not; the harness key
// tool_allowlist: false switches it off.
func TestAllowlistHookWiredFromAgentTools(t *testing.T) {
	ctx := context.Background()
	f := setup(t)
	bootRestricted(t, f)
	want := runtime.FullsendBinary + " hook each bash-risk-pretool ssrf-pretool tool-allowlist-pretool canary-pretool --allow 'Bash(gh,curl,jq),Read,Write'"
	for _, p := range []string{SettingsPath, UserSettings} {
		cmds := wiredCommands(t, f, p)
		if cmds[hooks.ToolAllowlistHook] != want {
			t.Errorf("%s: allowlist hook %q, want %q", p, cmds[hooks.ToolAllowlistHook], want)
		}
		if cmds["ssrf-pretool"] == "" || cmds["canary-pretool"] == "" {
			t.Errorf("%s: default hooks missing: %v", p, cmds)
		}
	}
	if man := string(f.s.ReadFile(t, HooksDir+"/manifest.json")); !strings.Contains(man, `"tool_allowlists": [`) || !strings.Contains(man, `"Bash(gh,curl,jq),Read,Write"`) {
		t.Errorf("manifest does not record the allowlist:\n%s", man)
	}
	if _, ok := f.rt.Env(f.boot)[hooks.EnvToolAllowlist]; ok {
		t.Error("the allowlist is exported in the environment the agent can influence")
	}

	// Unrestricted agent: no allowlist hook.
	g := setup(t)
	must(t, g.rt.BootstrapHooks(ctx, g.s, g.boot))
	if c, ok := wiredCommands(t, g, SettingsPath)[hooks.ToolAllowlistHook]; ok {
		t.Errorf("unrestricted agent got the allowlist hook: %q", c)
	}

	// The harness disables the hook by its sandbox_hooks key.
	h := setup(t)
	h.boot.DisabledHooks = []string{"tool_allowlist"}
	bootRestricted(t, h)
	cmds := wiredCommands(t, h, SettingsPath)
	if _, ok := cmds[hooks.ToolAllowlistHook]; ok || cmds["ssrf-pretool"] == "" {
		t.Errorf("tool_allowlist: false: wired %v", cmds)
	}
}

// A tools: line that does not parse fails the run at its line, before
// anything is uploaded; it never means "every tool".
func TestAllowlistBadToolsFailsClosed(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ tools, want string }{
		{"tools: Bash(gh", "code.md:3: tools: invalid value: tool allowlist \"Bash(gh\": unbalanced '('"},
		{"tools: Read(./src)", "only Bash takes a command list"},
		{"tools: Bash(gh;rm)", "must be a single program name"},
		{"tools: \"\"", "code.md:3: tools: invalid value: empty"},
		{"tools:", "code.md:3: tools: invalid value: empty"},
		{"tools: [Read, 3]", "entry 1 must be a non-empty string"},
	} {
		f := setup(t)
		must(t, os.WriteFile(f.boot.AgentFile, []byte("---\nname: code\n"+c.tools+"\n---\nbody\n"), 0o644))
		err := f.rt.Bootstrap(ctx, f.s, f.boot)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: Bootstrap = %v, want %q", c.tools, err, c.want)
		}
		if _, statErr := os.Stat(f.s.HostPath(runtime.ClaudeConfigDir + "/agents/code.md")); statErr == nil {
			t.Errorf("%s: agent uploaded although its tools: is broken", c.tools)
		}
		if err := f.rt.BootstrapHooks(ctx, f.s, f.boot); err == nil {
			t.Errorf("%s: BootstrapHooks accepted it", c.tools)
		}
	}
}

// The settings files are in the writable sandbox: every iteration starts
// from what BootstrapHooks wrote, and the repo's own settings are checked
// again.
func TestRunRestoresHookSettings(t *testing.T) {
	ctx := context.Background()
	f := setup(t)
	bootRestricted(t, f)
	orig := string(f.s.ReadFile(t, SettingsPath))
	// The agent of an earlier iteration emptied both files.
	f.s.WriteFile(t, SettingsPath, []byte(`{"hooks":{}}`))
	f.s.WriteFile(t, UserSettings, []byte(`{"hooks":{}}`))
	if _, err := f.rt.Run(ctx, f.s, f.input(rec("tool_use"), nil, map[string]string{"FAKE_CLAUDE_RESULT": `{"status":"ok"}`})); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{SettingsPath, UserSettings} {
		if got := string(f.s.ReadFile(t, p)); got != orig {
			t.Errorf("%s not restored before the iteration:\n%s", p, got)
		}
	}
	// It then switched hooks off in the repo: the next iteration refuses.
	f.s.WriteFile(t, repo+"/.claude/settings.local.json", []byte(`{"disableAllHooks": true}`))
	in := f.input(rec("tool_use"), nil, nil)
	in.Env["FAKE_CLAUDE_DIR"] = filepath.Join(t.TempDir(), "second")
	if _, err := f.rt.Run(ctx, f.s, in); err == nil || !strings.Contains(err.Error(), "disableAllHooks") {
		t.Fatalf("Run with hooks disabled by the repo: %v", err)
	}
	if _, err := os.Stat(in.Env["FAKE_CLAUDE_DIR"]); err == nil {
		t.Error("claude started although the repo disabled hooks")
	}
}
