package config

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// TestRuntimesClaude: every runtimes.claude key is read and checked; an
// unknown key is an error with its line, another runtime's block a notice.
func TestRuntimesClaude(t *testing.T) {
	c, notices, err := Parse("config.yaml", []byte(`version: "1"
runtimes:
  claude:
    binary: /opt/claude/bin/claude
    max_turns: 50
    permission_mode: acceptEdits
    effort: high
    debug: false
  codex: {binary: codex}
`))
	if err != nil {
		t.Fatal(err)
	}
	cl := c.Runtimes.Claude
	if cl.Binary != "/opt/claude/bin/claude" || cl.MaxTurns != 50 || cl.PermissionMode != "acceptEdits" || cl.Effort != "high" || cl.Debug == nil || *cl.Debug {
		t.Errorf("runtimes.claude = %+v", cl)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "config.yaml:9: runtimes.codex") {
		t.Errorf("notices = %q", notices)
	}
	if d := Default().Runtimes.Claude; d.Binary != "" || d.MaxTurns != 0 || d.Debug != nil {
		t.Errorf("default runtimes.claude = %+v", d)
	}

	for _, c := range []struct{ yaml, want string }{
		{"binary: bin/claude", `config.yaml:3: runtimes.claude.binary: invalid value: "bin/claude": want an absolute path`},
		{"max_turns: 0", "config.yaml:3: runtimes.claude.max_turns: invalid value: must be between 1 and"},
		{"permission_mode: yolo", `config.yaml:3: runtimes.claude.permission_mode: invalid value: "yolo" is not a permission mode`},
		{"effort: extreme", `config.yaml:3: runtimes.claude.effort: invalid value: "extreme" is not an effort level`},
		{"debug: maybe", "config.yaml:3: runtimes.claude.debug"},
		{"max_turn: 5", "config.yaml:3: runtimes.claude.max_turn: unknown field"},
	} {
		_, _, err := Parse("config.yaml", []byte("runtimes:\n  claude:\n    "+c.yaml+"\n"))
		var ye *yamlx.Error
		if !errors.As(err, &ye) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.yaml, err, c.want)
		}
	}
}

// TestHostServices: loopback endpoints only, normalised and deduplicated;
// anything else is an error naming the entry.
func TestHostServices(t *testing.T) {
	c, _, err := Parse("config.yaml", []byte(`sandbox:
  host_services: ["127.0.0.1:4000", "localhost:4000", "[::1]:8080", "127.0.0.2:9"]
`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"127.0.0.1:4000", "[::1]:8080", "127.0.0.2:9"}; !slices.Equal(c.Sandbox.HostServices, want) {
		t.Errorf("host_services = %q, want %q", c.Sandbox.HostServices, want)
	}
	for _, c := range []struct{ entry, want string }{
		{"10.0.0.5:4000", "not a loopback address"},
		{"api.example.com:443", "want a loopback IP:PORT"},
		{"127.0.0.1", "want IP:PORT"},
		{"127.0.0.1:0", "bad port"},
		{"127.0.0.1:70000", "bad port"},
		{"::1:80", "brackets"},
		{"[fe80::1%lo]:80", "want a loopback"},
	} {
		_, _, err := Parse("config.yaml", []byte("sandbox:\n  host_services:\n    - \""+c.entry+"\"\n"))
		if err == nil || !strings.Contains(err.Error(), "config.yaml:3: sandbox.host_services[0]") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.entry, err, c.want)
		}
	}
}
