package trust

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/harness"
)

func gitT(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for k, v := range files {
		p := filepath.Join(dir, k)
		mkdirs(t, filepath.Dir(p))
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newRepo makes a repository whose main branch holds files, then edits
// the work tree with edits (uncommitted).
func newRepo(t *testing.T, files, edits map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	write(t, dir, files)
	gitT(t, dir, "init", "-q", "-b", "main")
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "base")
	write(t, dir, edits)
	return dir
}

// FromRef reads git objects, never the work tree; symlinks are left out;
// a missing ref or dir is one line naming it.
func TestFromRef(t *testing.T) {
	repo := newRepo(t, map[string]string{".fullsend/config.yaml": "version: \"1\"\n", ".fullsend/s/x.sh": "org\n", "other.txt": "o\n"},
		map[string]string{".fullsend/s/x.sh": "pr\n", ".fullsend/new.yaml": "pr\n"})
	if err := os.Symlink("/etc/passwd", filepath.Join(repo, ".fullsend", "link")); err != nil {
		t.Fatal(err)
	}
	gitT(t, repo, "add", "-A")
	gitT(t, repo, "commit", "-q", "-m", "link")
	dir, cleanup, err := FromRef(context.Background(), repo, "main~1", ".fullsend")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "s", "x.sh")); string(b) != "org\n" {
		t.Errorf("x.sh = %q, want the ref's", b)
	}
	for _, n := range []string{"new.yaml", "link", "../other.txt"} {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			t.Errorf("%s extracted", n)
		}
	}
	cleanup()
	if _, err := os.Stat(dir); err == nil {
		t.Error("cleanup left the directory")
	}
	// The link commit: the symlink is not extracted.
	dir, cleanup, err = FromRef(context.Background(), repo, "main", ".fullsend")
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if _, err := os.Lstat(filepath.Join(dir, "link")); err == nil {
		t.Error("symlink extracted")
	}
	for _, tc := range []struct{ ref, rel, want string }{
		{"nosuch", ".fullsend", "no such commit"},
		{"--output=/tmp/x", ".fullsend", "not a git revision"},
		{"main", "missing", "has no missing"},
		{"main", "../x", "outside the repository"},
	} {
		if _, _, err := FromRef(context.Background(), repo, tc.ref, tc.rel); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--trusted-ref") {
			t.Errorf("%s %s: %v, want %q", tc.ref, tc.rel, err, tc.want)
		}
	}
}

