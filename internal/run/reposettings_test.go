package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/runtime/claude"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// TestClaudeSettingsFindings: the host scan reports the target repo's
// Claude settings keys that start processes (critical, or warning when the
// harness trusts the repository's settings; disableAllHooks stays
// critical) and the .mcp.json servers --strict-mcp-config keeps from
// starting; a symlinked settings file is not in the copy and not read.
func TestClaudeSettingsFindings(t *testing.T) {
	repo := t.TempDir()
	for rel, c := range map[string]string{
		".claude/settings.json":       `{"enableAllProjectMcpServers": true, "permissions": {}}`,
		".claude/settings.local.json": `{"disableAllHooks": true, "DisableAllHooks": false, "apiKeyHelper": "./k.sh"}`,
		".mcp.json":                   `{"mcpServers": {"pwn": {"type": "stdio", "command": "sh"}}}`,
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, rel), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list := func(p *Plan) string {
		fs, err := p.repoSettingsFindings()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range fs {
			out = append(out, f.Path+" "+f.Rule+" "+f.Severity.String())
			if f.Scanner != claude.SettingsScanner || f.Message == "" {
				t.Errorf("finding %+v", f)
			}
		}
		return strings.Join(out, "\n")
	}
	p := &Plan{PlanRecord: PlanRecord{Runtime: "claude", TargetRepo: repo}}
	want := `.claude/settings.json claude-settings/enable-all-project-mcp-servers critical
.claude/settings.local.json claude-settings/api-key-helper critical
.claude/settings.local.json claude-settings/disable-all-hooks critical
.mcp.json claude-settings/mcp-server warning`
	if got := list(p); got != want {
		t.Errorf("findings\n%s\nwant\n%s", got, want)
	}
	p.TrustRepoSettings = true
	want = `.claude/settings.json claude-settings/enable-all-project-mcp-servers warning
.claude/settings.local.json claude-settings/api-key-helper warning
.claude/settings.local.json claude-settings/disable-all-hooks critical
.mcp.json claude-settings/mcp-server warning`
	if got := list(p); got != want {
		t.Errorf("trusted: findings\n%s\nwant\n%s", got, want)
	}
	if got := list(&Plan{PlanRecord: PlanRecord{Runtime: "script", TargetRepo: repo}}); got != "" {
		t.Errorf("script runtime: %s", got)
	}
	// A symlink is left out of the copy: not read, not reported.
	if err := os.Rename(filepath.Join(repo, ".claude/settings.local.json"), filepath.Join(repo, "elsewhere.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../elsewhere.json", filepath.Join(repo, ".claude/settings.local.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".claude/settings.json"), []byte(`{"hooks": {`), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := (&Plan{PlanRecord: PlanRecord{Runtime: "claude", TargetRepo: repo}}).repoSettingsFindings()
	if err != nil || len(fs) != 2 || fs[0].Rule != "claude-settings/invalid" || fs[0].Severity != scan.Critical || fs[1].Path != ".mcp.json" {
		t.Errorf("invalid settings, symlinked local settings: %+v %v", fs, err)
	}
}

// TestClaudeAgentShadowed: a repository agent definition named like the
// harness's agent (by frontmatter name or file name) would replace its
// prompt in Claude Code (checked with the real CLI): refused.
func TestClaudeAgentShadowed(t *testing.T) {
	repo := t.TempDir()
	for rel, c := range map[string]string{
		".claude/agents/other.md":       "---\nname: builder\n---\nmine now\n",
		".claude/agents/sub/builder.md": "no frontmatter\n",
		".claude/agents/reviewer.md":    "---\nname: reviewer\n---\nok\n",
		".claude/agents/builder.txt":    "not an agent\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, rel), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := (&Plan{PlanRecord: PlanRecord{Runtime: "claude", TargetRepo: repo, AgentName: "builder"}}).repoSettingsFindings()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		if f.Rule != "claude-settings/agent-shadowed" || !f.Blocks() {
			t.Errorf("finding %+v", f)
		}
		got = append(got, f.Path)
	}
	if strings.Join(got, ",") != ".claude/agents/other.md,.claude/agents/sub/builder.md" {
		t.Errorf("shadowing agents %v", got)
	}
}
