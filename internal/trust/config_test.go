package trust

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/config"
)

// nested writes the dotted key path as nested YAML mappings ending in
// value.
func nested(path, value string) string {
	parts := strings.Split(path, ".")
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(strings.Repeat("  ", i) + p + ":")
		if i < len(parts)-1 {
			b.WriteString("\n")
		}
	}
	b.WriteString(" " + value + "\n")
	return b.String()
}

func orgConfig(t *testing.T) *config.Config {
	t.Helper()
	c, _, err := config.Parse("org/config.yaml", []byte(`version: "1"
allowed_remote_resources: ["https://github.com/org/lib/", "https://github.com/other/"]
sandbox:
  limits: {memory: 2GiB, pids: 512}
runtimes:
  claude: {max_turns: 40}
`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Every refused row of the table is an error naming file, line, key and
// the way out when a repository layer sets it, whatever its value.
func TestRepoConfigRefusedKeys(t *testing.T) {
	org := orgConfig(t)
	for _, k := range ConfigKeys {
		if k.Policy != Refused {
			continue
		}
		data := "version: \"1\"\n" + nested(k.Key, "x")
		_, _, err := applyRepoConfig(org, "repo/config.yaml", []byte(data))
		if !errors.Is(err, ErrRepoLayer) {
			t.Errorf("%s: err = %v, want ErrRepoLayer", k.Key, err)
			continue
		}
		line := strings.Count(data[:strings.LastIndex(data, strings.Split(k.Key, ".")[len(strings.Split(k.Key, "."))-1]+":")], "\n") + 1
		msg := err.Error()
		if want := "repo/config.yaml:" + strconv.Itoa(line) + ": " + k.Key + ": "; !strings.HasPrefix(msg, want) || !strings.Contains(msg, "--trusted-ref") || !strings.Contains(msg, "--trust-worktree") {
			t.Errorf("%s: %q: want prefix %q and the way out", k.Key, msg, want)
		}
	}
	// A key no row governs is org only (fail closed).
	for _, y := range []string{"dispatch: {x: 1}\n", "sandbox:\n  future_key: 1\n"} {
		if _, _, err := applyRepoConfig(org, "c.yaml", []byte(y)); !errors.Is(err, ErrRepoLayer) {
			t.Errorf("%q: %v, want ErrRepoLayer", y, err)
		}
	}
	// A key below a refused row is refused too (runtimes.claude.binary).
	_, _, err := applyRepoConfig(org, "c.yaml", []byte("runtimes:\n  claude:\n    max_turns: 5\n    binary: /bin/sh\n"))
	if !errors.Is(err, ErrRepoLayer) || !strings.Contains(err.Error(), "c.yaml:4: runtimes.claude.binary:") {
		t.Errorf("runtimes.claude.binary: %v", err)
	}
}

// What a repository layer may set narrows, lowers or tightens; the
// widening values of the same keys are errors.
func TestRepoConfigNarrowing(t *testing.T) {
	org := orgConfig(t)
	ok := []struct {
		yaml  string
		check func(c *config.Config) bool
	}{
		{"runtime: native\n", func(c *config.Config) bool { return c.Runtime == "native" }},
		{"agents: [harness/x.yaml]\n", func(c *config.Config) bool { return len(c.Agents) == 1 }},
		{"allowed_remote_resources: [\"https://github.com/org/lib/skills/\"]\n", func(c *config.Config) bool {
			return len(c.AllowedRemoteResources) == 1 && c.AllowedRemoteResources[0] == "https://github.com/org/lib/skills/"
		}},
		{"sandbox:\n  limits: {memory: 1GiB}\n", func(c *config.Config) bool {
			return c.Sandbox.Limits.MemoryBytes == 1<<30 && c.Sandbox.Limits.Pids == 512
		}},
		{"security:\n  fail_mode: closed\n", func(c *config.Config) bool { return c.Security.FailMode == config.FailClosed }},
		{"security:\n  remote_resources:\n    allowed_domains: [github.com]\n    timeout: 5s\n    max_size_bytes: 1000\n    max_depth: 2\n    max_resources: 3\n", func(c *config.Config) bool {
			r := c.Security.RemoteResources
			return len(r.AllowedDomains) == 1 && r.Timeout == 5*time.Second && r.MaxSizeBytes == 1000 && r.MaxDepth == 2 && r.MaxResources == 3
		}},
		{"runtimes:\n  claude: {max_turns: 10}\n", func(c *config.Config) bool { return c.Runtimes.Claude.MaxTurns == 10 }},
	}
	for _, tc := range ok {
		c, _, err := applyRepoConfig(org, "r.yaml", []byte(tc.yaml))
		if err != nil {
			t.Errorf("%q: %v", tc.yaml, err)
			continue
		}
		if !tc.check(c) {
			t.Errorf("%q: not applied: %+v", tc.yaml, c)
		}
	}
	if org.Runtime != "" || org.Sandbox.Limits.MemoryBytes != 2<<30 {
		t.Errorf("the org config was modified: %+v", org)
	}
	for _, y := range []string{
		"allowed_remote_resources: [\"https://github.com/evil/\"]\n",
		"sandbox:\n  limits: {pids: 4096}\n",
		"security:\n  fail_mode: open\n",
		"security:\n  remote_resources:\n    allowed_domains: [evil.example]\n",
		"security:\n  remote_resources:\n    timeout: 1h\n",
		"security:\n  remote_resources:\n    max_size_bytes: 999999999\n",
		"security:\n  remote_resources:\n    max_depth: 50\n",
		"security:\n  remote_resources:\n    max_resources: 500\n",
		"runtimes:\n  claude: {max_turns: 41}\n",
	} {
		if _, _, err := applyRepoConfig(org, "r.yaml", []byte(y)); !errors.Is(err, ErrRepoWidens) {
			t.Errorf("%q: err = %v, want ErrRepoWidens", y, err)
		}
	}
}

// Every row a repository layer may set has a rule in applyKey (a row
// without one would fail closed, and this test names it).
func TestEveryPermittedRowApplies(t *testing.T) {
	values := map[string]string{
		"version": "\"1\"", "runtime": "script", "agents": "[h.yaml]", "allowed_remote_resources": "[\"https://github.com/org/lib/\"]",
		"sandbox.limits": "{pids: 10}", "security.fail_mode": "closed", "security.remote_resources.allowed_domains": "[github.com]",
		"security.remote_resources.timeout": "1s", "security.remote_resources.max_size_bytes": "1", "security.remote_resources.max_depth": "1",
		"security.remote_resources.max_resources": "1", "runtimes.claude.max_turns": "1",
	}
	for _, k := range ConfigKeys {
		if k.Policy == Refused {
			continue
		}
		v, ok := values[k.Key]
		if !ok {
			t.Errorf("%s: no test value", k.Key)
			continue
		}
		if _, _, err := applyRepoConfig(orgConfig(t), "r.yaml", []byte(nested(k.Key, v))); err != nil {
			t.Errorf("%s: %v", k.Key, err)
		}
	}
}

func TestApplyRepoConfigMissingFile(t *testing.T) {
	org := orgConfig(t)
	c, _, err := ApplyRepoConfig(org, t.TempDir())
	if err != nil || c != org {
		t.Fatalf("missing file: %v %v", c, err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("forges: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ApplyRepoConfig(org, dir); !errors.Is(err, ErrRepoLayer) {
		t.Fatalf("forges: %v", err)
	}
}
