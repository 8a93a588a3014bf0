package run_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/cli/clitest"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/resolve"
	"github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/sandboxtest"
)

// envCLI makes a re-executed test binary behave as the fullsend CLI (the
// SIGINT test runs `fullsend run` in a child process).
const envCLI = "FULLSEND_RUNTEST_CLI"

// TestMain: inside the local sandbox the test binary is
// /usr/local/bin/fullsend, so `fullsend scan context` must reach the CLI.
func TestMain(m *testing.M) {
	clitest.ActAsCLI(envCLI)
	// The run key (package rundir) lives in a private state directory.
	state, err := os.MkdirTemp("", "fullsend-run-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", state)
	code := m.Run()
	os.RemoveAll(state)
	os.Exit(code)
}

// needLocal skips when the local sandbox cannot run here.
func needLocal(t testing.TB) {
	t.Helper()
	if err := sandboxtest.Unavailable("local"); err != nil {
		t.Skipf("local sandbox unavailable: %v", err)
	}
}

const agentMD = `---
name: tester
description: Test agent.
skills:
  - alpha
---

You are the test agent.
`

const alphaSkill = `---
name: alpha
description: The alpha skill.
---

# Alpha

Say alpha.
`

const resultSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["status"],
  "additionalProperties": false,
  "properties": {"status": {"type": "string", "enum": ["ok"]}}
}`

const policyYAML = `version: 1
filesystem_policy:
  include_workdir: true
  read_only: [/usr, /lib, /etc, /app-does-not-exist]
  read_write: [/sandbox, /tmp]
network_policies:
  api:
    name: api
    endpoints:
      - {host: api.example.test, port: 443}
`

const okScript = `steps:
  - write_result: {value: {status: ok}}
