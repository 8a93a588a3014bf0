package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/fetch/fetchtest"
	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
	runpkg "github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/sandbox/sandboxtest"
)

// closureWorld is the README's hello example as an org fullsend dir whose
// config reaches two fake forges (github.test and mirror.test), and a
// workspace for the cache, the audit log and the run directories.
type closureWorld struct {
	srv, mirror *forgetest.Server
	dir, ws     string
	harness     string
}

func newClosureWorld(t *testing.T) *closureWorld {
	t.Helper()
	w := &closureWorld{srv: forgetest.NewGitHub(t, nil), mirror: forgetest.NewGitHub(t, nil, forgetest.WithHost("mirror.test"))}
	w.dir = copyLibrary(t, filepath.Join("..", "..", "examples", "hello"))
	w.ws = t.TempDir()
	w.harness = filepath.Join(w.dir, "harness.yaml")
	fo := forgetest.Options(w.srv, w.mirror)
	cfg := fmt.Sprintf(`version: "1"
allowed_remote_resources: [%s, %s]
security:
  remote_resources:
    allowed_domains: [%s]
    allowed_private_networks: [127.0.0.0/8]
forges:
  - {host: %q, type: github, api_url: %q, token_env: X_TOKEN}
  - {host: %q, type: github, api_url: %q, token_env: X_TOKEN}
`, w.prefix(w.srv), w.prefix(w.mirror), strings.Join(fo.AllowedDomains, ", "),
		w.srv.Forge().Host, w.srv.Forge().APIURL, w.mirror.Forge().Host, w.mirror.Forge().APIURL)
	if err := os.WriteFile(filepath.Join(w.dir, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	testOnlyFetchOptions = func(o *fetch.Options) { o.Resolver, o.RootCAs = fo.Resolver, fetchtest.CertPool() }
	t.Cleanup(func() { testOnlyFetchOptions = nil })
	return w
}

func (w *closureWorld) prefix(s *forgetest.Server) string { return "https://" + s.WebHost() + "/o/" }

// skill adds a skill directory to repo key of s and returns its pinned
// tree URL at the ref of key.
func (w *closureWorld) skill(t *testing.T, s *forgetest.Server, key, dir, body string) string {
	t.Helper()
	md := []byte("---\nname: " + filepath.Base(dir) + "\ndescription: d\n---\n" + body + "\n")
	s.AddRepo(key, map[string][]byte{dir + "/SKILL.md": md})
	d, err := cas.TreeHash(map[string][]byte{"SKILL.md": md})
	if err != nil {
		t.Fatal(err)
	}
	return s.TreeURL(key, dir) + "#sha256=" + string(d)
}

// writeHarness writes the hello harness with extra skill references and
// the remote prefixes allowed.
func (w *closureWorld) writeHarness(t *testing.T, tail string, skills ...string) {
	t.Helper()
	h := "agent: agents/hello.md\npolicy: policies/hello.yaml\nskills:\n  - skills/greeting\n"
	for _, s := range skills {
		h += "  - " + s + "\n"
	}
	h += "runtime: script\nvalidation_loop:\n  schema: schemas/hello-result.schema.json\n  max_iterations: 2\n" +
		"env:\n  sandbox:\n    GREETING_NAME: \"world\"\ntimeout_minutes: 5\n" +
		"allowed_remote_resources:\n  - " + w.prefix(w.srv) + "\n  - " + w.prefix(w.mirror) + "\n" + tail
	if err := os.WriteFile(w.harness, []byte(h), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cli runs fullsend with the world's workspace and fullsend dir and env
// as the environment.
func (w *closureWorld) cli(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }}
	code := run(context.Background(), e, append([]string{"--workspace", w.ws, "--fullsend-dir", w.dir}, args...))
	return code, out.String(), errb.String()
}

// auditAnomalies are the anomaly kinds of the audit log's entries.
func (w *closureWorld) auditAnomalies(t *testing.T) []string {
	t.Helper()
	data, _ := os.ReadFile(audit.Path(cas.DefaultDir(w.ws, func(string) string { return "" })))
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e audit.Entry
		if l != "" && json.Unmarshal([]byte(l), &e) == nil && e.Anomaly != "" {
			out = append(out, e.Anomaly)
		}
	}
	return out
}

// lastReport is the report.json of the newest run.
func (w *closureWorld) lastReport(t *testing.T) *runpkg.Report {
	t.Helper()
	reps, err := runpkg.List(runpkg.RunsDir(w.ws))
	if err != nil || len(reps) == 0 {
		t.Fatalf("no run: %v", err)
	}
	return reps[0]
}

var ciEnv = map[string]string{"GITHUB_ACTIONS": "true"}

// TestAnomalousFetchesAgainstLock: after `fullsend lock`, a resolution
// whose remote fetches differ from the lock — a changed pin, a new
// repository prefix, a new host — is an anomaly: one stderr line and an
// audit entry each; resolve --frozen fails on it; run in CI records it in
// report.json and fails before the agent runs; run outside CI only
// records it.
func TestAnomalousFetchesAgainstLock(t *testing.T) {
	w := newClosureWorld(t)
	review := w.skill(t, w.srv, "o/skills@main", "skills/review", "Review v1.")
	w.writeHarness(t, "", review)
	if code, _, stderr := w.cli(t, nil, "lock", w.harness); code != 0 {
		t.Fatalf("lock: exit %d %s", code, stderr)
	}
	if code, _, stderr := w.cli(t, nil, "resolve", "--frozen", w.harness); code != 0 || strings.Contains(stderr, "anomalous") {
		t.Fatalf("frozen against its lock: exit %d %s", code, stderr)
	}
	moved := w.skill(t, w.srv, "o/skills@main", "skills/review", "Review v2: moved.")
	other := w.skill(t, w.srv, "o/other@main", "skills/extra", "Extra.")
	far := w.skill(t, w.mirror, "o/skills@main", "skills/far", "Far.")
	sandbox := sandboxtest.Unavailable("local") == nil
	for _, c := range []struct {
		kind   string
		skills []string
	}{
		{"changed_pin", []string{moved}},
		{"new_prefix", []string{review, other}},
		{"new_host", []string{review, far}},
	} {
		t.Run(c.kind, func(t *testing.T) {
			w.writeHarness(t, "", c.skills...)
			before := len(w.auditAnomalies(t))
			code, _, stderr := w.cli(t, nil, "resolve", w.harness)
			if code != 0 || strings.Count(stderr, "anomalous fetch: "+c.kind+": ") != 1 {
				t.Fatalf("resolve: exit %d, want one anomaly line:\n%s", code, stderr)
			}
			if got := w.auditAnomalies(t); len(got) != before+1 || got[len(got)-1] != c.kind {
				t.Errorf("audit anomalies %v, want one more %s", got, c.kind)
			}
			code, _, stderr = w.cli(t, nil, "resolve", "--frozen", w.harness)
			if line := oneStderrLine(t, stderr); code != 1 || !strings.Contains(line, "(--frozen): anomalous fetch: "+c.kind+": ") {
				t.Errorf("resolve --frozen: exit %d %s", code, stderr)
			}
			if !sandbox {
				t.Log("local sandbox unavailable: run is not exercised")
				return
			}
			code, _, stderr = w.cli(t, ciEnv, "run", "--target-repo", "none", w.harness)
			rep := w.lastReport(t)
			if code != 1 || rep.Status != runpkg.StatusFailed || len(rep.Anomalies) == 0 || rep.Anomalies[0].Kind != c.kind ||
				!strings.Contains(rep.Error, "anomalous fetch in CI (GITHUB_ACTIONS=true): "+c.kind) {
				t.Fatalf("run in CI: exit %d status %s anomalies %+v error %q\n%s", code, rep.Status, rep.Anomalies, rep.Error, stderr)
			}
			for _, ph := range rep.Phases {
				if ph.Name == "provision" || strings.HasPrefix(ph.Name, "agent") {
					t.Errorf("run in CI went on to %s", ph.Name)
				}
			}
			if c.kind != "changed_pin" {
				return
			}
			code, stdout, stderr := w.cli(t, nil, "run", "--target-repo", "none", w.harness)
			if rep := w.lastReport(t); code != 0 || len(rep.Anomalies) != 1 || !strings.Contains(stderr, "anomalous fetch: changed_pin") {
				t.Errorf("run outside CI: exit %d anomalies %+v\n%s\n%s", code, rep.Anomalies, stdout, stderr)
			}
		})
	}
}

// TestAnomalousRuntimeFetches: a run making more runtime fetches than the
// most of the harness's last runs is an anomaly: a warning outside CI, a
// failure in CI and with --frozen; the first run (no history) and a run
// within the most are not.
func TestAnomalousRuntimeFetches(t *testing.T) {
	needLocalSandbox(t)
	w := newClosureWorld(t)
	files := map[string][]byte{}
	var urls []string
	for i := range 4 {
		md := []byte(fmt.Sprintf("---\nname: f%d\ndescription: d\n---\nFetched.\n", i))
		files[fmt.Sprintf("skills/f%d/SKILL.md", i)] = md
		d, err := cas.TreeHash(map[string][]byte{"SKILL.md": md})
		if err != nil {
			t.Fatal(err)
		}
		urls = append(urls, w.srv.TreeURL("o/lib@v1", fmt.Sprintf("skills/f%d", i))+"#sha256="+string(d))
	}
	w.srv.AddRepo("o/lib@v1", files)
	w.writeHarness(t, "allow_runtime_fetch: true\nmax_runtime_fetches: 5\n")
	if code, _, stderr := w.cli(t, nil, "lock", w.harness); code != 0 {
		t.Fatalf("lock: exit %d %s", code, stderr)
	}
	script := filepath.Join(t.TempDir(), "script.yaml")
	runWith := func(fetches int, env map[string]string, flags ...string) (int, string, *runpkg.Report) {
		t.Helper()
		s := "steps:\n"
		for i := range fetches {
			s += fmt.Sprintf("  - fetch_skill: {url: %q, save: D%d}\n", urls[i], i)
		}
		s += "  - write_result: {value: {greeting: \"Hello, world!\", name: world}}\n"
		if err := os.WriteFile(script, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"run", "--target-repo", "none", "--script", script}, flags...)
		code, _, stderr := w.cli(t, env, append(args, w.harness)...)
		rep := w.lastReport(t)
		if rep.Events.RuntimeFetches != fetches {
			t.Fatalf("runtime fetches %d, want %d\n%s", rep.Events.RuntimeFetches, fetches, stderr)
		}
		return code, stderr, rep
	}
	if code, stderr, rep := runWith(2, nil); code != 0 || len(rep.Anomalies) != 0 {
		t.Fatalf("first run (no history): exit %d %+v\n%s", code, rep.Anomalies, stderr)
	}
	if code, stderr, rep := runWith(1, ciEnv); code != 0 || len(rep.Anomalies) != 0 {
		t.Fatalf("fewer fetches in CI: exit %d %+v\n%s", code, rep.Anomalies, stderr)
	}
	code, stderr, rep := runWith(3, nil)
	if code != 0 || len(rep.Anomalies) != 1 || rep.Anomalies[0].Kind != "runtime_fetches" ||
		strings.Count(stderr, "anomalous fetch: runtime_fetches: 3 runtime fetches, more than the most (2) of the last 2 runs") != 1 {
		t.Fatalf("more fetches outside CI: exit %d %+v\n%s", code, rep.Anomalies, stderr)
	}
	if got := w.auditAnomalies(t); len(got) != 1 || got[0] != "runtime_fetches" {
		t.Errorf("audit anomalies %v", got)
	}
	code, stderr, rep = runWith(4, ciEnv)
	if code != 1 || rep.Status != runpkg.StatusFailed || !strings.Contains(rep.Error, "anomalous fetch in CI (GITHUB_ACTIONS=true): runtime_fetches: 4 runtime fetches, more than the most (2)") {
		t.Fatalf("more fetches in CI: exit %d %s %q\n%s", code, rep.Status, rep.Error, stderr)
	}
	// Flagged runs do not raise the baseline: still more than 2.
	code, stderr, rep = runWith(4, nil, "--frozen")
	if code != 1 || !strings.Contains(rep.Error, "anomalous fetch --frozen: runtime_fetches: 4 runtime fetches, more than the most (2)") {
		t.Fatalf("--frozen after flagged runs: exit %d %q\n%s", code, rep.Error, stderr)
	}
	if code, stderr, rep := runWith(2, nil, "--frozen"); code != 0 || len(rep.Anomalies) != 0 {
		t.Fatalf("as many as the most, --frozen: exit %d %+v\n%s", code, rep.Anomalies, stderr)
	}
}

