package claude

import (
	"fmt"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

var _ runtime.RepoChecker = (*Runtime)(nil)

// SettingsScanner names the host-scan findings about the target
// repository's own Claude Code settings.
const SettingsScanner = "claude-settings"

// CheckRepo implements runtime.RepoChecker: it reads the target
// repository's Claude Code settings files and .mcp.json and reports what
// the runtime refuses (CheckProjectSettings, critical), what the
// harness's security.trust_repo_settings lets through (warning), the
// repository's agents that would replace the harness's (critical) and the
// MCP servers that --strict-mcp-config keeps from starting (warning).
func (r *Runtime) CheckRepo(repo runtime.RepoReader, in runtime.RepoCheckInput) ([]scan.Finding, error) {
	var out []scan.Finding
	add := func(rel, rule string, sev scan.Severity, msg string) {
		out = append(out, scan.Finding{Scanner: SettingsScanner, Rule: rule, Severity: sev, Path: rel, Message: msg})
	}
	for _, rel := range RepoSettingsFiles {
		data, ok, err := repo.ReadFile(rel)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		issues, err := CheckProjectSettings(rel, data)
		if err != nil {
			add(rel, "claude-settings/invalid", scan.Critical, err.Error())
			continue
		}
		for _, is := range issues {
			what := fmt.Sprintf("sets %s, which %s", is.Key, is.Why)
			switch {
			case is.Always || !in.TrustRepoSettings:
				msg := what + "; refused"
				if !is.Always {
					msg += " (remove the key, or set security.trust_repo_settings: true in a local harness)"
				}
				add(rel, settingsRule(is.Key), scan.Critical, msg)
			default:
				add(rel, settingsRule(is.Key), scan.Warning, what+"; accepted: the harness sets security.trust_repo_settings")
			}
		}
	}
	shadow, err := shadowingAgents(repo, in.AgentName)
	if err != nil {
		return nil, err
	}
	for _, rel := range shadow {
		add(rel, "claude-settings/agent-shadowed", scan.Critical, fmt.Sprintf("defines agent %q, which Claude Code would run instead of the harness's agent definition (a project agent wins over fullsend's); refused (rename the repository's agent)", in.AgentName))
	}
	data, ok, err := repo.ReadFile(RepoMCPFile)
	if err != nil {
		return nil, err
	}
	if ok {
		servers, err := ProjectMCPServers(RepoMCPFile, data)
		if err != nil {
			add(RepoMCPFile, "claude-settings/mcp-invalid", scan.Warning, err.Error()+"; not loaded (Claude Code runs with --strict-mcp-config)")
		}
		for _, s := range servers {
			add(RepoMCPFile, "claude-settings/mcp-server", scan.Warning, fmt.Sprintf("MCP server %q not started: Claude Code runs with --strict-mcp-config, which ignores the repository's .mcp.json", s))
		}
	}
	return out, nil
}

// shadowingAgents lists the repository's agent definitions
// (.claude/agents/**) that DefinesAgent says would replace the harness's
// agent.
func shadowingAgents(repo runtime.RepoReader, agent string) ([]string, error) {
	if agent == "" || !repo.IsDir(RepoAgentsDir) {
		return nil, nil
	}
	var out []string
	err := repo.Walk(RepoAgentsDir, func(rel string, read func() ([]byte, error)) error {
		if !strings.HasSuffix(rel, ".md") {
			return nil
		}
		data, err := read()
		if err != nil {
			return err
		}
		if DefinesAgent(rel, data, agent) {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("target repository: %w", err)
	}
	return out, nil
}

// settingsRule is the finding rule of a refused settings key:
// claude-settings/ and the key in kebab case (enableAllProjectMcpServers
// is claude-settings/enable-all-project-mcp-servers), a rule id
// acceptances could name.
func settingsRule(key string) string {
	var b strings.Builder
	b.WriteString(SettingsScanner + "/")
	for i, c := range key {
		if c >= 'A' && c <= 'Z' {
			if i > 0 {
				b.WriteByte('-')
			}
			c += 'a' - 'A'
		}
		b.WriteRune(c)
	}
	return b.String()
}
