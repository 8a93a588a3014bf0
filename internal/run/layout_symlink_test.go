package run_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/runtime/script"
)

// Issue 12 item 4: the host never follows a symlink inside the target
// repository. Each test points a symlink of the repository at a file
// standing for a root-only file on the host (outside the repository, with
// a marker) and checks that the marker reaches neither the host scan nor
// the sandbox, and that the file is never written.

const repoMarker = "ROOT-ONLY-MARKER-4e9a0b"

// rootOnly creates the "root-only" file (and its directory tree) outside
// every fixture directory: dir/name holds the marker.
type rootOnly struct {
	dir  string
	file string
	info fs.FileInfo
}

func newRootOnly(t *testing.T, rel, content string) *rootOnly {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	writeFile(t, p, content)
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return &rootOnly{dir: dir, file: p, info: fi}
}

// checkUntouched fails when the marker file was written.
func (r *rootOnly) checkUntouched(t *testing.T, content string) {
	t.Helper()
	b, err := os.ReadFile(r.file)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(r.file)
	if string(b) != content || !fi.ModTime().Equal(r.info.ModTime()) || fi.Size() != r.info.Size() {
		t.Errorf("%s was written during the run", r.file)
	}
}

// guard is an LLM Guard server on loopback: the host scan sends it every
// piece of content it reads (the ML layer), so it records exactly what the
// host scan read. hook runs on each request before the answer.
type guard struct {
	mu      sync.Mutex
	prompts []string
	hook    func(n int, prompt string)
}

func newGuard(t *testing.T, f *fixture) *guard {
	g := &guard{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Prompt string `json:"prompt"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		g.mu.Lock()
		g.prompts = append(g.prompts, req.Prompt)
		n := len(g.prompts)
		hook := g.hook
		g.mu.Unlock()
		if hook != nil {
			hook(n, req.Prompt)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"is_valid": true, "scanners": {}}`))
	}))
	t.Cleanup(srv.Close)
	f.cfg.Security.LLMGuard.URL = srv.URL
	return g
}

// check fails when the host scan read the marker, or read nothing at all
// (the guard would then prove nothing).
func (g *guard) check(t *testing.T) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.prompts) == 0 {
		t.Fatal("the host scan sent nothing to the ML layer")
	}
	for _, p := range g.prompts {
		if strings.Contains(p, repoMarker) {
			t.Errorf("the host scan read the file behind a symlink: %q", p)
		}
	}
}

func (g *guard) sawContent(sub string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, p := range g.prompts {
		if strings.Contains(p, sub) {
			return true
		}
	}
	return false
}

// noMarkerInSandbox fails when any file of the sandbox snapshot holds the
// marker.
func noMarkerInSandbox(t *testing.T, snap snapshot) {
	t.Helper()
	files := 0
	for _, root := range []string{snap.root, snap.tmp} {
		if root == "" {
			t.Fatal("no sandbox snapshot")
		}
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			files++
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(repoMarker)) {
				t.Errorf("the marker reached the sandbox: %s", p)
			}
			return nil
		})
	}
	if files == 0 {
		t.Fatal("empty sandbox snapshot")
	}
}

func hasNoteAll(rep *run.Report, subs ...string) bool {
	for _, n := range rep.Notes {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(n, s)
		}
		if ok {
			return true
		}
	}
	return false
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.RemoveAll(link); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestRepoGitExcludeSymlink: .git/info/exclude (or .git/info) pointing out
// of the repository is not read when the injected files are added to the
// copy's exclude: the copy's exclude lists fullsend's entries only.
func TestRepoGitExcludeSymlink(t *testing.T) {
	const content = "# host exclude\n" + repoMarker + "\n"
	for _, c := range []struct{ name, link, target string }{
		{"exclude file", ".git/info/exclude", "info/exclude"},
		{"info directory", ".git/info", "info"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			repo := f.newRepo(map[string]string{"README.md": "hi\n"})
			out := newRootOnly(t, "info/exclude", content)
			symlink(t, filepath.Join(out.dir, filepath.FromSlash(c.target)), filepath.Join(repo, filepath.FromSlash(c.link)))
			p := f.mustPlan(baseHarness, run.Options{})
			rep, snap := f.mustExecute(p, run.ExecOptions{})
			excl := snap.read(t, "/sandbox/workspace/myrepo/.git/info/exclude")
			if !strings.Contains(excl, "\n/AGENTS.md\n") || strings.Contains(excl, repoMarker) {
				t.Errorf("copy's exclude = %q, want fullsend's entries only", excl)
			}
			noMarkerInSandbox(t, snap)
			if !hasNoteAll(rep, "is a symlink", "exclude") {
				t.Errorf("no note about the symlink: %q", rep.Notes)
			}
			out.checkUntouched(t, content)
		})
	}
}

