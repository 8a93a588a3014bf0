package hooks

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
)

// TestClaudeConfigProtected: Claude Code's own configuration, which starts
// processes or loads instructions at its next start, is off limits to the
// Write/Edit tools and to shell commands that modify it (inspection stays
// allowed).
func TestClaudeConfigProtected(t *testing.T) {
	blocked := []string{
		"/sandbox/claude-config/.claude.json",
		"/root/.claude.json",
		"/sandbox/workspace/repo/.mcp.json",
		"/sandbox/claude-config/plugins/p1/hooks/hooks.json",
		"/sandbox/workspace/repo/.claude/output-styles/terse.md",
		"/sandbox/workspace/repo/CLAUDE.local.md",
		"/sandbox/workspace/repo/sub/../CLAUDE.local.md",
	}
	for _, p := range blocked {
		for _, tool := range []string{"Write", "Edit", "MultiEdit"} {
			in := &Input{ToolName: tool, ToolInput: json.RawMessage(`{"file_path":` + strconv.Quote(p) + `}`)}
			v, err := checkBashRisk(context.Background(), in, &Env{})
			if err != nil || !v.Block || v.Rule != "bash.hook-config-tampering" {
				t.Errorf("%s %s: %+v %v, want blocked", tool, p, v, err)
			}
		}
	}
	for _, cmd := range []string{
		`echo '{"mcpServers":{"x":{"command":"sh"}}}' > /sandbox/claude-config/.claude.json`,
		`cp evil.json "$CLAUDE_CONFIG_DIR/.claude.json"`,
		`tee .mcp.json < x`,
		`mkdir -p plugins/p/hooks && mv h.json plugins/p/hooks/`,
		`printf x > CLAUDE.local.md`,
		`cp s.md ~/.claude/output-styles/`,
		`python3 -c "open('/sandbox/claude-config/.claude.json','w')"`,
	} {
		if id, _, risky := BashRisk(cmd); !risky || id != "hook-config-tampering" {
			t.Errorf("BashRisk(%q) = %s %v, want hook-config-tampering", cmd, id, risky)
		}
	}
	for _, p := range []string{"/sandbox/workspace/repo/main.go", "/sandbox/workspace/repo/docs/claude.md", "/sandbox/output/mcp.json.txt"} {
		in := &Input{ToolName: "Write", ToolInput: json.RawMessage(`{"file_path":` + strconv.Quote(p) + `}`)}
		if v, _ := checkBashRisk(context.Background(), in, &Env{}); v.Block {
			t.Errorf("Write %s blocked: %+v", p, v)
		}
	}
	for _, cmd := range []string{"cat .mcp.json", "ls /sandbox/claude-config", "grep -r x CLAUDE.local.md", "cat /sandbox/claude-config/skills/greeting/SKILL.md; echo done"} {
		if id, _, risky := BashRisk(cmd); risky {
			t.Errorf("BashRisk(%q) = %s, want allowed (inspection)", cmd, id)
		}
	}
}
