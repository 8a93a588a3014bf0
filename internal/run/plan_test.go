package run_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/run"
)

// TestPlanRuntimeSelection: --runtime > harness runtime: > config runtime:
// > claude; the script runtime's file defaults to <harness>.script.yaml.
func TestPlanRuntimeSelection(t *testing.T) {
	noRuntime := strings.Replace(baseHarness, "runtime: script\n", "", 1)
	cases := []struct {
		name, harness, cfg, flag, script string
		want                             string
		wantScript                       string
		wantErr                          string
	}{
		{name: "flag wins", harness: baseHarness, cfg: "native", flag: "claude", want: "claude"},
		{name: "harness over config", harness: baseHarness, cfg: "native", want: "script", wantScript: "harness.script.yaml"},
		{name: "config over default", harness: noRuntime, cfg: "native", want: "native"},
		{name: "default claude", harness: noRuntime, want: "claude"},
		{name: "explicit script file", harness: noRuntime, flag: "script", script: "script.yaml", want: "script", wantScript: "script.yaml"},
		{name: "script without file", harness: noRuntime, flag: "script", wantErr: "harness.script.yaml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.cfg.Runtime = c.cfg
			if c.wantScript == "harness.script.yaml" {
				f.write("harness.script.yaml", okScript)
			}
			o := run.Options{Runtime: c.flag}
			if c.script != "" {
				o.RuntimeFlags = scriptFlags(filepath.Join(f.dir, c.script))
			}
			p, err := f.planKeep(c.harness, o)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Runtime != c.want {
				t.Errorf("runtime = %q, want %q", p.Runtime, c.want)
			}
			if c.wantScript != "" && filepath.Base(p.RunOptions()["script"]) != c.wantScript {
				t.Errorf("script = %q", p.RunOptions()["script"])
			}
		})
	}
}

// TestPlanPolicyMapping: filesystem_policy paths become mounts only where
// the local backend does not provide them and they exist on the host;
// policy network_policies and profile endpoints become host:port entries.
func TestPlanPolicyMapping(t *testing.T) {
	f := newFixture(t)
	// Existing host paths outside what the backend provides (only planned,
	// nothing is mounted here). Fixed paths, not the checkout's: a clone
	// under /tmp or /usr is inside a provided tree and would prove nothing.
	extra, extraRW := "/var/lib", "/var"
	for _, d := range []string{extra, extraRW} {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			t.Fatalf("premise: %s must be a directory on this host: %v", d, err)
		}
	}
	f.write("policies/p.yaml", `version: 1
filesystem_policy:
  read_only: [/usr, /etc, /proc, /dev/urandom, `+extra+`, /no/such/dir]
  read_write: [/sandbox, /tmp, /dev/null, `+extraRW+`, /tmp/x]
network_policies:
  b:
    endpoints:
      - {host: "*.googleapis.com", port: 443}
  a:
    endpoints:
      - {host: api.anthropic.com, port: 443}
      - {host: plain.example.com}
`)
	f.write("profiles/prof.yaml", "id: x\nendpoints:\n  - {host: github.com, port: 443}\n  - {host: api.anthropic.com, port: 443}\nbinaries: ['**/git']\n")
	h := baseHarness + "openshell:\n  profiles:\n    - profiles/prof.yaml\n"
	p := f.mustPlan(h, run.Options{})
	// Host paths named by a policy are never bound into the sandbox (a
	// remote policy could otherwise expose ~/.ssh); they are noted instead.
	if len(p.Spec.Mounts) != 0 {
		t.Errorf("mounts = %+v, want none: policy paths must not be bound from the host", p.Spec.Mounts)
	}
	for _, d := range []string{extra, extraRW} {
		if !noteContains(p.Notes, d+" skipped (not provided by the local sandbox") {
			t.Errorf("no note for %s in %v", d, p.Notes)
		}
	}
	if got := strings.Join(p.Spec.Network.Allow, " "); got != "*.googleapis.com:443 api.anthropic.com:443 github.com:443 plain.example.com" {
		t.Errorf("allow = %q", got)
	}
	if !noteContains(p.Notes, "/no/such/dir skipped (not provided by the local sandbox") || !noteContains(p.Notes, "per-binary restrictions") {
		t.Errorf("notes = %v", p.Notes)
	}
	if p.Spec.Limits.WallTime.Minutes() != 5 {
		t.Errorf("wall time = %v", p.Spec.Limits.WallTime)
	}
	// docker: the image provides the file system.
	pd := f.mustPlan(h+"image: ghcr.io/x/y@sha256:"+strings.Repeat("a", 64)+"\n", run.Options{Sandbox: "docker"})
	if len(pd.Spec.Mounts) != 0 || !strings.HasPrefix(pd.Spec.Image, "ghcr.io/x/y@sha256:") || !noteContains(pd.Notes, "not bound from the host on the docker backend") {
		t.Errorf("docker plan: mounts %v image %q notes %v", pd.Spec.Mounts, pd.Spec.Image, pd.Notes)
	}
	// A bad endpoint names the file.
	f.write("profiles/prof.yaml", "endpoints:\n  - {host: 'bad host', port: 443}\n")
	if _, err := f.plan(h, run.Options{}); err == nil || !strings.Contains(err.Error(), "openshell.profiles[0]") || !strings.Contains(err.Error(), "prof.yaml") {
		t.Errorf("bad endpoint err = %v", err)
	}
}

