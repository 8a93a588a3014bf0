package run

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/runtime/claude"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// ClaudeSettingsScanner names the host-scan findings about the target
// repository's own Claude Code settings (the claude runtime only).
const ClaudeSettingsScanner = "claude-settings"

// claudeSettingsFindings reads the target repository's Claude Code
// settings files and .mcp.json (through repoFS: a symlink is not in the
// copy, so it is not read) and reports what the runtime refuses
// (claude.CheckProjectSettings, critical), what the harness's
// security.trust_repo_settings lets through (warning) and the MCP servers
// that --strict-mcp-config keeps from starting (warning).
func (p *Plan) claudeSettingsFindings() ([]scan.Finding, error) {
	if p.Runtime != claude.Name || p.TargetRepo == "" {
		return nil, nil
	}
	r, err := openRepo(p.TargetRepo)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	read := func(rel string) ([]byte, bool, error) {
		data, err := r.readFile(rel, maxContextFile)
		switch {
		case err == nil:
			return data, true, nil
		case errors.Is(err, fs.ErrNotExist), isRepoSymlink(err):
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("target repository: %w", err)
	}
	var out []scan.Finding
	add := func(rel, rule string, sev scan.Severity, msg string) {
		out = append(out, scan.Finding{Scanner: ClaudeSettingsScanner, Rule: rule, Severity: sev, Path: rel, Message: msg})
	}
	for _, rel := range claude.RepoSettingsFiles {
		data, ok, err := read(rel)
		if err != nil || !ok {
			if err != nil {
				return nil, err
			}
			continue
		}
		issues, err := claude.CheckProjectSettings(rel, data)
		if err != nil {
			add(rel, "claude-settings/invalid", scan.Critical, err.Error())
			continue
		}
		for _, is := range issues {
			what := fmt.Sprintf("sets %s, which %s", is.Key, is.Why)
			switch {
			case is.Always || !p.TrustRepoSettings:
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
	shadow, err := shadowingAgents(r, p.AgentName)
	if err != nil {
		return nil, err
	}
	for _, rel := range shadow {
		add(rel, "claude-settings/agent-shadowed", scan.Critical, fmt.Sprintf("defines agent %q, which Claude Code would run instead of the harness's agent definition (a project agent wins over fullsend's); refused (rename the repository's agent)", p.AgentName))
	}
	data, ok, err := read(claude.RepoMCPFile)
	if err != nil {
		return nil, err
	}
	if ok {
		servers, err := claude.ProjectMCPServers(claude.RepoMCPFile, data)
		if err != nil {
			add(claude.RepoMCPFile, "claude-settings/mcp-invalid", scan.Warning, err.Error()+"; not loaded (Claude Code runs with --strict-mcp-config)")
		}
		for _, s := range servers {
			add(claude.RepoMCPFile, "claude-settings/mcp-server", scan.Warning, fmt.Sprintf("MCP server %q not started: Claude Code runs with --strict-mcp-config, which ignores the repository's .mcp.json", s))
		}
	}
	return out, nil
}

// shadowingAgents lists the repository's agent definitions
// (.claude/agents/**, read through repoFS) that claude.DefinesAgent says
// would replace the harness's agent.
func shadowingAgents(r *repoFS, agent string) ([]string, error) {
	if agent == "" || !r.isDir(claude.RepoAgentsDir) {
		return nil, nil
	}
	var out []string
	err := r.walk(claude.RepoAgentsDir, func(rel string, d *os.Root, name string) error {
		if !strings.HasSuffix(name, ".md") {
			return nil
		}
		data, err := r.readIn(d, name, rel, maxContextFile)
		if err != nil {
			return err
		}
		if claude.DefinesAgent(rel, data, agent) {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("target repository: %w", err)
	}
	return out, nil
}

// judgeImports records the refused imports (scan.FollowImports findings,
// Path naming the importing file among files) as host-scan findings of
// that file, through the pipeline's Judge (acceptances, fail mode); the
// first block goes to *firstBlock.
func (x *execution) judgeImports(pl *scan.Pipeline, files []contextFile, refused []scan.Finding, firstBlock *error) error {
	byPath := map[string][]scan.Finding{}
	var order []string
	for _, f := range refused {
		if byPath[f.Path] == nil {
			order = append(order, f.Path)
		}
		byPath[f.Path] = append(byPath[f.Path], f)
	}
	for _, p := range order {
		var data []byte
		for _, f := range files {
			if f.loaded && f.display == p {
				data = f.data
			}
		}
		res, err := pl.Judge(data, scan.Meta{Path: p, Origin: scan.Local, Kind: "context"}, byPath[p])
		if err != nil {
			return fmt.Errorf("scanning %s: %w", p, err)
		}
		x.record("host_scan", res.Findings, res.Blocked)
		if res.Blocked && *firstBlock == nil {
			*firstBlock = &BlockedError{Phase: "host_scan", Err: res.Err()}
		}
	}
	return nil
}

// settingsRule is the finding rule of a refused settings key:
// claude-settings/ and the key in kebab case (enableAllProjectMcpServers
// is claude-settings/enable-all-project-mcp-servers), a rule id
// acceptances could name.
func settingsRule(key string) string {
	var b strings.Builder
	b.WriteString(ClaudeSettingsScanner + "/")
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