// TestRepoContextFileSymlink: an AGENTS.md or CLAUDE.md that is a symlink
// out of the repository is not read (by the host scan or into the copy)
// and counts as absent, as in the copy: the org default AGENTS.md or the
// bridge CLAUDE.md is injected, so such a symlink cannot suppress them.
func TestRepoContextFileSymlink(t *testing.T) {
	const content = "# root-only\n" + repoMarker + "\n"
	for _, c := range []struct {
		name, link   string
		repo         map[string]string
		claude       bool
		wantInjected string
		file, want   string // sandbox file of the repository and what it must contain
	}{
		{name: "AGENTS.md", link: "AGENTS.md", repo: map[string]string{"README.md": "hi\n"},
			wantInjected: "AGENTS.md", file: "AGENTS.md", want: "organisation default"},
		{name: "CLAUDE.md, claude runtime", link: "CLAUDE.md", repo: map[string]string{"AGENTS.md": "# Repo agents\n"}, claude: true,
			wantInjected: "CLAUDE.md", file: "CLAUDE.md", want: "@AGENTS.md"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			repo := f.newRepo(c.repo)
			out := newRootOnly(t, "secret.md", content)
			symlink(t, out.file, filepath.Join(repo, c.link))
			g := newGuard(t, f)
			p := f.mustPlan(baseHarness, run.Options{})
			var o run.ExecOptions
			if c.claude {
				p.Runtime = "claude" // the layout rule; the agent is the script runtime
				o.Runtime = script.New()
			}
			rep, snap := f.mustExecute(p, o)
			g.check(t)
			noMarkerInSandbox(t, snap)
			if got := snap.read(t, "/sandbox/workspace/myrepo/"+c.file); !strings.Contains(got, c.want) {
				t.Errorf("%s = %q, want the injected file", c.file, got)
			}
			if !slices.Contains(rep.Target.Injected, c.wantInjected) {
				t.Errorf("injected = %q, want %s", rep.Target.Injected, c.wantInjected)
			}
			if !hasNoteAll(rep, c.link+" is a symlink") {
				t.Errorf("no note about the symlink: %q", rep.Notes)
			}
			out.checkUntouched(t, content)
		})
	}
}

// TestRepoClaudeSkillsSymlink: .claude or .claude/skills pointing out of
// the repository is not walked: its SKILL.md files are neither scanned on
// the host nor counted as repository skills, and nothing of it reaches the
// sandbox. (The outside SKILL.md is malicious: were it scanned, closed
// mode would block the run.)
func TestRepoClaudeSkillsSymlink(t *testing.T) {
	content := "---\nname: alpha\ndescription: x\n---\n" + maliciousAgentsMD + repoMarker + "\n"
	for _, c := range []struct{ name, link, target string }{
		{".claude", ".claude", ".claude"},
		{".claude/skills", ".claude/skills", ".claude/skills"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			repo := f.newRepo(map[string]string{"README.md": "hi\n", ".claude/keep.txt": "k\n"})
			out := newRootOnly(t, ".claude/skills/alpha/SKILL.md", content)
			symlink(t, filepath.Join(out.dir, filepath.FromSlash(c.target)), filepath.Join(repo, filepath.FromSlash(c.link)))
			g := newGuard(t, f)
			p := f.mustPlan(baseHarness, run.Options{})
			rep, snap := f.mustExecute(p, run.ExecOptions{})
			g.check(t)
			noMarkerInSandbox(t, snap)
			if len(rep.Target.Shadowed) != 0 {
				t.Errorf("skills behind a symlink counted as repository skills: %q", rep.Target.Shadowed)
			}
			out.checkUntouched(t, content)
		})
	}
}

