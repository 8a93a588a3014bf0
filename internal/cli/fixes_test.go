package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorsNameTheirFix: each mistake a new user makes gets one stderr
// line naming the resource, the reason and the fix, with the right exit
// status (2 for usage).
func TestErrorsNameTheirFix(t *testing.T) {
	dir := t.TempDir()
	pin := strings.Repeat("a", 64)
	files := map[string]string{
		"fs/config.yaml":                "version: \"1\"\nallowed_remote_resources: [https://example.com/]\n",
		"fs/agents/a.md":                "---\nname: a\n---\nagent\n",
		"fs/harness/typo.yaml":          "agnet: agents/a.md\nruntime: script\n",
		"fs/harness/missing.yaml":       "agent: agents/nope.md\nruntime: script\n",
		"fs/harness/remote.yaml":        "agent: agents/a.md\nruntime: script\nskills:\n  - https://github.com/acme/skills/tree/main/skills/x#sha256=" + pin + "\n",
		"fs/harness/noforge.yaml":       "agent: agents/a.md\nruntime: script\nskills:\n  - https://example.com/skills/x#sha256=" + pin + "\nallowed_remote_resources: [https://example.com/]\n",
		"fs/harness/docker.yaml":        "agent: agents/a.md\nruntime: script\n",
		"fs/harness/docker.script.yaml": "steps:\n  - say: hi\n",
		"hello/harness.yaml":            "agent: agents/a.md\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fs := filepath.Join(dir, "fs")
	hello := filepath.Join(dir, "hello")
	cases := []struct {
		name string
		args []string
		code int
		line string // the last line of stderr, exactly
	}{
		{"missing argument", []string{"validate"}, 2,
			"fullsend: missing HARNESS (see fullsend validate --help)"},
		{"missing argument of a subcommand", []string{"runs", "show"}, 2,
			"fullsend: missing RUN_ID (see fullsend runs show --help)"},
		{"directory for a harness", []string{"validate", hello}, 1,
			"fullsend: harness " + hello + ": is a directory; did you mean " + filepath.Join(hello, "harness.yaml") + "?"},
		{"misspelled flag", []string{"validate", "--fullsend-dirr", fs, "x"}, 2,
			"fullsend: unknown flag: --fullsend-dirr (did you mean --fullsend-dir?)"},
		{"misspelled command flag", []string{"resolve", "--ofline", "x"}, 2,
			"fullsend: unknown flag: --ofline (did you mean --offline?)"},
		{"unknown completion shell", []string{"completion", "tcsh"}, 2,
			`fullsend: completion "tcsh": not a supported shell; choose one of bash, fish, powershell, zsh`},
		{"misspelled harness field", []string{"validate", filepath.Join(fs, "harness/typo.yaml")}, 1,
			"fullsend: " + filepath.Join(fs, "harness/typo.yaml") + ":1: agnet: unknown field: did you mean agent?"},
		{"missing relative path, dir inferred", []string{"validate", filepath.Join(fs, "harness/missing.yaml")}, 1,
			"fullsend: " + filepath.Join(fs, "harness/missing.yaml") + ":1: agent: " + filepath.Join(fs, "agents/nope.md") + ": no such file or directory; relative paths resolve against the fullsend dir " + fs + " (inferred from the harness's location: the parent of its harness/ directory, else its own directory; --fullsend-dir sets another)"},
		{"missing relative path, dir given", []string{"--fullsend-dir", fs, "validate", filepath.Join(fs, "harness/missing.yaml")}, 1,
			"fullsend: " + filepath.Join(fs, "harness/missing.yaml") + ":1: agent: " + filepath.Join(fs, "agents/nope.md") + ": no such file or directory; relative paths resolve against the fullsend dir " + fs + " (given by --fullsend-dir)"},
		{"allowlist refusal", []string{"validate", filepath.Join(fs, "harness/remote.yaml")}, 1,
			"fullsend: " + filepath.Join(fs, "harness/remote.yaml") + ":4: skills[0]: reference \"https://github.com/acme/skills/tree/main/skills/x\": does not match any allowed_remote_resources entry (the harness's allowed_remote_resources is empty); to allow it, add `allowed_remote_resources: [https://github.com/acme/skills/]` to the harness and the same line to config.yaml (the org's list, which bounds the harness's)"},
		{"directory from a host that is no forge", []string{"resolve", filepath.Join(fs, "harness/noforge.yaml")}, 1,
			"fullsend: harness/noforge.yaml -> skills[0] https://example.com/skills/x: https://example.com/skills/x: directories can only be fetched from a configured forge (tree URL); if example.com is a GitHub or GitLab server, add it to config.yaml: `forges: [{host: example.com, type: github}]` (type: gitlab for GitLab; api_url and token_env when they differ from the defaults), then write the URL as https://example.com/OWNER/REPO/tree/REF/PATH"},
		{"docker sandbox without an image", []string{"--workspace", dir, "run", "--sandbox", "docker", "--target-repo", "none", filepath.Join(fs, "harness/docker.yaml")}, 1,
			"fullsend: sandbox docker: docker sandbox: no image: set sandbox.docker.image in config.yaml to a digest-pinned image (name@sha256:…), or image: in the harness"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runCLIHost(t, c.args...)
			if strings.Contains(stderr, "sandbox backend unavailable") {
				t.Skip("no docker engine: " + strings.TrimSpace(stderr))
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if last := lines[len(lines)-1]; code != c.code || last != c.line {
				t.Fatalf("exit %d, last stderr line\n%s\nwant exit %d and\n%s", code, last, c.code, c.line)
			}
		})
	}
}

// runCLIHost runs fullsend with the host's environment (the docker row
// needs DOCKER_HOST and friends).
func runCLIHost(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: os.Getenv}
	code := run(context.Background(), env, args)
	return code, out.String(), errb.String()
}