// Decide: a fullsend dir inside the work tree is a repository layer over
// the built-in defaults; one outside is the org layer; --trusted-ref makes
// the ref's copy the org layer; --trust-worktree trusts it all.
func TestDecide(t *testing.T) {
	repo := newRepo(t, map[string]string{".fullsend/config.yaml": "version: \"1\"\n"}, nil)
	inside := filepath.Join(repo, ".fullsend")
	outside := t.TempDir()
	ctx := context.Background()

	d, err := Decide(ctx, Options{Cwd: repo, FullsendDir: inside})
	if err != nil {
		t.Fatal(err)
	}
	if d.Mode != ModeOrgDir || d.OrgDir != "" || !d.IsRepoLayer(inside) || d.IsRepoLayer(outside) || !d.Untrusted(filepath.Join(repo, "x.yaml")) {
		t.Errorf("inside: %+v", d.Info)
	}
	if i := d.Describe(inside, filepath.Join(inside, "h.yaml")); i.RepositoryLayer != inside || i.Mode != ModeOrgDir {
		t.Errorf("inside: Describe = %+v", i)
	}
	d, _ = Decide(ctx, Options{Cwd: repo, FullsendDir: outside})
	if d.OrgDir != outside || d.IsRepoLayer(outside) || !d.IsRepoLayer(inside) {
		t.Errorf("outside: %+v", d.Info)
	}
	// A harness file of the work tree under the org dir's references.
	if i := d.Describe(outside, filepath.Join(repo, "x", "h.yaml")); i.RepositoryLayer != filepath.Join(repo, "x") {
		t.Errorf("outside: Describe = %+v", i)
	}
	if i := d.Describe(outside, filepath.Join(outside, "h.yaml")); i.RepositoryLayer != "" || i.OrgDir != outside {
		t.Errorf("outside: Describe of the org's harness = %+v", i)
	}
	// --target-repo elsewhere: that tree is untrusted too.
	target := t.TempDir()
	d, _ = Decide(ctx, Options{Cwd: outside, FullsendDir: filepath.Join(target, ".fullsend"), TargetRepo: target})
	if d.OrgDir != "" || !d.IsRepoLayer(filepath.Join(target, ".fullsend")) {
		t.Errorf("target repo: %+v", d.Info)
	}
	d, _ = Decide(ctx, Options{Cwd: repo, FullsendDir: inside, TrustWorktree: true})
	if d.Mode != ModeWorktree || d.IsRepoLayer(inside) || d.Untrusted(inside) {
		t.Errorf("worktree: %+v", d.Info)
	}
	d, err = Decide(ctx, Options{Cwd: repo, FullsendDir: inside, TrustedRef: "main"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Mode != ModeTrustedRef || d.OrgDir == "" || Within(d.OrgDir, repo) || d.IsRepoLayer(d.OrgDir) || !d.IsRepoLayer(inside) {
		t.Errorf("trusted ref: %+v", d.Info)
	}
	if _, err := os.Stat(filepath.Join(d.OrgDir, "config.yaml")); err != nil {
		t.Errorf("trusted ref: config.yaml not extracted: %v", err)
	}
	if _, err := Decide(ctx, Options{Cwd: repo, FullsendDir: inside, TrustedRef: "main", TrustWorktree: true}); err == nil {
		t.Error("--trusted-ref with --trust-worktree accepted")
	}
	// A repository layer's scan acceptances are not honoured.
	write(t, inside, map[string]string{"scan-accept.yaml": "accept: []\n"})
	d, _ = Decide(ctx, Options{Cwd: repo, FullsendDir: inside})
	if dir, warn := d.AcceptDir(inside); dir != "" || !strings.Contains(warn, "not honoured") {
		t.Errorf("AcceptDir = %q, %q", dir, warn)
	}
}

// Every harness row of the layer table is refused in a repository-layer
// harness, in an overlay too, with file, line and field.
func TestCheckRepoHarness(t *testing.T) {
	dir := t.TempDir()
	base := "agent: agents/a.md\n"
	for _, tc := range []struct{ field, yaml, want string }{
		{"pre_script", "pre_script: s.sh\n", "h.yaml:2: pre_script:"},
		{"post_script", "post_script: s.sh\n", "h.yaml:2: post_script:"},
		{"validation_loop.script", "validation_loop:\n  script: s.sh\n", "h.yaml:3: validation_loop.script:"},
		{"validation_loop.preflight_check", "validation_loop:\n  preflight_check: \"true\"\n", "h.yaml:3: validation_loop.preflight_check:"},
		{"host_files", "host_files:\n  - {src: /etc/hostname, dest: /tmp/h}\n", "h.yaml:3: host_files:"},
		{"env.runner", "runner_env:\n  A: b\n", "env.runner.A:"},
		{"env.sandbox ${VAR}", "env:\n  sandbox:\n    T: ${GITHUB_TOKEN}\n", "h.yaml:4: env.sandbox.T:"},
		{"native.tools", "native:\n  tools: [web_fetch]\n", "h.yaml:3: native.tools:"},
		{"absolute local paths", "skills: [/root/.ssh]\n", "h.yaml:2: skills[0]:"},
		{"security.sandbox_hooks false", "security:\n  sandbox_hooks: {ssrf: false}\n", "security.sandbox_hooks.ssrf:"},
		{"forge overlay", "forge:\n  github:\n    pre_script: s.sh\n", "forge.github.pre_script:"},
		{"security.enabled false", "security:\n  enabled: false\n", "h.yaml:3: security.enabled:"},
		{"security.escalation.on_critical review", "security:\n  escalation:\n    on_critical: review\n", "h.yaml:4: security.escalation.on_critical:"},
		{"agent_input", "agent_input: input\n", "h.yaml:2: agent_input:"},
	} {
		p := filepath.Join(dir, "h.yaml")
		write(t, dir, map[string]string{"h.yaml": base + tc.yaml})
		h, err := harness.Load(p, harness.LoadOptions{Root: dir, Check: CheckRepoHarness})
		if !errors.Is(err, ErrRepoLayer) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.field, err, tc.want)
		}
		if h != nil {
			t.Errorf("%s: a harness was returned", tc.field)
		}
	}
	covered := map[string]bool{"pre_script": true, "post_script": true, "validation_loop.script": true, "validation_loop.preflight_check": true,
		"host_files": true, "env.runner": true, "env.sandbox ${VAR}": true, "native.tools": true, "security.sandbox_hooks false": true, "absolute local paths": true,
		"security.enabled false": true, "security.escalation.on_critical review": true, "agent_input": true}
	for _, k := range HarnessFields {
		if !covered[k.Key] {
			t.Errorf("row %s has no case here", k.Key)
		}
	}
	// Declarative content passes.
	write(t, dir, map[string]string{"h.yaml": base + "env:\n  sandbox:\n    NAME: world\ntimeout_minutes: 5\nsecurity:\n  sandbox_hooks: {ssrf: true}\n"})
	if _, err := harness.Load(filepath.Join(dir, "h.yaml"), harness.LoadOptions{Root: dir, Check: CheckRepoHarness}); err != nil {
		t.Errorf("declarative harness: %v", err)
	}
}

// SECURITY.md's layer table is the one MarkdownTable renders from the
// rows in code.
func TestSecurityMDLayerTable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "SECURITY.md"))
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- trust-layer-table:begin -->\n", "<!-- trust-layer-table:end -->"
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("SECURITY.md has no %q … %q block", begin, end)
	}
	if got, want := s[i+len(begin):j], MarkdownTable(); got != want {
		t.Errorf("SECURITY.md layer table differs from trust.MarkdownTable(); replace the block with:\n%s", want)
	}
}
