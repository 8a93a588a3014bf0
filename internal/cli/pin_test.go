package cli

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
	"github.com/fullsend-ai/fullsend/internal/pin"
)

// pinHarness is the harness the pin tests edit: comments, blank lines and
// a quoted value that must survive every edit.
const pinHarness = `# Greeting harness, edited by fullsend pin in tests.

agent: agents/local.md   # replaced by a pinned remote agent
model: "test-model"

# Skills: the local one first.
skills:
  - skills/local   # ours

timeout_minutes: 5
`

const pinSkill = "---\nname: greet\ndescription: greets\n---\nSay hello.\n"

type pinFixture struct {
	srv      *forgetest.Server
	dir, ws  string
	harness  string
	fullsend func(args ...string) (int, string, string)
}

func newPinFixture(t *testing.T) *pinFixture {
	t.Helper()
	return newPinFixtureOn(t, forgetest.NewGitHub(t, nil))
}

func newPinFixtureOn(t *testing.T, srv *forgetest.Server) *pinFixture {
	t.Helper()
	srv.AddRepo("o/agents@main", map[string][]byte{"agents/a.md": []byte("---\nname: a\n---\nremote agent\n")})
	srv.AddRepo("o/skills@main", map[string][]byte{"skills/greet/SKILL.md": []byte(pinSkill), "skills/greet/notes.md": []byte("notes\n")})
	srv.AddRepo("o/base@v1", map[string][]byte{"base.yaml": []byte("model: base-model\ntimeout_minutes: 9\n")})
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := forgeConfigYAML(srv, "https://"+srv.WebHost()+"/o/", "")
	cfg = strings.Replace(cfg, "type: github", "type: "+srv.Forge().Type, 1)
	write("config.yaml", cfg)
	write("agents/local.md", "---\nname: local\n---\nlocal agent\n")
	write("skills/local/SKILL.md", "---\nname: local\ndescription: local skill\n---\nlocal\n")
	write("harness/h.yaml", pinHarness)
	testOnlyFetchOptions = srv.Reach
	t.Cleanup(func() { testOnlyFetchOptions = nil })
	ws := t.TempDir()
	return &pinFixture{srv: srv, dir: dir, ws: ws, harness: filepath.Join(dir, "harness/h.yaml"), fullsend: libraryCLI(t, ws, dir)}
}

