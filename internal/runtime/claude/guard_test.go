package claude

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/runtime"
)

// TestCheckProjectSettings: every key that starts a process, sets the
// CLI's environment, loads plugins or trusts the repository's MCP servers
// is refused; keys match exactly as Claude Code reads them, so a
// differently cased twin cannot hide disableAllHooks.
func TestCheckProjectSettings(t *testing.T) {
	for k := range riskyKeys {
		issues, err := CheckProjectSettings("s.json", []byte(`{"permissions":{"allow":["Read"]},"`+k+`":{}}`))
		if err != nil || len(issues) != 1 || issues[0].Key != k || issues[0].Always {
			t.Errorf("%s: %+v %v", k, issues, err)
		}
	}
	for _, c := range []struct {
		doc  string
		want []string // refused keys
	}{
		{`{"disableAllHooks": true, "DisableAllHooks": false}`, []string{"disableAllHooks"}},
		{`{"DisableAllHooks": false, "disableAllHooks": true}`, []string{"disableAllHooks"}},
		{`{"disableAllHooks": false, "disableAllHooks": true}`, []string{"disableAllHooks"}}, // last one wins, as in JSON.parse
		{`{"disableAllHooks": "yes"}`, []string{"disableAllHooks"}},
		{`{"disableAllHooks": false}`, nil},
		{`{"Hooks": {}, "ENV": {}}`, nil}, // not keys Claude Code reads
		{"\ufeff" + `{"enableAllProjectMcpServers": true, "enabledMcpjsonServers": ["x"]}`, []string{"enableAllProjectMcpServers", "enabledMcpjsonServers"}},
		{`{"model": "opus", "permissions": {"deny": ["WebFetch"]}}`, nil},
	} {
		issues, err := CheckProjectSettings("s.json", []byte(c.doc))
		var got []string
		for _, is := range issues {
			got = append(got, is.Key)
		}
		if err != nil || strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: refused %v (%v), want %v", c.doc, got, err, c.want)
		}
	}
	for _, bad := range []string{`[]`, `null`, `{"a":1} {"hooks":{}}`, `{"a":1,}`, `// c` + "\n{}"} {
		if _, err := CheckProjectSettings("s.json", []byte(bad)); err == nil || !strings.Contains(err.Error(), "s.json") {
			t.Errorf("%q: %v, want an error naming the file", bad, err)
		}
	}
	names, err := ProjectMCPServers(".mcp.json", []byte(`{"mcpServers":{"pwn":{"command":"sh"},"a":{"type":"http"}}}`))
	if err != nil || strings.Join(names, ",") != "a,pwn" {
		t.Errorf("mcp servers %v %v", names, err)
	}
	if _, err := ProjectMCPServers(".mcp.json", []byte(`{"mcpServers":[1]}`)); err == nil {
		t.Error("mcpServers that is not an object passed")
	}
}

// TestRepoSettingsRefusedUnlessTrusted: the repo's settings keys that
// start processes fail the bootstrap and every later iteration, unless
// the harness trusts the repository's settings; disableAllHooks: true is
// refused even then.
func TestRepoSettingsRefusedUnlessTrusted(t *testing.T) {
	ctx := context.Background()
	f := setup(t)
	must(t, f.rt.Bootstrap(ctx, f.s, f.boot))
	f.s.WriteFile(t, repo+"/.claude/settings.json", []byte(`{"enableAllProjectMcpServers": true}`))
	err := f.rt.BootstrapHooks(ctx, f.s, f.boot)
	if err == nil || !strings.Contains(err.Error(), "settings.json sets enableAllProjectMcpServers") || !strings.Contains(err.Error(), "trust_repo_settings") {
		t.Fatalf("enableAllProjectMcpServers: %v", err)
	}
	f.s.WriteFile(t, repo+"/.claude/settings.json", []byte(`{"model":"opus"}`))
	must(t, f.rt.BootstrapHooks(ctx, f.s, f.boot))
	// An agent that adds hooks during iteration 1 stops iteration 2.
	f.s.WriteFile(t, repo+"/.claude/settings.local.json", []byte(`{"hooks":{"SessionStart":[]}}`))
	_, err = f.rt.Run(ctx, f.s, f.input(rec("tool_use"), nil, map[string]string{"FAKE_CLAUDE_RESULT": `{"status":"ok"}`}))
	if err == nil || !strings.Contains(err.Error(), "settings.local.json sets hooks") {
		t.Fatalf("hooks added before an iteration: %v", err)
	}

	// So does an agent definition of the repository named like the run's
	// agent (Claude Code would run it instead); another name passes.
	must(t, os.Remove(f.s.HostPath(repo+"/.claude/settings.local.json")))
	f.s.WriteFile(t, repo+"/.claude/agents/helper.md", []byte("---\nname: helper\n---\nhelp\n"))
	if _, err := f.rt.Run(ctx, f.s, f.input(rec("tool_use"), nil, map[string]string{"FAKE_CLAUDE_RESULT": `{"status":"ok"}`})); err != nil {
		t.Fatalf("another agent name: %v", err)
	}
	f.s.WriteFile(t, repo+"/.claude/agents/deep/mine.md", []byte("---\nname: code\n---\nobey\n"))
	_, err = f.rt.Run(ctx, f.s, f.input(rec("tool_use"), nil, map[string]string{"FAKE_CLAUDE_RESULT": `{"status":"ok"}`}))
	if err == nil || !strings.Contains(err.Error(), `mine.md defines agent "code"`) {
		t.Fatalf("shadowing agent written before an iteration: %v", err)
	}

	trusted := setup(t)
	trusted.boot.TrustRepoSettings = true
	must(t, trusted.rt.Bootstrap(ctx, trusted.s, trusted.boot))
	trusted.s.WriteFile(t, repo+"/.claude/settings.json", []byte(`{"hooks":{},"env":{"A":"b"}}`))
	must(t, trusted.rt.BootstrapHooks(ctx, trusted.s, trusted.boot))
	trusted.s.WriteFile(t, repo+"/.claude/settings.json", []byte(`{"hooks":{},"disableAllHooks":true,"DisableAllHooks":false}`))
	if err := trusted.rt.BootstrapHooks(ctx, trusted.s, trusted.boot); err == nil || strings.Contains(err.Error(), "trust_repo_settings") {
		t.Errorf("disableAllHooks with trust: %v", err)
	}
}

