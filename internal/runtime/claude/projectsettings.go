package claude

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/frontmatter"
)

// This file is the one place that decides which Claude Code settings of a
// target repository the claude runtime accepts. Claude Code reads
// .claude/settings.json and .claude/settings.local.json of its working
// directory when it starts, before any hook: a key there that runs a
// program, sets the CLI's environment, enables plugins or trusts the
// repository's MCP servers would run the repository's code with the
// agent's credentials in reach. The host scan (package run) and the
// runtime's check before every iteration both call CheckProjectSettings
// and ProjectMCPServers; neither re-implements them.

// RepoSettingsFiles are the repository-level settings files Claude Code
// loads, relative to its working directory.
var RepoSettingsFiles = []string{".claude/settings.json", ".claude/settings.local.json"}

// RepoMCPFile is the repository's MCP server list. fullsend runs Claude
// Code with --strict-mcp-config, so it is never loaded.
const RepoMCPFile = ".mcp.json"

// riskyKeys are the top-level settings keys of Claude Code (checked
// against the settings schema of @anthropic-ai/claude-code 2.1.332) that
// make the CLI start a process, change its environment, load code or
// trust the repository's own MCP servers. Keys are matched exactly, as
// Claude Code reads them (JSON object keys are case-sensitive).
var riskyKeys = map[string]string{
	"apiKeyHelper":               "runs a program to compute the API key",
	"proxyAuthHelper":            "runs a program to compute proxy credentials",
	"awsAuthRefresh":             "runs a program to refresh AWS credentials",
	"awsCredentialExport":        "runs a program that exports AWS credentials",
	"gcpAuthRefresh":             "runs a program to refresh GCP credentials",
	"otelHeadersHelper":          "runs a program to compute telemetry headers",
	"processWrapper":             "wraps the processes the CLI starts in a program",
	"policyHelper":               "runs a program to compute policy settings",
	"policyHelpers":              "runs programs to compute policy settings",
	"fileSuggestion":             "runs a program to suggest files",
	"statusLine":                 "runs a program to draw the status line",
	"subagentStatusLine":         "runs a program to draw sub-agent status lines",
	"defaultShell":               "changes the shell tool commands run in",
	"hooks":                      "runs programs on tool calls and session events",
	"env":                        "sets environment variables of the CLI and every tool it runs",
	"enableAllProjectMcpServers": "starts every MCP server of the repository's .mcp.json",
	"enabledMcpjsonServers":      "starts MCP servers of the repository's .mcp.json",
	"enabledPlugins":             "enables plugins (their hooks and MCP servers run)",
	"extraKnownMarketplaces":     "adds plugin marketplaces",
	"additionalMarketplaces":     "adds plugin marketplaces",
	"prependPlugins":             "orders plugins whose hooks run",
	"appendPlugins":              "orders plugins whose hooks run",
}

// SettingsIssue is one key of a repository settings file the runtime
// refuses (or, with the harness's opt-in, accepts and reports).
type SettingsIssue struct {
	File string // as given to CheckProjectSettings
	Key  string
	Why  string
	// Always: refused even with the harness's opt-in (disableAllHooks:
	// true would switch off the sandbox hooks).
	Always bool
}

func (i SettingsIssue) String() string {
	return fmt.Sprintf("%s sets %s, which %s", i.File, i.Key, i.Why)
}

// CheckProjectSettings lists the refused keys of the repository settings
// file named file (content data), sorted by key. Keys are matched
// case-sensitively: {"DisableAllHooks": false} is not disableAllHooks.
// A file that is not one JSON object is an error: settings that cannot be
// checked are refused.
func CheckProjectSettings(file string, data []byte) ([]SettingsIssue, error) {
	doc, err := jsonObject(data)
	if err != nil {
		return nil, fmt.Errorf("target repo %s: %v; refusing to run with settings that cannot be checked", file, err)
	}
	var out []SettingsIssue
	for k, v := range doc {
		if why, ok := riskyKeys[k]; ok {
			out = append(out, SettingsIssue{File: file, Key: k, Why: why})
			continue
		}
		if k == "disableAllHooks" {
			var b bool
			if json.Unmarshal(v, &b) != nil || b {
				out = append(out, SettingsIssue{File: file, Key: k, Why: "would switch off the sandbox security hooks", Always: true})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// ProjectMCPServers lists the server names of the repository's .mcp.json
// (content data), sorted. A file that is not a JSON object, or whose
// mcpServers is not one, is an error.
func ProjectMCPServers(file string, data []byte) ([]string, error) {
	doc, err := jsonObject(data)
	if err != nil {
		return nil, fmt.Errorf("target repo %s: %v", file, err)
	}
	raw, ok := doc["mcpServers"]
	if !ok {
		return nil, nil
	}
	servers, err := jsonObject(raw)
	if err != nil {
		return nil, fmt.Errorf("target repo %s: mcpServers: %v", file, err)
	}
	out := make([]string, 0, len(servers))
	for k := range servers {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

// jsonObject decodes one JSON object into its members, keys exactly as
// written (a repeated key keeps its last value, as JavaScript's
// JSON.parse does).
func jsonObject(data []byte) (map[string]json.RawMessage, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var doc map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not valid JSON (%v)", err)
	}
	if doc == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	if dec.More() {
		return nil, fmt.Errorf("not valid JSON (data after the object)")
	}
	return doc, nil
}

// RepoAgentsDir is where Claude Code finds the repository's own agent
// definitions (relative to its working directory).
const RepoAgentsDir = ".claude/agents"

// DefinesAgent reports whether the repository agent definition file
// (a path under RepoAgentsDir, content data) is named agent: its
// frontmatter name, else its file name without .md. Claude Code prefers
// such a project agent to the personal-level one fullsend installs, so it
// would replace the harness's agent prompt; both the host scan and the
// runtime refuse it.
func DefinesAgent(file string, data []byte, agent string) bool {
	if agent == "" || !strings.HasSuffix(file, ".md") {
		return false
	}
	name := strings.TrimSuffix(path.Base(file), ".md")
	if fm, err := frontmatter.Parse(file, data); err == nil && fm.Name != "" {
		name = fm.Name
	}
	return name == agent
}
