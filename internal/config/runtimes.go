package config

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// This file owns two org-only settings that decide what an agent CLI is
// and what it may reach on the runner host:
//
//	runtimes:
//	  claude: {binary: /opt/claude/bin/claude, max_turns: 50, permission_mode: bypassPermissions, effort: high, debug: true}
//	sandbox:
//	  host_services: ["127.0.0.1:4000"]
//
// Neither can be set by a harness: the binary runs inside every sandbox of
// the org, and a host service is a hole in the sandbox's network boundary.

// Runtimes holds per-runtime settings (config.yaml runtimes:).
type Runtimes struct {
	Claude ClaudeRuntime
}

// ClaudeRuntime configures the claude runtime (runtimes.claude). Zero
// values are "not set".
type ClaudeRuntime struct {
	// Binary is the Claude Code CLI on the runner host: an absolute path, or
	// a command name looked up on the runner's PATH. "" = `claude` on PATH.
	Binary         string
	MaxTurns       int    // --max-turns
	PermissionMode string // --permission-mode (one of ClaudePermissionModes)
	Effort         string // --effort (one of ClaudeEffortLevels)
	Debug          *bool  // --debug-file (default on)
}

// ClaudePermissionModes are the --permission-mode values Claude Code 2.1
// accepts ("default" is the older name of "manual").
var ClaudePermissionModes = []string{"acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "manual", "plan"}

// ClaudeEffortLevels are the --effort values Claude Code 2.1 accepts.
var ClaudeEffortLevels = []string{"low", "medium", "high", "xhigh", "max"}

// MaxClaudeTurns bounds max_turns.
const MaxClaudeTurns = 100000

// CheckClaudeBinary accepts an absolute host path or a bare command name.
func CheckClaudeBinary(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("empty")
	case strings.ContainsRune(s, 0):
		return fmt.Errorf("contains NUL")
	case filepath.IsAbs(s):
		return nil
	case strings.ContainsRune(s, '/'):
		return fmt.Errorf("%q: want an absolute path or a command name found on PATH", s)
	}
	return nil
}

// CheckPermissionMode accepts the values of ClaudePermissionModes.
func CheckPermissionMode(s string) error {
	if slices.Contains(ClaudePermissionModes, s) {
		return nil
	}
	return fmt.Errorf("%q is not a permission mode (%s)", s, strings.Join(ClaudePermissionModes, ", "))
}

// CheckEffort accepts the values of ClaudeEffortLevels.
func CheckEffort(s string) error {
	if slices.Contains(ClaudeEffortLevels, s) {
		return nil
	}
	return fmt.Errorf("%q is not an effort level (%s)", s, strings.Join(ClaudeEffortLevels, ", "))
}

type runtimesYAML struct {
	Claude claudeYAML `yaml:"claude"`
}

func (r *runtimesYAML) UnknownKey(f *yamlx.Fields, e yamlx.Entry) error {
	ctx(f).warn(e.Key, f.Field(e.Key.Value), "no settings for this runtime; ignored")
	return nil
}

// claudeYAML is runtimes.claude; the file's keys replace the whole
// setting.
type claudeYAML struct {
	Binary         string `yaml:"binary"`
	MaxTurns       int    `yaml:"max_turns"`
	PermissionMode string `yaml:"permission_mode"`
	Effort         string `yaml:"effort"`
	Debug          *bool  `yaml:"debug"`
}

func (c *claudeYAML) CheckKey(f *yamlx.Fields, key string) error {
	var err error
	switch key {
	case "binary":
		err = CheckClaudeBinary(c.Binary)
	case "permission_mode":
		err = CheckPermissionMode(c.PermissionMode)
	case "effort":
		err = CheckEffort(c.Effort)
	case "max_turns":
		if c.MaxTurns < 1 || c.MaxTurns > MaxClaudeTurns {
			return f.Errorf(key, yamlx.ErrValue, "must be between 1 and %d", MaxClaudeTurns)
		}
	case "":
		ctx(f).c.Runtimes.Claude = ClaudeRuntime(*c)
	}
	if err != nil {
		return f.Errorf(key, yamlx.ErrValue, "%v", err)
	}
	return nil
}

func (c *claudeYAML) UnknownKey(f *yamlx.Fields, e yamlx.Entry) error {
	return yamlx.Errorf(f.File, e.Key, f.Field(e.Key.Value), yamlx.ErrUnknownField, "(known: binary, max_turns, permission_mode, effort, debug)")
}

// HostService normalises a sandbox.host_services entry: a loopback
// "IP:PORT" ("127.0.0.1:4000", "[::1]:4000") or "localhost:PORT"
// (127.0.0.1). Only loopback endpoints are host services: a service on
// another address is reached like any other destination (the sandbox
// allowlist, plus security.remote_resources.allowed_private_networks for a
// private range).
func HostService(s string) (string, error) {
	host, port, err := splitHostPort(s)
	if err != nil {
		return "", err
	}
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	a, err := netip.ParseAddr(host)
	if err != nil || a.Zone() != "" {
		return "", fmt.Errorf("%q: want a loopback IP:PORT or localhost:PORT", s)
	}
	a = a.Unmap()
	if !a.IsLoopback() {
		return "", fmt.Errorf("%q: not a loopback address (host services are endpoints on the runner's loopback; reach other addresses through the sandbox allowlist and security.remote_resources.allowed_private_networks)", s)
	}
	return netip.AddrPortFrom(a, port).String(), nil
}

func splitHostPort(s string) (string, uint16, error) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 || i == len(s)-1 {
		return "", 0, fmt.Errorf("%q: want IP:PORT", s)
	}
	host, ps := s[:i], s[i+1:]
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") {
			return "", 0, fmt.Errorf("%q: want IP:PORT", s)
		}
		host = host[1 : len(host)-1]
	} else if strings.Contains(host, ":") {
		return "", 0, fmt.Errorf("%q: write an IPv6 address in brackets ([::1]:PORT)", s)
	}
	n, err := strconv.Atoi(ps)
	if err != nil || n < 1 || n > 65535 {
		return "", 0, fmt.Errorf("%q: bad port", s)
	}
	return host, uint16(n), nil
}

func hostServices(f *yamlx.Fields, key string, list []string) ([]string, error) {
	out := make([]string, 0, len(list))
	for i, s := range list {
		hs, err := HostService(s)
		if err != nil {
			n, field := elem(f, key, i)
			return nil, yamlx.Errorf(f.File, n, field, yamlx.ErrValue, "%v", err)
		}
		if !slices.Contains(out, hs) {
			out = append(out, hs)
		}
	}
	return out, nil
}
