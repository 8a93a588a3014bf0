//go:build unix

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/runtime/claude"
)

// TestDoctorClaudeVersion: doctor checks the Claude Code CLI the claude
// runtime would use (--claude-binary over config.yaml
// runtimes.claude.binary over claude on PATH), runs its --version and
// compares it with the version CI tests.
func TestDoctorClaudeVersion(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A node-script install whose "node" is a shell that runs the script:
	// the CLI prints the version it was built with.
	write("bin/node", "#!/bin/sh\nexec /bin/sh \"$@\"\n", 0o755)
	pkg := func(name, version string) string {
		write(name+"/package.json", `{"name":"@anthropic-ai/claude-code"}`, 0o644)
		return write(name+"/cli.js", "#!/usr/bin/env node\necho '"+version+" (Claude Code)'\n", 0o755)
	}
	old, tested := pkg("old", "9.9.9"), pkg("tested", claude.TestedVersion)
	fsDir := filepath.Join(dir, "fs")
	write("fs/config.yaml", "version: \"1\"\nruntimes:\n  claude:\n    binary: "+tested+"\n", 0o644)
	empty := filepath.Join(dir, "empty")
	write("empty/.keep", "", 0o644)

	cases := []struct {
		name   string
		args   []string
		status string
		detail string
	}{
		{"--claude-binary wins over the config", []string{"--fullsend-dir", fsDir, "doctor", "--json", "--claude-binary", old}, "warn",
			old + " (from --claude-binary): Claude Code 9.9.9, but CI tests " + claude.TestedVersion + "; other versions may change flags or output"},
		{"config runtimes.claude.binary", []string{"--fullsend-dir", fsDir, "doctor", "--json"}, "ok",
			tested + " (from config.yaml runtimes.claude.binary): Claude Code " + claude.TestedVersion + ", the version CI tests"},
		{"nothing on PATH", []string{"--fullsend-dir", empty, "doctor", "--json"}, "warn",
			`Claude Code CLI not found: looked for "claude" in PATH (` + filepath.Join(dir, "bin") + `); install it (npm install -g @anthropic-ai/claude-code) or name it in config.yaml runtimes.claude.binary or --claude-binary (from PATH): the claude runtime cannot run`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			vars := map[string]string{"PATH": filepath.Join(dir, "bin"), "HOME": dir}
			env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }}
			run(context.Background(), env, append([]string{"--workspace", dir}, c.args...))
			var v struct {
				Checks []doctorCheck `json:"checks"`
			}
			if err := json.Unmarshal(out.Bytes(), &v); err != nil {
				t.Fatalf("doctor --json: %v\n%s\n%s", err, out.String(), errb.String())
			}
			for _, ch := range v.Checks {
				if ch.Name == "claude" {
					if ch.Status != c.status || ch.Detail != c.detail {
						t.Fatalf("claude check: %s %q\nwant %s %q", ch.Status, ch.Detail, c.status, c.detail)
					}
					return
				}
			}
			t.Fatalf("no claude check: %s", out.String())
		})
	}
}