`

// fixture is a fullsend dir, a workspace and a target repository.
type fixture struct {
	t         *testing.T
	dir       string // fullsend dir
	workspace string
	repo      string // target repository ("" = none)
	cfg       *config.Config
	tmp       string // sandbox temp dir (checked empty after runs)
	env       map[string]string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{t: t, dir: filepath.Join(root, "fs"), workspace: filepath.Join(root, "ws"), tmp: filepath.Join(root, "sbtmp"),
		cfg: config.Default(), env: map[string]string{}}
	f.write("agents/tester.md", agentMD)
	f.write("skills/alpha/SKILL.md", alphaSkill)
	f.write("schemas/result.schema.json", resultSchema)
	f.write("policies/p.yaml", policyYAML)
	f.write("script.yaml", okScript)
	for _, d := range []string{f.workspace, f.tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fixture) write(rel, content string) string {
	f.t.Helper()
	p := filepath.Join(f.dir, rel)
	writeFile(f.t, p, content)
	return p
}

func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newRepo creates a git repository with the given files.
func (f *fixture) newRepo(files map[string]string) string {
	f.t.Helper()
	repo := filepath.Join(filepath.Dir(f.dir), "myrepo")
	for rel, c := range files {
		writeFile(f.t, filepath.Join(repo, rel), c)
	}
	writeFile(f.t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	writeFile(f.t, filepath.Join(repo, ".git", "info", "exclude"), "# git ls-files --others --exclude-from=.git/info/exclude\n*.swp\n")
	f.repo = repo
	return repo
}

func (f *fixture) getenv(k string) string { return f.env[k] }

// plan resolves harness (YAML text written as harness.yaml) and plans it,
// filling in the fixture's defaults: script runtime with script.yaml, the
// fixture repository (or none). TargetRepo "cwd" means "" (the default
// lookup from Cwd).
func (f *fixture) plan(harnessYAML string, o run.Options) (*run.Plan, error) {
	f.t.Helper()
	if o.Runtime == "" && o.RuntimeFlags == nil {
		o.Runtime, o.RuntimeFlags = "script", scriptFlags(filepath.Join(f.dir, "script.yaml"))
	}
	return f.planKeep(harnessYAML, o)
}

// planKeep is plan without the runtime defaults.
func (f *fixture) planKeep(harnessYAML string, o run.Options) (*run.Plan, error) {
	f.t.Helper()
	hp := f.write("harness.yaml", harnessYAML)
	store, err := cas.Open(filepath.Join(f.workspace, ".fullsend-cache"))
	if err != nil {
		f.t.Fatal(err)
	}
	res, err := resolve.Resolve(context.Background(), hp, resolve.Options{Config: f.cfg, Root: f.dir, Store: store, Offline: true})
	if err != nil {
		return nil, err
	}
	if o.Workspace == "" {
		o.Workspace = f.workspace
	}
	if o.Cwd == "" {
		o.Cwd = f.workspace
	}
	switch o.TargetRepo {
	case "cwd":
		o.TargetRepo = ""
	case "":
		o.TargetRepo = f.repo
		if f.repo == "" {
			o.TargetRepo = "none"
		}
	}
	if o.FullsendDir == "" {
		o.FullsendDir = f.dir
	}
	if o.Getenv == nil {
		o.Getenv = f.getenv
	}
	return run.NewPlan(res, f.cfg, o)
}

func (f *fixture) mustPlan(harnessYAML string, o run.Options) *run.Plan {
	f.t.Helper()
	p, err := f.plan(harnessYAML, o)
	if err != nil {
		f.t.Fatalf("plan: %v", err)
	}
	return p
}

// execute runs p in the real local sandbox; snap receives a copy of the
// sandbox's /sandbox (and /tmp) taken just before teardown.
type snapshot struct {
	root string // host copy of /sandbox
	tmp  string // host copy of /tmp
}

func (s snapshot) read(t testing.TB, sandboxPath string) string {
	t.Helper()
	var p string
	switch {
	case strings.HasPrefix(sandboxPath, "/sandbox/"):
		p = filepath.Join(s.root, strings.TrimPrefix(sandboxPath, "/sandbox/"))
	case strings.HasPrefix(sandboxPath, "/tmp/"):
		p = filepath.Join(s.tmp, strings.TrimPrefix(sandboxPath, "/tmp/"))
	default:
		t.Fatalf("snapshot: %s not captured", sandboxPath)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("sandbox file %s: %v", sandboxPath, err)
	}
	return string(b)
}

func (s snapshot) exists(sandboxPath string) bool {
	_, err := os.Lstat(filepath.Join(s.root, strings.TrimPrefix(sandboxPath, "/sandbox/")))
	return err == nil
}

func (f *fixture) execute(p *run.Plan, o run.ExecOptions) (*run.Report, snapshot, error) {
	f.t.Helper()
	needLocal(f.t)
	var snap snapshot
	if o.BeforeTeardown == nil {
		o.BeforeTeardown = func(s sandbox.Session) {
			snap.root = f.t.TempDir()
			snap.tmp = f.t.TempDir()
			ctx := context.Background()
			if err := s.Download(ctx, "/sandbox", snap.root); err != nil {
				f.t.Errorf("snapshot /sandbox: %v", err)
			}
			if err := s.Download(ctx, "/tmp", snap.tmp); err != nil {
				f.t.Errorf("snapshot /tmp: %v", err)
			}
		}
	}
	o.SandboxOptions.TempDir = f.tmp
	var warn bytes.Buffer
	if o.Warn == nil {
		o.Warn = &warn
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := run.Execute(ctx, p, o)
	if rep == nil {
		f.t.Fatalf("Execute returned no report: %v", err)
	}
	f.assertTornDown()
	return rep, snap, err
}

// mustExecute is execute for a run that must succeed.
func (f *fixture) mustExecute(p *run.Plan, o run.ExecOptions) (*run.Report, snapshot) {
	f.t.Helper()
	rep, snap, err := f.execute(p, o)
	if err != nil {
		f.t.Fatalf("run: %v", err)
	}
	return rep, snap
}

// assertTornDown checks the sandbox left nothing in its temp dir.
func (f *fixture) assertTornDown() {
	f.t.Helper()
	ents, err := os.ReadDir(f.tmp)
	if err != nil {
		f.t.Fatal(err)
	}
	if len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		f.t.Errorf("sandbox temp dir not cleaned after the run: %v", names)
	}
}

func phase(r *run.Report, name string) *run.Phase {
	for i := range r.Phases {
		if r.Phases[i].Name == name {
			return &r.Phases[i]
		}
	}
	return nil
}

// processesMatching lists pids whose command line contains marker.
func processesMatching(marker string) []string {
	ents, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(marker)) {
			pids = append(pids, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return pids
}

const baseHarness = `agent: agents/tester.md
policy: policies/p.yaml
skills:
  - skills/alpha
runtime: script
validation_loop:
  schema: schemas/result.schema.json
  max_iterations: 2
timeout_minutes: 5
`

func sandboxOpts(tmp string) sandbox.Options { return sandbox.Options{TempDir: tmp} }