func noteContains(notes []string, sub string) bool {
	for _, n := range notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

// TestPlanSkillNames: skills are named by frontmatter name; two skills
// with the same name (or basename) are never merged silently.
func TestPlanSkillNames(t *testing.T) {
	f := newFixture(t)
	f.write("skills/one/github/SKILL.md", "---\nname: shared\ndescription: d\n---\nx\n")
	f.write("skills/two/github/SKILL.md", "---\nname: shared\ndescription: d\n---\ny\n")
	f.write("skills/three/github/SKILL.md", "---\ndescription: no name\n---\nz\n")
	h := strings.Replace(baseHarness, "  - skills/alpha\n", "  - skills/alpha\n  - skills/one/github\n  - skills/two/github\n  - skills/three/github\n", 1)
	p := f.mustPlan(h, run.Options{})
	var names []string
	for _, s := range p.Skills {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "alpha,shared,two-github,github" {
		t.Errorf("skill names = %s", got)
	}
	// Same frontmatter name and same parent basename: a counter.
	f.write("skills/x/one/SKILL.md", "---\nname: dup\ndescription: d\n---\n")
	f.write("skills/y/one/SKILL.md", "---\nname: dup\ndescription: d\n---\n")
	f.write("skills/z/one/SKILL.md", "---\nname: dup\ndescription: d\n---\n")
	h = strings.Replace(baseHarness, "  - skills/alpha\n", "  - skills/x/one\n  - skills/y/one\n  - skills/z/one\n", 1)
	p = f.mustPlan(h, run.Options{})
	names = nil
	for _, s := range p.Skills {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "dup,y-one,z-one" {
		t.Errorf("skill names = %s", got)
	}
}

// TestPlanTarget: the default target repository is the git repository of
// the working directory; run and cache directories inside it are excluded.
func TestPlanTarget(t *testing.T) {
	f := newFixture(t)
	repo := f.newRepo(map[string]string{"src/a.go": "package a\n"})
	sub := filepath.Join(repo, "src")
	p := f.mustPlan(baseHarness, run.Options{TargetRepo: "cwd", Cwd: sub, Workspace: repo, CacheDir: filepath.Join(repo, ".fullsend-cache")})
	if p.TargetRepo != repo || p.RepoName != "myrepo" || p.RepoDir() != "/sandbox/workspace/myrepo" {
		t.Errorf("target %q name %q", p.TargetRepo, p.RepoName)
	}
	if len(p.ExcludeFromRepo) != 2 || p.ExcludeFromRepo[0] != filepath.Join(repo, ".fullsend", "runs") {
		t.Errorf("exclude = %v", p.ExcludeFromRepo)
	}
	// None: an empty working directory.
	p = f.mustPlan(baseHarness, run.Options{TargetRepo: "none"})
	if p.TargetRepo != "" || p.RepoDir() != "/sandbox/workspace/"+run.EmptyRepoName {
		t.Errorf("none: %q %q", p.TargetRepo, p.RepoDir())
	}
	if _, err := f.plan(baseHarness, run.Options{TargetRepo: filepath.Join(repo, "nope")}); err == nil || !strings.Contains(err.Error(), "--target-repo") {
		t.Errorf("missing target err = %v", err)
	}
}

// TestRepoCopyExcludesRunsDir: when the workspace is the target repository
// (the README's case), the copy leaves out .fullsend/runs and the cache.
func TestRepoCopyExcludesRunsDir(t *testing.T) {
	f := newFixture(t)
	repo := f.newRepo(map[string]string{"src/a.go": "package a\n", ".fullsend/config.yaml": "version: \"1\"\n"})
	writeFile(t, filepath.Join(repo, ".fullsend-cache", "big"), "cache")
	p := f.mustPlan(baseHarness, run.Options{Workspace: repo, CacheDir: filepath.Join(repo, ".fullsend-cache")})
	rep, snap, err := f.execute(p, run.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !snap.exists("/sandbox/workspace/myrepo/src/a.go") || !snap.exists("/sandbox/workspace/myrepo/.fullsend/config.yaml") {
		t.Errorf("repository content missing from the copy")
	}
	if snap.exists("/sandbox/workspace/myrepo/.fullsend/runs") || snap.exists("/sandbox/workspace/myrepo/.fullsend-cache") {
		t.Errorf("runs dir or cache copied into the sandbox")
	}
	if !strings.HasPrefix(rep.Dir(), filepath.Join(repo, ".fullsend", "runs")) {
		t.Errorf("run dir %s", rep.Dir())
	}
}

// TestGraphHashStable: the graph hash depends on content only.
func TestGraphHashStable(t *testing.T) {
	f := newFixture(t)
	a := f.mustPlan(baseHarness, run.Options{})
	b := f.mustPlan(baseHarness, run.Options{})
	if a.GraphHash == "" || a.GraphHash != b.GraphHash {
		t.Errorf("graph hash unstable: %q %q", a.GraphHash, b.GraphHash)
	}
	f.write("skills/alpha/SKILL.md", alphaSkill+"\nmore\n")
	c := f.mustPlan(baseHarness, run.Options{})
	if c.GraphHash == a.GraphHash {
		t.Errorf("graph hash unchanged after a skill changed")
	}
}

func TestRunIDs(t *testing.T) {
	for _, bad := range []string{"", "../x", "a/b", ".hidden", strings.Repeat("x", 65)} {
		if run.CheckRunID(bad) == nil {
			t.Errorf("CheckRunID(%q) = nil", bad)
		}
	}
	if _, err := run.Load(t.TempDir(), "20260101T000000.000Z-abcdef"); !errors.Is(err, run.ErrNoRun) {
		t.Errorf("Load unknown = %v", err)
	}
	if err := os.MkdirAll(filepath.Join(t.TempDir(), "x"), 0o755); err != nil {
		t.Fatal(err)
	}
}