func (f *pinFixture) read(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(f.harness)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// golden compares the harness, with the fake forge's host:port replaced by
// FORGE, against testdata/pin/NAME.
func (f *pinFixture) golden(t *testing.T, name string) {
	t.Helper()
	got := strings.ReplaceAll(f.read(t), f.srv.WebHost(), "FORGE")
	p := filepath.Join("testdata", "pin", name)
	if os.Getenv("FULLSEND_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("%s differs:\n%s", p, pin.Diff(want, []byte(got)))
	}
}

func (f *pinFixture) frozenZeroRequests(t *testing.T, when string) {
	t.Helper()
	f.srv.ResetRequests()
	code, _, stderr := f.fullsend("resolve", "--frozen", f.harness)
	if code != 0 || f.srv.RequestCount() != 0 {
		t.Fatalf("%s: resolve --frozen: exit %d, %d requests: %s", when, code, f.srv.RequestCount(), stderr)
	}
}

// TestPinCLI: pin a branch URL of a file (agent), a skill directory and a
// base harness into a locked harness; each writes a commit URL with its
// hash and a "# pin: REF" comment, keeps every comment (golden file),
// updates the lock entry, and resolve --frozen then accepts the harness
// with zero requests. pin --update --dry-run shows the move of the one
// branch that moved and writes nothing; pin --update moves exactly that
// reference.
func TestPinCLI(t *testing.T) {
	f := newPinFixture(t)
	if code, _, stderr := f.fullsend("lock", f.harness); code != 0 {
		t.Fatalf("lock: exit %d %s", code, stderr)
	}
	skillMain := f.srv.Commit("o/skills@main")
	code, stdout, stderr := f.fullsend("pin", f.harness, "skills", f.srv.TreeURL("o/skills@main", "skills/greet"))
	if code != 0 {
		t.Fatalf("pin skills: exit %d %s", code, stderr)
	}
	for _, want := range []string{"main -> commit " + skillMain, "directory, 2 files", "scan: passed", "allowed_remote_resources: added https://" + f.srv.WebHost() + "/o/skills/", `entry "h" updated`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("pin skills output lacks %q:\n%s", want, stdout)
		}
	}
	if code, _, stderr := f.fullsend("pin", f.harness, "agent", f.srv.BlobURL("o/agents@main", "agents/a.md")); code != 0 {
		t.Fatalf("pin agent: exit %d %s", code, stderr)
	}
	code, stdout, stderr = f.fullsend("pin", "--json", f.harness, "base", f.srv.BlobURL("o/base@v1", "base.yaml"))
	if code != 0 {
		t.Fatalf("pin base: exit %d %s", code, stderr)
	}
	var rep pinReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.References) != 1 || rep.References[0].Commit != f.srv.Commit("o/base@v1") ||
		rep.References[0].Ref != "v1" || rep.References[0].Type != "file" || !strings.HasPrefix(rep.References[0].Scan, "passed") {
		t.Fatalf("pin base --json: %v %s", err, stdout)
	}
	f.golden(t, "pinned.yaml")
	f.frozenZeroRequests(t, "after pin")

	// The skill branch moves; the others do not.
	f.srv.AddRepo("o/skills@main", map[string][]byte{"skills/greet/SKILL.md": []byte(pinSkill), "skills/greet/notes.md": []byte("more notes\n")})
	moved := f.srv.Commit("o/skills@main")
	before := f.read(t)
	code, stdout, stderr = f.fullsend("pin", "--update", "--dry-run", f.harness)
	if code != 0 || f.read(t) != before || !strings.Contains(stdout, "--dry-run") ||
		!strings.Contains(stdout, "-  - https://"+f.srv.WebHost()+"/o/skills/tree/"+skillMain) ||
		!strings.Contains(stdout, "+  - https://"+f.srv.WebHost()+"/o/skills/tree/"+moved) {
		t.Fatalf("--dry-run: exit %d %s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = f.fullsend("pin", "--update", f.harness)
	if code != 0 || !strings.Contains(stdout, skillMain+" -> "+moved) || !strings.Contains(stdout, "agent (main): up to date") || !strings.Contains(stdout, "base (v1): up to date") {
		t.Fatalf("--update: exit %d %s\n%s", code, stdout, stderr)
	}
	after := f.read(t)
	if d := pin.Diff([]byte(before), []byte(after)); strings.Count(d, "\n-") != 1 || strings.Count(d, "\n+") != 1 || !strings.Contains(d, moved) {
		t.Fatalf("--update changed more than the skill line:\n%s", d)
	}
	f.golden(t, "updated.yaml")
	f.frozenZeroRequests(t, "after --update")
	code, stdout, _ = f.fullsend("pin", "--update", f.harness, "skills")
	if code != 0 || !strings.Contains(stdout, "up to date") || f.read(t) != after {
		t.Fatalf("second --update: exit %d %s", code, stdout)
	}
	// Pinning the same directory again replaces its entry, not a second one.
	if code, _, stderr := f.fullsend("pin", f.harness, "skills", f.srv.TreeURL("o/skills@main", "skills/greet")); code != 0 || f.read(t) != after {
		t.Fatalf("re-pin: exit %d %s\n%s", code, stderr, pin.Diff([]byte(after), []byte(f.read(t))))
	}
}

// TestPinOrgRefuses: a URL the org allowlist does not cover edits nothing,
// sends nothing and names the config.yaml line to add.
func TestPinOrgRefuses(t *testing.T) {
	f := newPinFixture(t)
	f.srv.AddRepo("evil/r@main", map[string][]byte{"a.md": []byte("x\n")})
	code, _, stderr := f.fullsend("pin", f.harness, "agent", f.srv.BlobURL("evil/r@main", "a.md"))
	line := oneStderrLine(t, stderr)
	if code != 1 || !strings.Contains(line, `"- https://`+f.srv.WebHost()+`/evil/r/"`) || !strings.Contains(line, "config.yaml") {
		t.Fatalf("exit %d %s", code, stderr)
	}
	if f.read(t) != pinHarness || f.srv.RequestCount() != 0 {
		t.Fatalf("harness edited or %d requests sent", f.srv.RequestCount())
	}
}

// TestPinNothingWrittenOnFailure: when the edited harness does not resolve
// (here: the scan blocks... simulated by a failing hook after resolution)
// or the forge fails, the harness is untouched.
func TestPinNothingWrittenOnFailure(t *testing.T) {
	f := newPinFixture(t)
	testOnlyPinHook = func() error { return errors.New("injected failure before writing") }
	defer func() { testOnlyPinHook = nil }()
	code, _, stderr := f.fullsend("pin", f.harness, "skills", f.srv.TreeURL("o/skills@main", "skills/greet"))
	if code != 1 || !strings.Contains(stderr, "injected") || f.read(t) != pinHarness {
		t.Fatalf("exit %d %s", code, stderr)
	}
	testOnlyPinHook = nil
	code, _, stderr = f.fullsend("pin", f.harness, "skills", f.srv.TreeURL("o/skills@nope", "skills/greet"))
	if code != 1 || !strings.Contains(oneStderrLine(t, stderr), "not found") || f.read(t) != pinHarness {
		t.Fatalf("unknown branch: exit %d %s", code, stderr)
	}
	code, _, stderr = f.fullsend("pin", f.harness, "pre_script", f.srv.BlobURL("o/agents@main", "agents/a.md"))
	if code != 2 || !strings.Contains(stderr, "must be local") {
		t.Fatalf("executable field: exit %d %s", code, stderr)
	}
	entries, _ := os.ReadDir(filepath.Dir(f.harness))
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
}

// TestPinScanBlocks: a skill whose content the scanner blocks (a bidi
// override) is neither written into the harness nor cached.
func TestPinScanBlocks(t *testing.T) {
	f := newPinFixture(t)
	f.srv.AddRepo("o/skills@evil", map[string][]byte{"skills/greet/SKILL.md": []byte("---\nname: greet\ndescription: greets\n---\nSay \u202ehello.\n")})
	code, _, stderr := f.fullsend("pin", f.harness, "skills", f.srv.TreeURL("o/skills@evil", "skills/greet"))
	if code != 1 || !strings.Contains(oneStderrLine(t, stderr), "blocked") || f.read(t) != pinHarness {
		t.Fatalf("exit %d %s", code, stderr)
	}
	entries, _ := os.ReadDir(filepath.Join(cas.DefaultDir(f.ws, nil), "resources", "sha256"))
	if len(entries) != 0 {
		t.Fatalf("blocked content cached: %v", entries)
	}
}

// TestPinStaleLockRefused: when the harness changed since it was locked,
// pin refuses instead of folding the unlocked edit into the new entry.
func TestPinStaleLockRefused(t *testing.T) {
	f := newPinFixture(t)
	if code, _, stderr := f.fullsend("lock", f.harness); code != 0 {
		t.Fatalf("lock: exit %d %s", code, stderr)
	}
	edited := strings.Replace(pinHarness, "timeout_minutes: 5", "timeout_minutes: 50", 1)
	if err := os.WriteFile(f.harness, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	lockBefore, _ := os.ReadFile(filepath.Join(f.dir, "lock.yaml"))
	code, _, stderr := f.fullsend("pin", f.harness, "skills", f.srv.TreeURL("o/skills@main", "skills/greet"))
	lockAfter, _ := os.ReadFile(filepath.Join(f.dir, "lock.yaml"))
	if code != 1 || !strings.Contains(oneStderrLine(t, stderr), "lock --update") || f.read(t) != edited || string(lockAfter) != string(lockBefore) {
		t.Fatalf("exit %d %s", code, stderr)
	}
}

// TestPinForges: pin and pin --update against a fake GitLab and a fake
// GitHub Enterprise, configured under forges: as a user would.
func TestPinForges(t *testing.T) {
	for name, mk := range map[string]func(t *testing.T) *forgetest.Server{
		"gitlab":     func(t *testing.T) *forgetest.Server { return forgetest.NewGitLab(t, nil) },
		"enterprise": func(t *testing.T) *forgetest.Server { return forgetest.NewGitHub(t, nil, forgetest.Enterprise()) },
	} {
		t.Run(name, func(t *testing.T) {
			f := newPinFixtureOn(t, mk(t))
			if code, _, stderr := f.fullsend("lock", f.harness); code != 0 {
				t.Fatalf("lock: exit %d %s", code, stderr)
			}
			for _, args := range [][]string{
				{"skills", f.srv.TreeURL("o/skills@main", "skills/greet")},
				{"agent", f.srv.BlobURL("o/agents@main", "agents/a.md")},
			} {
				if code, _, stderr := f.fullsend("pin", f.harness, args[0], args[1]); code != 0 {
					t.Fatalf("pin %s: exit %d %s", args[0], code, stderr)
				}
			}
			h := f.read(t)
			if !strings.Contains(h, "/"+f.srv.Commit("o/skills@main")+"/skills/greet#sha256=") || !strings.Contains(h, "/"+f.srv.Commit("o/agents@main")+"/agents/a.md#sha256=") {
				t.Fatalf("harness:\n%s", h)
			}
			f.frozenZeroRequests(t, "after pin")
			f.srv.AddRepo("o/agents@main", map[string][]byte{"agents/a.md": []byte("---\nname: a\n---\nremote agent v2\n")})
			if code, stdout, stderr := f.fullsend("pin", "--update", f.harness); code != 0 || !strings.Contains(stdout, "-> "+f.srv.Commit("o/agents@main")) {
				t.Fatalf("--update: exit %d %s %s", code, stdout, stderr)
			}
			f.frozenZeroRequests(t, "after --update")
		})
	}
}
