package hooks

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/frontmatter"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// AgentAllowlist reads the tool allowlist of an agent definition (file
// names it in errors): its frontmatter `tools:`, a comma list in Claude
// Code permission syntax ("Bash(gh,curl,jq), Skill") or a YAML list of
// entries. It returns the list in canonical form (FormatAllowlist) and
// true, or "" and false when the definition has no `tools:` (every tool).
// A `tools:` that is empty, not a string or list of strings, or does not
// parse is an error at its line: an agent that means to restrict its tools
// must never run unrestricted because of a typo.
func AgentAllowlist(file string, data []byte) (string, bool, error) {
	fm, err := frontmatter.Parse(file, data)
	if err != nil {
		return "", false, err
	}
	v, ok := fm.Fields["tools"]
	if !ok {
		return "", false, nil
	}
	fail := func(err error) (string, bool, error) {
		return "", false, &yamlx.Error{File: file, Line: keyLine(file, data, "tools"), Field: "tools", Err: err}
	}
	var spec string
	switch x := v.(type) {
	case string:
		spec = x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok || strings.TrimSpace(s) == "" {
				return fail(fmt.Errorf("%w: entry %d must be a non-empty string", yamlx.ErrValue, i))
			}
			parts[i] = s
		}
		spec = strings.Join(parts, ",")
	case nil:
		return fail(fmt.Errorf("%w: empty; list the tools the agent may use, or remove the key to allow every tool", yamlx.ErrValue))
	default:
		return fail(fmt.Errorf("%w: want a comma list or a list of tools", yamlx.ErrType))
	}
	rules, err := ParseAllowlist(spec)
	if err != nil {
		return fail(fmt.Errorf("%w: %v", yamlx.ErrValue, err))
	}
	if len(rules) == 0 {
		return fail(fmt.Errorf("%w: empty; list the tools the agent may use, or remove the key to allow every tool", yamlx.ErrValue))
	}
	return FormatAllowlist(rules), true, nil
}

// keyLine is the 1-based line of the top-level frontmatter key (0 when
// not found).
func keyLine(file string, data []byte, key string) int {
	front, _, _, ok, err := frontmatter.Split(file, data)
	if err != nil || !ok {
		return 0
	}
	for i, l := range bytes.Split(front, []byte("\n")) {
		if k, _, found := bytes.Cut(l, []byte(":")); found && string(bytes.TrimRight(k, " \t")) == key {
			return i + 2 // line 1 is the opening ---
		}
	}
	return 0
}

// RunAllowlists returns the tool allowlists a run enforces, in canonical
// form: the agent definition's `tools:` (AgentAllowlist) and the runner's
// list (BootstrapInput.ToolAllowlist, Claude Code permission syntax), each
// when present. Each must permit a call: two lists never widen each other.
// nil means no restriction: neither restricts tools, or disabled (hook
// names or harness keys, as Select takes them) switches the tool
// allowlist hook off.
func RunAllowlists(agentFile string, agentData []byte, runner []string, disabled []string) ([]string, error) {
	off, err := Disabled(disabled, ToolAllowlistHook)
	if err != nil || off {
		return nil, err
	}
	var out []string
	if spec, ok, err := AgentAllowlist(agentFile, agentData); err != nil {
		return nil, err
	} else if ok {
		out = append(out, spec)
	}
	if len(runner) > 0 {
		rules, err := ParseAllowlist(strings.Join(runner, ","))
		if err != nil {
			return nil, err
		}
		if len(rules) == 0 {
			return nil, fmt.Errorf("tool allowlist %q: empty", strings.Join(runner, ","))
		}
		out = append(out, FormatAllowlist(rules))
	}
	return out, nil
}
