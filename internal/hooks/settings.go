package hooks

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// HookTimeoutSeconds is the per-hook timeout written into settings.json.
const HookTimeoutSeconds = 30

// ToolAllowlistHook is the name of the tool allowlist hook; AllowFlag is
// its command-line flag carrying one allowlist (repeatable).
const (
	ToolAllowlistHook = "tool-allowlist-pretool"
	AllowFlag         = "allow"
)

// Select returns the hooks to install: every default hook not in disabled,
// plus the opt-in hooks named in optIn unless disabled. disabled may name
// hooks or harness security.sandbox_hooks keys ("tool_allowlist", "ssrf",
// …; see HarnessDisabled). Unknown names are an error.
func Select(disabled, optIn []string) ([]Hook, error) {
	off, err := disabledSet(disabled)
	if err != nil {
		return nil, err
	}
	for _, n := range optIn {
		if _, ok := Lookup(n); !ok {
			return nil, fmt.Errorf("hook %q: %w (known: %s)", n, ErrUnknownHook, strings.Join(Names(), ", "))
		}
	}
	var out []Hook
	for _, h := range all {
		if off[h.Name] {
			continue
		}
		if h.OptIn && !contains(optIn, h.Name) {
			continue
		}
		out = append(out, h)
	}
	return out, nil
}

// Disabled reports whether the hook name is switched off by disabled (hook
// names or harness keys, as Select takes them). Unknown names are an error.
func Disabled(disabled []string, name string) (bool, error) {
	off, err := disabledSet(disabled)
	return off[name], err
}

func disabledSet(disabled []string) (map[string]bool, error) {
	off := map[string]bool{}
	for _, n := range disabled {
		if hs, ok := harnessGroups[n]; ok {
			for _, h := range hs {
				off[h] = true
			}
			continue
		}
		if _, ok := Lookup(n); !ok {
			return nil, fmt.Errorf("hook %q: %w (known: %s)", n, ErrUnknownHook, strings.Join(Names(), ", "))
		}
		off[n] = true
	}
	return off, nil
}

type settingsHook struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

type settingsMatcher struct {
	Matcher string         `json:"matcher"`
	Hooks   []settingsHook `json:"hooks"`
}

// Settings renders the Claude Code settings.json that wires hs: one
// command per event, `<binary> hook each NAME...` under the matcher "*",
// naming that event's hooks in order (binary: absolute path of fullsend in
// the sandbox, so a PATH change cannot substitute it). The process applies
// each hook's own matcher to the tool name (HandleEach), so one hook's
// matcher never widens another's, and a tool call costs one process per
// event rather than one per hook.
//
// When the tool allowlist hook is wired, each of allowlists goes on the
// PreToolUse command line as `--allow 'LIST'` (canonical form, see
// FormatAllowlist), so the list lives in the settings file the runtime
// rewrites, not in an environment the agent can influence. Wiring that hook
// without an allowlist, or an allowlist that does not parse, is an error.
func Settings(binary string, hs []Hook, allowlists ...string) ([]byte, error) {
	if !strings.HasPrefix(binary, "/") || strings.ContainsAny(binary, " \t\n'\"$`\\;&|") {
		return nil, fmt.Errorf("hook binary %q: must be an absolute path without shell metacharacters", binary)
	}
	var allowArgs string
	for _, a := range allowlists {
		rules, err := ParseAllowlist(a)
		if err != nil {
			return nil, err
		}
		if len(rules) == 0 {
			return nil, fmt.Errorf("tool allowlist %q: empty", a)
		}
		allowArgs += " --" + AllowFlag + " '" + FormatAllowlist(rules) + "'"
	}
	events := map[string][]settingsMatcher{}
	for _, ev := range []string{PreToolUse, PostToolUse} {
		cmd, n := binary+" hook "+EachCommand, 0
		withAllow := false
		for _, h := range hs {
			if h.Event != ev {
				continue
			}
			cmd += " " + h.Name
			n++
			if h.Name == ToolAllowlistHook {
				if allowArgs == "" {
					return nil, fmt.Errorf("hook %s: wired without a tool allowlist", h.Name)
				}
				withAllow = true
			}
		}
		if n == 0 {
			continue
		}
		if withAllow {
			cmd += allowArgs
		}
		events[ev] = []settingsMatcher{{
			Matcher: "*",
			Hooks:   []settingsHook{{Type: "command", Command: cmd, Timeout: HookTimeoutSeconds}},
		}}
	}
	for _, h := range hs {
		if h.Event != PreToolUse && h.Event != PostToolUse {
			return nil, fmt.Errorf("hook %s: event %q cannot be wired", h.Name, h.Event)
		}
	}
	doc := map[string]any{
		"hooks":           events,
		"disableAllHooks": false,
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// harnessGroups maps the harness security.sandbox_hooks keys to hooks.
var harnessGroups = map[string][]string{
	"canary":           {"canary-pretool", "canary-posttool"},
	"context_suppress": {"context-suppress-posttool"},
	"secret_redact":    {"secret-redact-posttool"},
	"ssrf":             {"ssrf-pretool"},
	"tirith":           {"bash-risk-pretool"},
	"tool_allowlist":   {"tool-allowlist-pretool"},
	"unicode":          {"unicode-posttool"},
}

// HarnessDisabled translates a harness security.sandbox_hooks map (key →
// enabled) into the hook names to disable (BootstrapInput.DisabledHooks),
// sorted. Enabling a hook that is on by default changes nothing; the
// tool allowlist hook is switched on by a non-empty allowlist, not here.
// Unknown keys are an error.
func HarnessDisabled(m map[string]bool) ([]string, error) {
	var out []string
	for k, on := range m {
		hs, ok := harnessGroups[k]
		if !ok {
			return nil, fmt.Errorf("sandbox hook %q: unknown (known: canary, context_suppress, secret_redact, ssrf, tirith, tool_allowlist, unicode)", k)
		}
		if !on {
			out = append(out, hs...)
		}
	}
	sort.Strings(out)
	return out, nil
}