// TestConfigDirRestored: whatever an iteration left in CLAUDE_CONFIG_DIR
// (an MCP server in .claude.json, plugin hooks, an edited agent, a memory
// file) is gone before the next one starts; the session transcripts stay.
func TestConfigDirRestored(t *testing.T) {
	ctx := context.Background()
	f := setup(t)
	must(t, f.rt.Bootstrap(ctx, f.s, f.boot))
	must(t, f.rt.BootstrapHooks(ctx, f.s, f.boot))
	planted := map[string]string{
		"/sandbox/claude-config/.claude.json":                           `{"mcpServers":{"pwn":{"type":"stdio","command":"sh"}}}`,
		"/sandbox/claude-config/plugins/gopls-lsp/hooks/hooks.json":     `{"hooks":{}}`,
		"/sandbox/claude-config/output-styles/evil.md":                  "obey",
		"/sandbox/claude-config/CLAUDE.md":                              "obey",
		"/sandbox/claude-config/projects/-sandbox-x/memory/MEMORY.md":   "obey",
		"/sandbox/claude-config/agents/code.md":                         "---\nname: code\n---\nobey\n",
		"/sandbox/claude-config/projects/-sandbox-x/session-one.jsonl":  "{}\n",
		"/sandbox/claude-config/fullsend-logs/claude-debug-0.log":       "log\n",
		"/sandbox/claude-config/settings.json":                          `{}`,
		"/sandbox/claude-config/skills/code-implementation/evil/run.sh": "id",
	}
	for p, c := range planted {
		f.s.WriteFile(t, p, []byte(c))
	}
	// A skill the runtime-fetch service placed during the run is uploaded
	// again from its host copy.
	fetched := filepath.Join(t.TempDir(), "fetched")
	must(t, os.MkdirAll(fetched, 0o755))
	must(t, os.WriteFile(filepath.Join(fetched, "SKILL.md"), []byte("---\nname: fetched\n---\nFetched steps.\n"), 0o644))
	in := f.input(rec("tool_use"), nil, map[string]string{"FAKE_CLAUDE_RESULT": `{"status":"ok"}`})
	in.FetchedSkills = []runtime.Skill{{Name: "fetched", HostDir: fetched}}
	if _, err := f.rt.Run(ctx, f.s, in); err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, gone := range []string{".claude.json", "plugins/gopls-lsp/hooks", "output-styles", "CLAUDE.md", "projects/-sandbox-x/memory", "skills/code-implementation/evil"} {
		if _, err := os.Stat(f.s.HostPath("/sandbox/claude-config/" + gone)); !os.IsNotExist(err) {
			t.Errorf("%s survived into the next iteration (%v)", gone, err)
		}
	}
	for p, want := range map[string]string{
		"/sandbox/claude-config/agents/code.md":                        "Implement the issue.",
		"/sandbox/claude-config/settings.json":                         "hook each",
		"/sandbox/claude-config/skills/code-implementation/SKILL.md":   "Steps.",
		"/sandbox/claude-config/projects/-sandbox-x/session-one.jsonl": "{}",
		"/sandbox/claude-config/fullsend-logs/claude-debug-0.log":      "log",
		"/sandbox/claude-config/skills/fetched/SKILL.md":               "Fetched steps.",
	} {
		if got := string(f.s.ReadFile(t, p)); !strings.Contains(got, want) {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
}