// TestRepoHostScanReadsOnce: a context file replaced by a symlink out of
// the repository after the host scan listed it is not read through the
// symlink: its content was read (without following anything) when it was
// listed. The guard swaps AGENTS.md while the host scan is busy with
// CLAUDE.md, which is listed (and scanned) first.
func TestRepoHostScanReadsOnce(t *testing.T) {
	const content = "# root-only\n" + repoMarker + "\n"
	f := newFixture(t)
	repo := f.newRepo(map[string]string{"CLAUDE.md": "# Repo claude\n", "AGENTS.md": "# Repo agents\n"})
	out := newRootOnly(t, "secret.md", content)
	g := newGuard(t, f)
	var once sync.Once
	swapped := false
	g.hook = func(_ int, prompt string) {
		if strings.Contains(prompt, "# Repo claude") {
			once.Do(func() {
				symlink(t, out.file, filepath.Join(repo, "AGENTS.md"))
				swapped = true
			})
		}
	}
	p := f.mustPlan(baseHarness, run.Options{})
	_, snap := f.mustExecute(p, run.ExecOptions{})
	if !swapped {
		t.Fatal("CLAUDE.md never reached the host scan")
	}
	g.check(t)
	if !g.sawContent("# Repo agents") {
		t.Errorf("AGENTS.md as listed was not scanned")
	}
	noMarkerInSandbox(t, snap)
	// By layout time AGENTS.md is a symlink: absent, so the org default.
	if got := snap.read(t, "/sandbox/workspace/myrepo/AGENTS.md"); !strings.Contains(got, "organisation default") {
		t.Errorf("AGENTS.md = %q", got)
	}
	out.checkUntouched(t, content)
}

// TestRepoCopySkipsSymlinksAroundRunsDir: when the runs dir lives inside
// the repository, the copy is walked entry by entry down to it; symlinks
// met there (in or out of the repository) are left out like everywhere
// else in the copy, instead of failing the run or being followed.
func TestRepoCopySkipsSymlinksAroundRunsDir(t *testing.T) {
	const content = "secret\n" + repoMarker + "\n"
	f := newFixture(t)
	repo := f.newRepo(map[string]string{"src/a.go": "package a\n", "AGENTS.md": "# Repo agents\n"})
	out := newRootOnly(t, "secret", content)
	symlink(t, out.file, filepath.Join(repo, "leak"))
	symlink(t, out.dir, filepath.Join(repo, ".fullsend", "leakdir"))
	symlink(t, "AGENTS.md", filepath.Join(repo, "CLAUDE.md"))
	p := f.mustPlan(baseHarness, run.Options{Workspace: repo})
	_, snap := f.mustExecute(p, run.ExecOptions{})
	noMarkerInSandbox(t, snap)
	for _, n := range []string{"leak", ".fullsend/leakdir", "CLAUDE.md"} {
		if snap.exists("/sandbox/workspace/myrepo/" + n) {
			t.Errorf("symlink %s copied", n)
		}
	}
	if !snap.exists("/sandbox/workspace/myrepo/src/a.go") || snap.exists("/sandbox/workspace/myrepo/.fullsend/runs") {
		t.Errorf("copy wrong around the runs dir")
	}
	out.checkUntouched(t, content)
}

// TestRepoClaudeSettingsSymlink: .claude/settings.json and
// settings.local.json pointing out of the repository never reach the
// sandbox, where the claude runtime reads the repository's settings (the
// host never reads them). A guard: the copy leaves symlinks out.
func TestRepoClaudeSettingsSymlink(t *testing.T) {
	const content = `{"disableAllHooks": true, "x": "` + repoMarker + `"}`
	f := newFixture(t)
	repo := f.newRepo(map[string]string{"README.md": "hi\n", ".claude/other.json": "{}"})
	out := newRootOnly(t, "settings.json", content)
	symlink(t, out.file, filepath.Join(repo, ".claude", "settings.json"))
	symlink(t, out.file, filepath.Join(repo, ".claude", "settings.local.json"))
	p := f.mustPlan(baseHarness, run.Options{})
	_, snap := f.mustExecute(p, run.ExecOptions{})
	noMarkerInSandbox(t, snap)
	for _, n := range []string{"settings.json", "settings.local.json"} {
		if snap.exists("/sandbox/workspace/myrepo/.claude/" + n) {
			t.Errorf(".claude/%s copied", n)
		}
	}
	if !snap.exists("/sandbox/workspace/myrepo/.claude/other.json") {
		t.Errorf(".claude/other.json missing: the check proves nothing")
	}
	out.checkUntouched(t, content)
}
