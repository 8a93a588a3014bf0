//go:build linux

package ci_test

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/fullsend-ai/fullsend/internal/corpustest"
)

// The repository's action.yml and example workflows, checked with the
// tools .ci/run builds (pinned, from the Go module proxy): actionlint
// (FULLSEND_ACTIONLINT_BIN) and act (FULLSEND_ACT_BIN). Without them the
// tests skip loudly, and .ci/run fails when they did.

func moduleRoot(t *testing.T) string {
	t.Helper()
	r, err := corpustest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestActionLint runs actionlint, with shellcheck on every run: script,
// over the example workflows and over a workflow made of action.yml's own
// steps (actionlint lints workflows, not action metadata): on:
// workflow_call declares the action's inputs, so ${{ inputs.* }},
// ${{ github.action_path }} and ${{ steps.*.outputs.* }} are checked as
// in the action, and the scripts go through shellcheck. actionlint also
// checks the examples' `uses: ./` against action.yml's inputs.
func TestActionLint(t *testing.T) {
	bin := os.Getenv("FULLSEND_ACTIONLINT_BIN")
	if bin == "" {
		t.Skip("ACTIONLINT SKIPPED: FULLSEND_ACTIONLINT_BIN not set (.ci/run builds actionlint)")
	}
	if _, err := exec.LookPath("shellcheck"); err != nil {
		t.Skip("ACTIONLINT SKIPPED: no shellcheck on PATH (.ci/run installs it)")
	}
	root := moduleRoot(t)
	dir := t.TempDir()
	wf := filepath.Join(dir, ".github", "workflows")
	if err := os.MkdirAll(wf, 0o755); err != nil {
		t.Fatal(err)
	}
	actionYAML, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "action.yml"), actionYAML, 0o644); err != nil {
		t.Fatal(err)
	}
	examples, _ := filepath.Glob(filepath.Join(root, "examples", "ci", "github", "*.yml"))
	if len(examples) < 3 {
		t.Fatalf("example workflows: %v", examples)
	}
	for _, e := range examples {
		data, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(wf, filepath.Base(e)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	steps, err := actionStepsWorkflow(actionYAML)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wf, "action-steps.yml"), steps, 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q")
	cmd := exec.Command(bin, "-color=false")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("actionlint: %v\n%s\n(action.yml's steps as a workflow:\n%s)", err, out, steps)
	}
}

// actionStepsWorkflow turns action.yml into a workflow with one job whose
// steps are the action's steps, called with the action's inputs.
func actionStepsWorkflow(actionYAML []byte) ([]byte, error) {
	var a struct {
		Inputs map[string]struct {
			Description string `yaml:"description"`
			Required    bool   `yaml:"required"`
			Default     string `yaml:"default"`
		} `yaml:"inputs"`
		Runs struct {
			Using string           `yaml:"using"`
			Steps []map[string]any `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(actionYAML, &a); err != nil {
		return nil, err
	}
	inputs := map[string]any{}
	for name, in := range a.Inputs {
		spec := map[string]any{"type": "string", "required": in.Required}
		if !in.Required {
			spec["default"] = in.Default
		}
		inputs[name] = spec
	}
	wf := map[string]any{
		"name":        "action.yml steps",
		"on":          map[string]any{"workflow_call": map[string]any{"inputs": inputs}},
		"permissions": map[string]any{"contents": "read"},
		"jobs": map[string]any{"action": map[string]any{
			"runs-on": "ubuntu-latest",
			"steps":   a.Runs.Steps,
		}},
	}
	return yaml.Marshal(wf)
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.email=ci@fullsend.test", "-c", "user.name=ci", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// stage copies the module (no .git, no run state or caches) into a fresh
// git repository: act reads the commit and event from one.
func stage(t *testing.T, root string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if n := d.Name(); rel != "." && (n == ".git" || strings.HasPrefix(n, ".fullsend")) {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() || d.Name() == ".git" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
	git(t, dst, "init", "-q")
	git(t, dst, "add", "-A")
	git(t, dst, "commit", "-q", "-m", "staged for act")
	return dst
}

// TestActionE2E runs examples/ci/github/hello.yml with act in host mode
// (-P ubuntu-latest=-self-hosted): the workflow builds fullsend from the
// action's source (`uses: ./`), runs examples/hello, checks its outputs,
// then runs hello on a checkout carrying a prompt injection (blocked).
// The test asserts the step outputs fullsend wrote, the job summary and
// the annotations as act read them from the step's output. Nothing
// leaves the machine: actions/checkout of the local repository is
// act's own copy, actions/setup-go is replaced by a local stand-in (the
// host's Go), the Go module proxy is off and HTTP(S) goes to a closed
// loopback port.
func TestActionE2E(t *testing.T) {
	act := os.Getenv("FULLSEND_ACT_BIN")
	if act == "" {
		t.Skip("ACT E2E SKIPPED: FULLSEND_ACT_BIN not set (.ci/run builds nektos/act)")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("ACT E2E SKIPPED: no git")
	}
	root := moduleRoot(t)
	repo := stage(t, root)
	stub := t.TempDir()
	if err := os.WriteFile(filepath.Join(stub, "action.yml"), []byte("name: setup-go stand-in\ndescription: the host's Go toolchain\n"+
		"inputs:\n  go-version-file: {required: false, default: \"\"}\n  go-version: {required: false, default: \"\"}\n"+
		"runs:\n  using: composite\n  steps:\n    - run: go version\n      shell: bash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, act, "workflow_dispatch", "--input", "show-blocked=true",
		"-W", "examples/ci/github/hello.yml", "-P", "ubuntu-latest=-self-hosted",
		"--local-repository", "actions/setup-go@v5="+stub, "--no-cache-server", "--actor", "fullsend-test")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly",
		"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "https_proxy=http://127.0.0.1:9", "http_proxy=http://127.0.0.1:9", "NO_PROXY=", "no_proxy=")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	log := string(out)
	t.Logf("act ran the workflow in %s", time.Since(start).Round(time.Second))
	if err != nil {
		t.Fatalf("act: %v\n%s", err, log)
	}
	for _, want := range []string{
		// the workflow's own checks passed on the outputs fullsend wrote
		"hello: status=succeeded run-id=",
		"blocked: status=blocked findings=1 exit-code=1",
		"🏁  Job succeeded",
		// outputs as act read them from $GITHUB_OUTPUT
		"::set-output:: status=succeeded",
		"::set-output:: skipped=false",
		"::set-output:: status=blocked",
		// the job summary
		"Summary - ### ✅ fullsend run ",
		"| agent | hello |",
		"#### Phases",
		"Summary - ### ⛔ fullsend run ",
		"#### Findings (1)",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("act output lacks %q", want)
		}
	}
	// The annotations: the blocking findings on AGENTS.md line 3, and the
	// run's error.
	ann := regexp.MustCompile(`::error file=AGENTS\.md,line=3,col=\d+,title=fullsend injection%3A injection/instruction-override \(blocked the run\)::instruction override`)
	if !ann.MatchString(log) {
		t.Errorf("no finding annotation in act's output")
	}
	if !strings.Contains(log, "::error title=fullsend::host_scan: AGENTS.md:3:1:") {
		t.Errorf("no error annotation in act's output")
	}
	if t.Failed() {
		t.Logf("act output:\n%s", log)
	}
}
