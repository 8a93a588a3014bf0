//go:build unix

package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeNotRun are the README's command lines this test does not run, each
// with the reason; every other line of a ```sh block is run, in README
// order, by TestREADMECommands. A new command in README must either run
// here or be added with its reason.
var readmeNotRun = map[string]string{
	"go vet ./... && go test -race ./...":                                     "the test command itself",
	"go install ./cmd/fullsend":                                               "builds the binary; run here as `go build` (cliBinary)",
	"npm install -g @anthropic-ai/claude-code@2.1.332":                        "installs Claude Code from npm (CI's setup does; no registry traffic from tests)",
	"npm install --prefix /opt/claude-code @anthropic-ai/claude-code@2.1.332": "as above",
	"fullsend pin .fullsend/harness/hello.yaml skills https://github.com/fullsend-ai/agents/tree/main/skills/code-implementation": "reaches github.com; TestPinCLI runs pin against a fake forge",
	"GATEWAY_KEY=... fullsend run --target-repo ~/src/project .fullsend/harness/code.yaml":                                        "needs the reader's model gateway and project (internal/run TestHostServiceInSandbox runs one)",
}

// readmeCommands returns the command lines of README's ```sh blocks, with
// comments removed.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	comment := regexp.MustCompile(`\s+#.*$`)
	var cmds []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "```"):
			in = !in && strings.TrimSpace(strings.TrimPrefix(l, "```")) == "sh"
		case in:
			l = strings.TrimSpace(comment.ReplaceAllString(l, ""))
			if l != "" && !strings.HasPrefix(l, "#") {
				cmds = append(cmds, l)
			}
		}
	}
	return cmds
}

// TestREADMECommands runs README's commands in order, as a reader would:
// from a new git repository (with a copy of examples/), with the fullsend
// binary, each exiting 0 (doctor: 0 or 1, it reports this machine).
func TestREADMECommands(t *testing.T) {
	needLocalSandbox(t)
	cmds := readmeCommands(t)
	if len(cmds) < 10 {
		t.Fatalf("only %d README commands found: %q", len(cmds), cmds)
	}
	exe := cliBinary(t) // `go install ./cmd/fullsend`, as go build
	examples, err := filepath.Abs(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	repo := inGitRepo(t)
	if out, err := exec.Command("cp", "-R", examples, filepath.Join(repo, "examples")).CombinedOutput(); err != nil {
		t.Fatalf("copying examples: %v %s", err, out)
	}
	ran := 0
	for _, line := range cmds {
		if why, ok := readmeNotRun[line]; ok {
			t.Logf("not run: %s (%s)", line, why)
			continue
		}
		args := strings.Fields(line)
		if m := regexp.MustCompile(`^source <\((.*)\)$`).FindStringSubmatch(line); m != nil {
			args = strings.Fields(m[1]) // the script must print; sourcing needs bash-completion
		}
		switch {
		case len(args) > 3 && strings.Join(args[:3], " ") == "go run ./cmd/fullsend":
			args = args[3:]
		case len(args) > 0 && args[0] == "fullsend":
			args = args[1:]
		default:
			t.Errorf("README command %q is neither run by this test nor listed in readmeNotRun", line)
			continue
		}
		cmd := exec.Command(exe, args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "FULLSEND_CACHE_DIR=", "TRACEPARENT=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := cmd.ProcessState.ExitCode()
		ok := err == nil
		if args[0] == "doctor" {
			ok = (code == 0 || code == 1) && strings.Contains(stdout.String(), "claude")
		}
		if !ok {
			t.Errorf("%s: exit %d (%v)\nstdout:\n%s\nstderr:\n%s", line, code, err, stdout.String(), stderr.String())
		}
		if strings.HasPrefix(line, "source ") && !strings.Contains(stdout.String(), "complete") {
			t.Errorf("%s: no completion script:\n%s", line, stdout.String())
		}
		ran++
	}
	t.Logf("ran %d README commands", ran)
}
