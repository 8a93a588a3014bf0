package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/model"
	runpkg "github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/rundir"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/backends"
	"github.com/fullsend-ai/fullsend/internal/scaffold"
)

// The first hour of a user: fresh clone, lock, typos, runs in a git
// repository, scripts reading --json, fullsend init and doctor.

// freshClone copies examples/hello into a new directory laid out like a
// fresh clone (no .fullsend, no cache), makes it the current directory and
// returns it.
func freshClone(t *testing.T) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("..", "..", "examples", "hello"))
	if err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	dst := filepath.Join(clone, "examples", "hello")
	err = filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(clone)
	return clone
}

// gitInit makes dir a real git work tree with an identity for commits.
func gitInit(t *testing.T, dir string) {
	t.Helper()
	git(t, dir, "init", "-q")
	git(t, dir, "config", "user.email", "test@example.invalid")
	git(t, dir, "config", "user.name", "test")
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// backticked returns the command quoted in a message ("run `…`").
func backticked(t *testing.T, msg string) []string {
	t.Helper()
	m := regexp.MustCompile("`([^`]+)`").FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("no command in %q", msg)
	}
	f := strings.Fields(m[1])
	if len(f) < 2 || f[0] != "fullsend" {
		t.Fatalf("not a fullsend command: %q", m[1])
	}
	return f[1:]
}