// TestSkillPolicyEdgeCLI: a remote skill's policy: is fetched, locked as
// the skill's transitive dependency (field policy) and drawn by graph.
func TestSkillPolicyEdgeCLI(t *testing.T) {
	w := newClosureWorld(t)
	pol := []byte("network_policies:\n  a:\n    endpoints:\n      - {host: api.example.test, port: 443}\n")
	md := []byte("---\nname: net\ndescription: d\npolicy: policy.yaml#sha256=" + sha256Hex(pol) + "\n---\nNet.\n")
	tree := map[string][]byte{"SKILL.md": md, "policy.yaml": pol}
	w.srv.AddRepo("o/skills@main", map[string][]byte{"skills/net/SKILL.md": md, "skills/net/policy.yaml": pol})
	d, err := cas.TreeHash(tree)
	if err != nil {
		t.Fatal(err)
	}
	skill := w.srv.TreeURL("o/skills@main", "skills/net") + "#sha256=" + string(d)
	polURL := w.srv.TreeURL("o/skills@main", "skills/net/policy.yaml")
	w.writeHarness(t, "", skill)
	if code, _, stderr := w.cli(t, nil, "lock", w.harness); code != 0 {
		t.Fatalf("lock: exit %d %s", code, stderr)
	}
	lf, _ := os.ReadFile(filepath.Join(w.dir, "lock.yaml"))
	if !strings.Contains(string(lf), "field: policy") || !strings.Contains(string(lf), polURL) {
		t.Errorf("lock.yaml does not record the policy edge:\n%s", lf)
	}
	// The harness's policy and the skill's: two policy edges.
	code, stdout, stderr := w.cli(t, nil, "graph", w.harness)
	if code != 0 || !strings.Contains(stdout, polURL) || strings.Count(stdout, `[label="policy"]`) != 2 {
		t.Errorf("graph: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ = w.cli(t, nil, "graph", "--format", "mermaid", w.harness)
	if code != 0 || !strings.Contains(stdout, polURL) || strings.Count(stdout, `-->|"policy"|`) != 2 {
		t.Errorf("graph mermaid:\n%s", stdout)
	}
	if code, _, stderr := w.cli(t, nil, "resolve", "--frozen", "--offline", w.harness); code != 0 {
		t.Errorf("resolve --frozen --offline: exit %d %s", code, stderr)
	}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
