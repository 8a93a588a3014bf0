//go:build linux

// Package e2e_test runs the runtime fetch path end to end: a harness with
// allow_runtime_fetch, the fetch service on the host, a real local sandbox
// reaching it through its egress proxy, and the script runtime calling
// `fullsend fetch-skill` inside the sandbox mid-run. The test binary plays
// the fullsend binary inside the sandbox (the local backend exposes the
// running executable as /usr/local/bin/fullsend), so TestMain dispatches
// "fetch-skill" to the real CLI.
package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/cli"
	"github.com/fullsend-ai/fullsend/internal/fetchsvc"
	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	"github.com/fullsend-ai/fullsend/internal/reexec"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/resolve"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
	"github.com/fullsend-ai/fullsend/internal/runtime/script"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/local"
	"github.com/fullsend-ai/fullsend/internal/scan"
	"github.com/fullsend-ai/fullsend/internal/syncbuf"
)

func TestMain(m *testing.M) {
	reexec.Main() // the local sandbox's roles
	if len(os.Args) > 1 && os.Args[1] == "fetch-skill" {
		os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	// Sandbox helper processes are this race-built binary: no 1 s exit sleep.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	os.Exit(m.Run())
}

// fixture is a fake forge serving one skill, the org config and harness
// allowing it, a cache, the fetch service and a real local sandbox whose
// only network is the service.
type fixture struct {
	ctx               context.Context
	digest            ref.Digest
	skillURL, evilURL string
	cacheDir          string
	store             *cas.Store
	svc               *fetchsvc.Server
	sess              sandbox.Session
	log               *syncbuf.Buffer
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	skill := map[string][]byte{
		"SKILL.md":                     []byte("---\nname: python-linting\ndescription: lint Python\n---\n# Python linting\nRun scripts/lint.sh.\n"),
		"scripts/lint.sh":              []byte("#!/bin/sh\necho \"lint ok from fetched skill\"\n"),
		"assets/deep/nested/rules.txt": []byte("rule-1: no tabs\n"),
	}
	d, err := cas.TreeHash(skill)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for p, b := range skill {
		files["skills/python-linting/"+p] = b
	}
	srv := forgetest.NewGitHub(t, forgetest.Repos{"fullsend-ai/library@abc123": files, "attacker/evil@abc123": files})
	f := &fixture{ctx: ctx, digest: d, cacheDir: t.TempDir(), log: &syncbuf.Buffer{}}
	f.skillURL = srv.TreeURL("fullsend-ai/library@abc123", "skills/python-linting") + "#sha256=" + string(d)
	f.evilURL = srv.TreeURL("attacker/evil@abc123", "skills/python-linting") + "#sha256=" + string(d)

	// Org config and harness as a user would write them.
	cfg := srv.OrgConfig("https://" + srv.WebHost() + "/")
	h, err := harness.Parse("h.yaml", []byte(fmt.Sprintf(`agent: agents/demo.md
allowed_remote_resources:
  - https://%s/fullsend-ai/library/
allow_runtime_fetch: true
`, srv.WebHost())))
	if err != nil {
		t.Fatal(err)
	}
	if f.store, err = cas.Open(f.cacheDir); err != nil {
		t.Fatal(err)
	}
	pl, err := scan.New(scan.OptionsFromConfig(cfg, nil))
	if err != nil {
		t.Fatal(err)
	}
	f.svc, err = fetchsvc.StartIfAllowed(ctx, harness.Materialize(h), fetchsvc.Options{
		Config: cfg, Store: f.store, Scanner: pl, Audit: audit.Open(audit.Path(f.cacheDir)), TraceID: "trace-e2e", Log: f.log,
		Network: func() (*resolve.Network, error) {
			return resolve.NewNetwork(cfg, srv.Getenv(""), srv.Reach), nil
		},
	})
	if err != nil || f.svc == nil {
		t.Fatalf("StartIfAllowed: %v %v", f.svc, err)
	}
	t.Cleanup(func() { f.svc.Close() })

	// The sandbox: no network but the fetch service.
	b, err := local.New(sandbox.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	f.sess, err = b.Provision(ctx, sandbox.Spec{WorkDir: runtime.WorkspaceDir, Network: sandbox.Network{Services: f.svc.Services()}})
	if errors.Is(err, sandbox.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.sess.Terminate(ctx) })
	f.svc.Attach(f.sess, nil)
	if r, err := f.sess.Exec(ctx, sandbox.ExecRequest{Args: []string{"mkdir", "-p", runtime.WorkspaceDir}, Cwd: "/"}); err != nil || r.ExitCode != 0 {
		t.Fatalf("mkdir workspace: %v %s", err, r.Stderr)
	}
	return f
}

// checkAudit: one runtime entry with the run's trace id, one budget slot
// used, the token in no log.
func (f *fixture) checkAudit(t *testing.T) {
	t.Helper()
	data, _ := os.ReadFile(audit.Path(f.cacheDir))
	var e audit.Entry
	if err := json.Unmarshal(data, &e); err != nil || strings.Count(string(data), "\n") != 1 ||
		e.FetchType != "runtime" || e.TraceID != "trace-e2e" || e.SHA256 != string(f.digest) || e.CacheHit {
		t.Errorf("audit %s", data)
	}
	if f.svc.Service().Used() != 1 {
		t.Errorf("used %d", f.svc.Service().Used())
	}
	if strings.Contains(f.log.String(), f.svc.Token()) || strings.Contains(string(data), f.svc.Token()) {
		t.Error("token logged")
	}
	if _, err := f.store.Get(f.digest); err != nil {
		t.Errorf("not cached: %v", err)
	}
}

// TestScriptRuntimeFetchesSkillMidRun: a script-runtime agent in a real
// local sandbox fetches a pinned skill from the (fake) forge mid-run, reads
// its SKILL.md, runs a companion script from a nested directory and reads
// a deeply nested asset; a fetch outside the allowlist fails inside the
// sandbox with one line on stderr and exit status 1.
func TestScriptRuntimeFetchesSkillMidRun(t *testing.T) {
	f := newFixture(t)
	ctx, sess, svc, logw := f.ctx, f.sess, f.svc, f.log
	skillURL, evilURL := f.skillURL, f.evilURL
	host := t.TempDir()
	agent := filepath.Join(host, "demo.md")
	os.WriteFile(agent, []byte("---\nname: demo\n---\nUse skills.\n"), 0o644)
	rt := script.New()
	env := svc.SandboxEnv("")
	if err := rt.Bootstrap(ctx, sess, runtime.BootstrapInput{AgentName: "demo", AgentFile: agent, Env: env}); err != nil {
		t.Fatal(err)
	}
	sc := filepath.Join(host, "script.yaml")
	os.WriteFile(sc, fmt.Appendf(nil, `steps:
  - fetch_skill: {url: %q, save: SKILL_DIR}
  - read: {path: "${SKILL_DIR}/SKILL.md", expect_contains: "Python linting"}
  - exec: {cmd: "sh ${SKILL_DIR}/scripts/lint.sh", expect_stdout_contains: "lint ok from fetched skill"}
  - expect: {path: "${SKILL_DIR}/assets/deep/nested/rules.txt", contains: "rule-1"}
  - exec: {cmd: "fullsend fetch-skill '%s' 2>err.txt; echo \"exit=$?\"; wc -l < err.txt; cat err.txt", cwd: /tmp, expect_stdout_contains: "exit=1", save: EVIL}
  - write_result: {value: {status: ok, dir: "${SKILL_DIR}", evil: "${EVIL}"}}
`, skillURL, evilURL), 0o644)
	out, err := rt.Run(ctx, sess, runtime.RunInput{AgentName: "demo", Iteration: 1, ResultPath: "/sandbox/workspace/result.json",
		WorkDir: runtime.WorkspaceDir, Env: env, Options: map[string]string{script.OptionScript: sc}})
	if err != nil || out.StopReason != runtime.StopCompleted {
		t.Fatalf("Run: %+v %v\nservice log:\n%s", out, err, logw.String())
	}
	res := filepath.Join(host, "result.json")
	if err := sess.Download(ctx, "/sandbox/workspace/result.json", res); err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	data, _ := os.ReadFile(res)
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got["dir"] != "/sandbox/claude-config/skills/python-linting" {
		t.Errorf("skill dir %q", got["dir"])
	}
	t.Logf("in-sandbox refusal:\n%s\nservice log:\n%s", got["evil"], logw.String())
	// The refused fetch: exit 1, exactly one line on stderr naming the rule.
	lines := strings.SplitN(got["evil"], "\n", 3)
	if len(lines) != 3 || lines[0] != "exit=1" || strings.TrimSpace(lines[1]) != "1" ||
		!strings.HasPrefix(lines[2], "fullsend: fetch-skill: ") || !strings.Contains(lines[2], "allowed_remote_resources") {
		t.Errorf("refused fetch in the sandbox: %q", got["evil"])
	}
	f.checkAudit(t)
}

// TestNativeRuntimeFetchesSkillMidRun: the native runtime's fetch_skill
// tool, driven by a fake model, runs `fullsend fetch-skill` in the real
// sandbox against the service; the model then reads a nested companion
// file of the fetched skill with read_skill_resource.
func TestNativeRuntimeFetchesSkillMidRun(t *testing.T) {
	f := newFixture(t)
	srv := modeltest.New(t, model.APIOpenAI,
		modeltest.Call("f1", "fetch_skill", map[string]any{"url": f.skillURL}),
		modeltest.Call("f2", "read_skill_resource", map[string]any{"skill": "python-linting", "path": "assets/deep/nested/rules.txt"}),
		modeltest.Call("f3", "fetch_skill", map[string]any{"url": f.evilURL}),
		modeltest.Say("done"),
	)
	host := t.TempDir()
	agent := filepath.Join(host, "demo.md")
	os.WriteFile(agent, []byte("---\nname: demo\n---\nUse skills.\n"), 0o644)
	cfg := srv.Config()
	menv := map[string]string{model.EnvBaseURL: cfg.BaseURL, model.EnvModel: "m", model.EnvAuth: "none"}
	rt := native.New(native.Options{Getenv: func(k string) string { return menv[k] }})
	runDir := filepath.Join(host, "run")
	env := f.svc.SandboxEnv("")
	if err := rt.Bootstrap(f.ctx, f.sess, runtime.BootstrapInput{AgentName: "demo", AgentFile: agent, RunDir: runDir, Env: env}); err != nil {
		t.Fatal(err)
	}
	out, err := rt.Run(f.ctx, f.sess, runtime.RunInput{AgentName: "demo", Prompt: "p", Iteration: 1, WorkDir: runtime.WorkspaceDir,
		RunDir: runDir, Env: env, Options: map[string]string{native.OptAllowFetch: "true"}})
	if err != nil || out.StopReason != runtime.StopCompleted {
		t.Fatalf("outcome %+v err %v\nservice log:\n%s", out, err, f.log.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests", len(reqs))
	}
	if txt, _ := reqs[1].LastToolResult(); !strings.Contains(txt, `skill "python-linting" is now available at /sandbox/claude-config/skills/python-linting`) {
		t.Errorf("fetch_skill result %q", txt)
	}
	if txt, _ := reqs[2].LastToolResult(); !strings.Contains(txt, "rule-1: no tabs") {
		t.Errorf("read_skill_resource result %q", txt)
	}
	if txt, _ := reqs[3].LastToolResult(); !strings.Contains(txt, "allowed_remote_resources") || strings.Contains(txt, f.svc.Token()) {
		t.Errorf("refused fetch_skill result %q", txt)
	}
	f.checkAudit(t)
}