// TestLockFreshClone (issue 14, 1): on a fresh clone `fullsend lock
// examples/hello/harness.yaml` writes lock.yaml into the fullsend dir the
// harness resolves against (examples/hello), the --frozen hint is a
// command that works from where the user stands, and --fullsend-dir and
// the inferred dir name the same lock file.
func TestLockFreshClone(t *testing.T) {
	clone := freshClone(t)
	h := filepath.Join("examples", "hello", "harness.yaml")
	code, _, errs := runCLI(t, "resolve", "--frozen", h)
	if code != 1 || !strings.Contains(errs, "`fullsend lock examples/hello/harness.yaml`") {
		t.Fatalf("frozen without lock: exit %d %q", code, errs)
	}
	// Run the hint exactly as printed, from the same directory.
	hint := backticked(t, errs)
	code, out, errs := runCLI(t, hint...)
	if code != 0 {
		t.Fatalf("%v: exit %d %s", hint, code, errs)
	}
	lockFile := filepath.Join(clone, "examples", "hello", "lock.yaml")
	if _, err := os.Stat(lockFile); err != nil {
		t.Fatalf("lock.yaml not in the harness's fullsend dir: %v (stdout %q)", err, out)
	}
	if !strings.Contains(out, filepath.Join("examples", "hello", "lock.yaml")) {
		t.Errorf("lock output does not name the file: %q", out)
	}
	if _, err := os.Stat(filepath.Join(clone, ".fullsend")); !os.IsNotExist(err) {
		t.Errorf("lock created ./.fullsend: %v", err)
	}
	if code, _, errs := runCLI(t, "resolve", "--frozen", h); code != 0 {
		t.Fatalf("frozen after lock: exit %d %s", code, errs)
	}
	// The same dir named explicitly reads the same lock file.
	if code, _, errs := runCLI(t, "--fullsend-dir", filepath.Join("examples", "hello"), "resolve", "--frozen", "harness.yaml"); code != 0 {
		t.Fatalf("--fullsend-dir resolve --frozen: exit %d %s", code, errs)
	}
	// An explicit fullsend dir that does not exist yet is created (a
	// harness with absolute references needs nothing from it).
	hello := filepath.Join(clone, "examples", "hello")
	abs := filepath.Join(clone, "abs", "harness.yaml")
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(abs, []byte("agent: "+filepath.Join(hello, "agents", "hello.md")+"\nskills:\n  - "+filepath.Join(hello, "skills", "greeting")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(clone, "org", ".fullsend")
	h = filepath.Join("abs", "harness.yaml")
	code, _, errs = runCLI(t, "--fullsend-dir", other, "resolve", "--frozen", h)
	if code != 1 {
		t.Fatalf("frozen in an empty dir: exit %d %s", code, errs)
	}
	hint = backticked(t, errs)
	if !strings.Contains(strings.Join(hint, " "), "--fullsend-dir "+other) {
		t.Errorf("hint %v does not carry --fullsend-dir", hint)
	}
	if code, _, errs := runCLI(t, hint...); code != 0 {
		t.Fatalf("%v: exit %d %s", hint, code, errs)
	}
	if _, err := os.Stat(filepath.Join(other, "lock.yaml")); err != nil {
		t.Fatalf("lock in the --fullsend-dir: %v", err)
	}
	if code, _, errs := runCLI(t, "--fullsend-dir", other, "resolve", "--frozen", h); code != 0 {
		t.Fatalf("--fullsend-dir lock then resolve --frozen: exit %d %s", code, errs)
	}
}

// TestValidateUnknownRuntime (issue 14, 4): a runtime typo in the harness
// or in config.yaml fails validate with file:line: runtime.
func TestValidateUnknownRuntime(t *testing.T) {
	clone := freshClone(t)
	h := filepath.Join(clone, "examples", "hello", "harness.yaml")
	b, _ := os.ReadFile(h)
	typo := strings.Replace(string(b), "runtime: script", "runtime: scrpit", 1)
	if typo == string(b) {
		t.Fatal("example has no runtime: script")
	}
	if err := os.WriteFile(h, []byte(typo), 0o644); err != nil {
		t.Fatal(err)
	}
	line := 1 + strings.Count(typo[:strings.Index(typo, "runtime: scrpit")], "\n")
	code, _, errs := runCLI(t, "validate", h)
	want := h + ":" + itoa(int64(line)) + ": runtime: "
	if code != 1 || !strings.Contains(oneStderrLine(t, errs), want) || !strings.Contains(errs, `"scrpit"`) || !strings.Contains(errs, "script") {
		t.Fatalf("validate: exit %d %q, want %q", code, errs, want)
	}
	// run refuses it before resolving anything else or creating a run.
	ws := t.TempDir()
	code, _, errs = runCLI(t, "--workspace", ws, "run", "--target-repo", "none", h)
	if code != 1 || !strings.Contains(errs, want) {
		t.Fatalf("run: exit %d %q", code, errs)
	}
	assertNoRuns(t, ws)

	// The config's runtime (the default of harnesses naming none).
	if err := os.WriteFile(h, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(clone, "examples", "hello", "config.yaml")
	if err := os.WriteFile(cfg, []byte("version: \"1\"\n\nruntime: natvie\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, "validate", h)
	if code != 1 || !strings.Contains(errs, cfg+":3: runtime: ") || !strings.Contains(errs, `"natvie"`) {
		t.Fatalf("config runtime: exit %d %q", code, errs)
	}
}

// assertNoRuns fails when a run directory exists under ws: Execute creates
// it first, so none means nothing was provisioned.
func assertNoRuns(t *testing.T, ws string) {
	t.Helper()
	ents, _ := os.ReadDir(runpkg.RunsDir(ws))
	for _, e := range ents {
		if e.IsDir() {
			t.Fatalf("a run was started: %s", e.Name())
		}
	}
}

// TestRunUsageErrorsBeforeProvisioning (issue 14, 4 and 9): an unknown
// --runtime, a missing --script, a native run without a model, or a model
// key with FULLSEND_MODEL_AUTH=none exit 2 with one line, and no run (so
// no sandbox) was started.
func TestRunUsageErrorsBeforeProvisioning(t *testing.T) {
	for _, k := range []string{model.EnvAPI, model.EnvBaseURL, model.EnvModel, model.EnvAuth, model.EnvKeyEnv, model.EnvAPIKey} {
		t.Setenv(k, "")
	}
	// Should a check regress, the runtime must still reach nothing but a
	// closed loopback port.
	t.Setenv(model.EnvBaseURL, "http://127.0.0.1:9/v1")
	hello, err := filepath.Abs(filepath.Join("..", "..", "examples", "hello", "harness.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"unknown runtime", nil, []string{"--runtime", "foo"}, `--runtime: unknown runtime "foo" (known: claude, native, script)`},
		{"missing script", nil, []string{"--script", filepath.Join(ws, "nope.yaml")}, "--script " + filepath.Join(ws, "nope.yaml") + ": no such file"},
		{"script is a directory", nil, []string{"--script", ws}, "not a regular file"},
		{"native without model", map[string]string{model.EnvAuth: "none"}, []string{"--runtime", "native"}, "model config model: no model named"},
		{"native without key", nil, []string{"--runtime", "native", "--model", "m"}, "bearer auth needs a key in FULLSEND_API_KEY"},
		{"auth none with a key", map[string]string{model.EnvAuth: "none", model.EnvAPIKey: "sk-test-0123456789"}, []string{"--runtime", "native", "--model", "m"}, "FULLSEND_MODEL_AUTH=none but FULLSEND_API_KEY holds a key"},
		{"native flag with another runtime", nil, []string{"--runtime", "script", "--model", "m"}, `--model: only for the native runtime (runtime is "script")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			code, _, errs := runCLI(t, append(append([]string{"--workspace", ws, "run", "--target-repo", "none"}, tc.args...), hello)...)
			if code != ExitUsage || !strings.Contains(oneStderrLine(t, errs), tc.want) {
				t.Fatalf("exit %d %q, want 2 %q", code, errs, tc.want)
			}
			if strings.Contains(errs, "sk-test-0123456789") {
				t.Fatal("the key was printed")
			}
			assertNoRuns(t, ws)
		})
	}
}

// TestRunNoTargetRepo (issue 14, 7): outside a git repository and without
// --target-repo, run exits 2 with one line suggesting --target-repo; with
// --target-repo none it runs and the summary says which repository was used.
func TestRunNoTargetRepo(t *testing.T) {
	needLocalSandbox(t)
	hello, err := filepath.Abs(filepath.Join("..", "..", "examples", "hello", "harness.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	t.Chdir(outside)
	ws := t.TempDir()
	code, _, errs := runCLI(t, "--workspace", ws, "run", hello)
	if code != ExitUsage || !strings.Contains(oneStderrLine(t, errs), "--target-repo DIR") || !strings.Contains(errs, "--target-repo none") || !strings.Contains(errs, outside) {
		t.Fatalf("no repo: exit %d %q", code, errs)
	}
	assertNoRuns(t, ws)
	code, out, errs := runCLI(t, "--workspace", ws, "run", "--target-repo", "none", hello)
	if code != 0 || !strings.Contains(out, "\nrepo      none") {
		t.Fatalf("--target-repo none: exit %d\n%s\n%s", code, out, errs)
	}
}

// TestFirstHourInAGitRepo (issue 14, 6, 7, 8 and init): in a fresh git
// repository, `fullsend init`, commit, `fullsend run --json` of the
// scaffolded harness (named by its agent name) succeeds, prints exactly one
// JSON object, names the repository, and leaves `git status` clean; lock
// adds only lock.yaml (meant to be committed); runs show takes latest and
// unique prefixes.
func TestFirstHourInAGitRepo(t *testing.T) {
	needLocalSandbox(t)
	repo := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	gitInit(t, repo)
	if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte("# repo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(repo)
	code, out, errs := runCLI(t, "init")
	if code != 0 || !strings.Contains(out, "fullsend run "+filepath.Join(".fullsend", "harness", "hello.yaml")) {
		t.Fatalf("init: exit %d\n%s\n%s", code, out, errs)
	}
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "fullsend init")

	code, out, errs = runCLI(t, "run", "--json", scaffold.AgentName)
	if code != 0 {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var v runJSON
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON value:\n%s", out)
	}
	if v.Status != runpkg.StatusSucceeded || v.ExitCode != 0 || v.RunID == "" || v.Valid == nil || !*v.Valid ||
		v.TargetRepo != repo || v.Findings != 0 || len(v.Phases) == 0 || v.DurationMS <= 0 && v.Phases[0].DurationMS <= 0 {
		t.Fatalf("run --json: %+v", v)
	}
	if b, err := os.ReadFile(v.Result); err != nil || !strings.Contains(string(b), "Hello, world!") {
		t.Fatalf("result %s: %s %v", v.Result, b, err)
	}
	// The run directory lives in the user's state directory (issue 25),
	// never in the repository.
	stateRuns, err := rundir.WorkspaceRunsDir(os.Getenv, repo)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(filepath.Dir(v.Result)) != v.RunDir || filepath.Dir(v.RunDir) != stateRuns {
		t.Fatalf("result %s, run dir %s, want it in %s", v.Result, v.RunDir, stateRuns)
	}
	if _, err := os.Lstat(filepath.Join(repo, ".fullsend", "runs")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a run wrote into the repository: %v", err)
	}
	// The cache carries its .gitignore (it holds no file yet that git
	// would list, so check the file itself).
	for _, d := range []string{".fullsend-cache"} {
		if b, err := os.ReadFile(filepath.Join(repo, d, ".gitignore")); err != nil || !strings.Contains(string(b), "\n*\n") {
			t.Errorf("%s/.gitignore: %q %v", d, b, err)
		}
	}
	// A scan finding is logged into the cache (findings.jsonl).
	scanLogsFinding(t, repo)
	// Nothing fullsend wrote shows up in git status.
	if st := git(t, repo, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("git status after a run:\n%s", st)
	}
	// The human summary names the repository.
	code, out, _ = runCLI(t, "runs", "show", "latest")
	if code != 0 || !strings.Contains(out, "repo      "+repo+" (git)\n") || !strings.Contains(out, v.RunID) {
		t.Fatalf("runs show latest: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "runs", "show", "--json", v.RunID[:len(v.RunID)-3])
	if code != 0 || !strings.Contains(out, `"run_id": "`+v.RunID+`"`) {
		t.Fatalf("runs show PREFIX: exit %d\n%s", code, out)
	}
	// lock.yaml is the one file meant to be committed.
	if code, _, errs := runCLI(t, "lock", scaffold.AgentName); code != 0 {
		t.Fatalf("lock: exit %d %s", code, errs)
	}
	if st := git(t, repo, "status", "--porcelain", "--untracked-files=all"); st != "?? .fullsend/lock.yaml\n" {
		t.Fatalf("git status after lock:\n%s", st)
	}
}

// TestScanLeavesGitStatusClean: `fullsend scan` alone creates the cache
// (its findings log) and hides it from git.
func TestScanLeavesGitStatusClean(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	gitInit(t, repo)
	t.Chdir(repo)
	scanLogsFinding(t, repo)
	if st := git(t, repo, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("git status after a scan:\n%s", st)
	}
}

// scanLogsFinding runs `fullsend scan` on a file with a finding (a
// bidi override) and checks the finding was logged into repo's cache.
func scanLogsFinding(t *testing.T, repo string) {
	t.Helper()
	suspicious := filepath.Join(t.TempDir(), "notes.md")
	if err := os.WriteFile(suspicious, []byte("total = 1 \u202e 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runCLI(t, "scan", suspicious)
	if _, err := os.Stat(filepath.Join(repo, ".fullsend-cache", "findings.jsonl")); err != nil {
		t.Fatalf("no findings log in the cache: %v", err)
	}
}

// TestRunJSONError: a run that fails before it starts still prints one
// JSON object (status "error") and keeps its exit status.
func TestRunJSONError(t *testing.T) {
	ws := t.TempDir()
	code, out, errs := runCLI(t, "--workspace", ws, "run", "--json", "--runtime", "foo", "--target-repo", "none", filepath.Join("..", "..", "examples", "hello", "harness.yaml"))
	var v runJSON
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("stdout %q: %v", out, err)
	}
	if code != ExitUsage || v.Status != "error" || v.ExitCode != ExitUsage || !strings.Contains(v.Error, "unknown runtime") || !strings.Contains(errs, "unknown runtime") {
		t.Fatalf("exit %d %+v %q", code, v, errs)
	}
}

// TestRunsShowPrefix: a unique prefix selects a run, an ambiguous one is
// a usage error listing the candidates, latest is the newest.
func TestRunsShowPrefix(t *testing.T) {
	ws := t.TempDir()
	dir := runpkg.RunsDir(ws)
	ids := []string{"20260101T000000.000Z-aaaaaa", "20260101T000000.000Z-aaabbb", "20260102T000000.000Z-cccccc"}
	for _, id := range ids {
		if err := os.MkdirAll(filepath.Join(dir, id), 0o700); err != nil {
			t.Fatal(err)
		}
		rep := `{"version": 1, "run_id": "` + id + `", "status": "succeeded"}`
		if err := os.WriteFile(filepath.Join(dir, id, runpkg.ReportFile), []byte(rep), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		arg  string
		code int
		want string
	}{
		{"latest", 0, ids[2]},
		{"20260102", 0, ids[2]},
		{"20260101T000000.000Z-aaab", 0, ids[1]},
		{ids[0], 0, ids[0]},
		{"20260101", ExitUsage, "ambiguous: 2 runs match (" + ids[1] + ", " + ids[0] + ")"},
		{"2027", ExitFailure, "no such run"},
		{"../x", ExitUsage, "not a run id"},
	} {
		code, out, errs := runCLI(t, "--workspace", ws, "runs", "show", "--json", tc.arg)
		if code != tc.code || !strings.Contains(out+errs, tc.want) {
			t.Errorf("runs show %s: exit %d\n%s%s\nwant %d %q", tc.arg, code, out, errs, tc.code, tc.want)
		}
	}
	empty := t.TempDir()
	if code, _, errs := runCLI(t, "--workspace", empty, "runs", "show", "latest"); code != ExitFailure || !strings.Contains(errs, "no runs") {
		t.Errorf("latest without runs: exit %d %q", code, errs)
	}
}

// TestInterrupted (issue 14, 9): a command stopped by the signal context
// prints "fullsend: interrupted" (not "context canceled") and exits 130.
func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb strings.Builder
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code := run(ctx, env, []string{"--workspace", t.TempDir(), "run", "--target-repo", "none", filepath.Join("..", "..", "examples", "hello", "harness.yaml")})
	if code != ExitInterrupted || errb.String() == "" || !strings.HasSuffix(errb.String(), "fullsend: interrupted\n") || strings.Contains(errb.String(), "context canceled") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	// The run's summary says so too.
	if !strings.Contains(out.String(), "  canceled\n") || !strings.Contains(out.String(), "error     interrupted\n") || strings.Contains(out.String(), "context canceled") {
		t.Fatalf("summary:\n%s", out.String())
	}
}

// TestInitScaffold: init writes the documented files, refuses to
// overwrite (exit 1 naming them) unless --force, validates, and its
// harness runs as is in the local sandbox.
func TestInitScaffold(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fs")
	code, out, errs := runCLI(t, "init", dir)
	if code != 0 {
		t.Fatalf("init: exit %d %s", code, errs)
	}
	for _, f := range scaffold.Files() {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Path))); err != nil {
			t.Errorf("%s: %v", f.Path, err)
		}
	}
	h := filepath.Join(dir, "harness", "hello.yaml")
	if !strings.Contains(out, h) {
		t.Errorf("init output does not name the harness:\n%s", out)
	}
	code, _, errs = runCLI(t, "init", dir)
	if code != ExitFailure || !strings.Contains(oneStderrLine(t, errs), "config.yaml") || !strings.Contains(errs, "--force") {
		t.Fatalf("init again: exit %d %q", code, errs)
	}
	if code, _, errs := runCLI(t, "init", "--force", dir); code != 0 {
		t.Fatalf("init --force: exit %d %s", code, errs)
	}
	if code, out, errs := runCLI(t, "validate", h); code != 0 || !strings.Contains(out, "valid: ") {
		t.Fatalf("validate: exit %d\n%s\n%s", code, out, errs)
	}
	needLocalSandbox(t)
	ws := t.TempDir()
	code, out, errs = runCLI(t, "--workspace", ws, "run", "--target-repo", "none", h)
	if code != 0 || !strings.Contains(out, "result    valid (iteration 1 of 2)") {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
}

// TestDoctor: every check is reported with a status; a token's value is
// never printed; a broken config.yaml is a failure (exit 1); the local
// sandbox checks pass where the local sandbox works.
func TestDoctor(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "no-docker.sock"))
	fs := t.TempDir()
	ws := t.TempDir()
	const secret = "ghp_doctorTestSecretValue0123456789"
	var out, errb strings.Builder
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == "GITHUB_TOKEN" {
			return secret
		}
		return ""
	}}
	code := run(context.Background(), env, []string{"--workspace", ws, "--fullsend-dir", fs, "doctor", "--json"})
	var res struct {
		OK     bool          `json:"ok"`
		Checks []doctorCheck `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out.String())
	}
	if strings.Contains(out.String()+errb.String(), secret) {
		t.Fatal("doctor printed a token")
	}
	byName := map[string]doctorCheck{}
	for _, c := range res.Checks {
		if c.Status != doctorOK && c.Status != doctorWarn && c.Status != doctorFail {
			t.Errorf("%s: status %q", c.Name, c.Status)
		}
		if c.Detail == "" {
			t.Errorf("%s: no detail", c.Name)
		}
		byName[c.Name] = c
	}
	for _, name := range []string{"user namespaces", "seccomp", "landlock", "cgroups", "docker", "claude", "config", "cache", "forge github.com", "forge gitlab.com"} {
		if _, ok := byName[name]; !ok {
			t.Errorf("no %q check: %+v", name, res.Checks)
		}
	}
	if c := byName["forge github.com"]; c.Status != doctorOK || !strings.Contains(c.Detail, "GITHUB_TOKEN is set") {
		t.Errorf("github token: %+v", c)
	}
	if c := byName["forge gitlab.com"]; c.Status != doctorWarn || !strings.Contains(c.Fix, "GITLAB_TOKEN") {
		t.Errorf("gitlab token: %+v", c)
	}
	if c := byName["docker"]; c.Status != doctorWarn {
		t.Errorf("docker (not the configured backend, engine absent): %+v", c)
	}
	if c := byName["config"]; c.Status != doctorOK {
		t.Errorf("config (none: defaults): %+v", c)
	}
	wantCode := ExitOK
	for _, c := range res.Checks {
		if c.Status == doctorFail {
			wantCode = ExitFailure
		}
	}
	if code != wantCode || res.OK != (wantCode == ExitOK) {
		t.Errorf("exit %d ok %v, want %d", code, res.OK, wantCode)
	}
	if sandboxWorks() {
		for _, name := range []string{"user namespaces", "seccomp"} {
			if c := byName[name]; c.Status != doctorOK {
				t.Errorf("%s: %+v", name, c)
			}
		}
	}

	// A broken config.yaml fails, and the human output names the fix.
	if err := os.WriteFile(filepath.Join(fs, "config.yaml"), []byte("version: \"1\"\nruntime: scrpit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	code = run(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: env.Getenv},
		[]string{"--workspace", ws, "--fullsend-dir", fs, "doctor"})
	if code != ExitFailure || !regexp.MustCompile(`(?m)^fail +config +.*config.yaml:2: runtime: `).MatchString(out.String()) || !strings.Contains(errb.String(), "check(s) failed") {
		t.Fatalf("broken config: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}

// sandboxWorks reports whether the local sandbox can provision here.
func sandboxWorks() bool {
	b, err := backends.Open("local", sandbox.Options{})
	if err != nil {
		return false
	}
	s, err := b.Provision(context.Background(), sandbox.Spec{})
	if err != nil {
		return false
	}
	s.Terminate(context.Background())
	return true
}
