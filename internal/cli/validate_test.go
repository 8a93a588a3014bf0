package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/corpustest"
)

// runCLI runs the command tree in-process and returns exit code, stdout and
// stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: stateOnlyEnv}
	code := run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

// stateOnlyEnv is an empty environment but for XDG_STATE_HOME (the
// private state directory TestMain made: runs and the run key).
func stateOnlyEnv(k string) string {
	if k == "XDG_STATE_HOME" {
		return os.Getenv(k)
	}
	return ""
}

func oneStderrLine(t *testing.T, stderr string) string {
	t.Helper()
	lines := errorLines(stderr) // progress lines (timestamped) aside
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "fullsend: ") {
		t.Fatalf("stderr is not one 'fullsend: ' line: %q", stderr)
	}
	return lines[0]
}

func TestValidateLibrariesEveryForge(t *testing.T) {
	corpustest.Each(t, testValidateEveryForge)
}

func testValidateEveryForge(t *testing.T, lib corpustest.Library) {
	dir := copyLibrary(t, lib.Dir) // an org fullsend dir, outside the work tree (package trust)
	files, _ := filepath.Glob(filepath.Join(dir, "harness", "*.yaml"))
	sort.Strings(files)
	if len(files) < lib.MinHarnesses {
		t.Fatalf("%d harnesses", len(files))
	}
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		code, stdout, stderr := runCLI(t, "validate", "--fullsend-dir", dir, "--json", rel)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", rel, code, stderr)
		}
		var v validateJSON
		if err := json.Unmarshal([]byte(stdout), &v); err != nil {
			t.Fatalf("%s: bad json: %v", rel, err)
		}
		if !v.Valid || len(v.Resources) == 0 || len(v.Forges) == 0 || v.Root != dir {
			t.Fatalf("%s: %+v", rel, v)
		}
		for _, fg := range v.Forges {
			code, stdout, stderr := runCLI(t, "validate", "--fullsend-dir", dir, "--forge", fg, rel)
			if code != 0 || stderr != "" {
				t.Fatalf("%s --forge %s: exit %d: %s", rel, fg, code, stderr)
			}
			if !strings.Contains(stdout, "FIELD") || !strings.Contains(stdout, "valid: "+rel+" (forge "+fg+")") {
				t.Fatalf("%s --forge %s: output %s", rel, fg, stdout)
			}
		}
	}
}

func TestValidateJSONShape(t *testing.T) {
	corpustest.Each(t, testValidateJSONShape)
}

func testValidateJSONShape(t *testing.T, lib corpustest.Library) {
	dir := copyLibrary(t, lib.Dir) // an org fullsend dir, outside the work tree (package trust)
	code, stdout, _ := runCLI(t, "validate", "--fullsend-dir", dir, "--forge", "github", "--json", lib.Main)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(stdout), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"harness", "root", "forge", "forges", "chain", "valid", "resources", "notices"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("missing key %q", k)
		}
	}
	res := raw["resources"].([]any)
	first := res[0].(map[string]any)
	for _, k := range []string{"field", "kind", "ref", "resolved", "location", "local_path", "executable", "optional", "file", "line"} {
		if _, ok := first[k]; !ok {
			t.Errorf("resource missing key %q: %v", k, first)
		}
	}
	if first["field"] != "agent" || first["location"] != "local" || first["local_path"] != filepath.Join(dir, "agents", lib.Main+".md") {
		t.Errorf("first resource %v", first)
	}
	var sawRuntime, sawForgeSkill bool
	for _, r := range res {
		m := r.(map[string]any)
		sawRuntime = sawRuntime || m["location"] == "runtime"
		sawForgeSkill = sawForgeSkill || m["ref"] == lib.MainForgeSkill
		if strings.HasPrefix(m["field"].(string), "forge.") {
			t.Errorf("overlay field after --forge: %v", m)
		}
	}
	if !sawRuntime || !sawForgeSkill || raw["forge"] != "github" {
		t.Errorf("runtime %v forge skill %v forge %v", sawRuntime, sawForgeSkill, raw["forge"])
	}
}

func TestValidateByAgentName(t *testing.T) {
	corpustest.Each(t, testValidateByAgentName)
}

func testValidateByAgentName(t *testing.T, lib corpustest.Library) {
	dir := copyLibrary(t, lib.Dir) // an org fullsend dir, outside the work tree (package trust)
	code, stdout, stderr := runCLI(t, "validate", "--fullsend-dir", dir, lib.AllForges)
	if code != 0 || !strings.Contains(stdout, "valid: harness/"+lib.AllForges+".yaml") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	code, _, stderr = runCLI(t, "validate", "--fullsend-dir", dir, "nosuch")
	line := oneStderrLine(t, stderr)
	if code != 1 || !strings.Contains(line, "agents in") || !strings.Contains(line, lib.AllForges) {
		t.Fatalf("exit %d: %q", code, line)
	}
}

func TestValidateFailures(t *testing.T) {
	corpustest.Each(t, testValidateFailures)
}

// editLine replaces the first line of text starting with prefix by
// repl(line); it fails the test when there is none.
func editLine(t *testing.T, text, prefix string, repl func(string) string) string {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			lines[i] = repl(l)
			return strings.Join(lines, "\n")
		}
	}
	t.Fatalf("no line starting with %q", prefix)
	return ""
}

func testValidateFailures(t *testing.T, lib corpustest.Library) {
	dir := copyLibrary(t, lib.Dir) // an org fullsend dir, outside the work tree (package trust)
	tmp := t.TempDir()
	src, _ := os.ReadFile(filepath.Join(dir, "harness", lib.AllForges+".yaml"))
	bad := editLine(t, string(src), "timeout_minutes:", func(l string) string { return l + "\ntimeout_minuets: 3" })
	badPath := filepath.Join(tmp, "bad.yaml")
	os.WriteFile(badPath, []byte(bad), 0o644)
	remote := editLine(t, string(src), "pre_script:", func(string) string {
		return "pre_script: " + lib.AllowedRemote[0] + "x.sh#sha256=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	})
	remotePath := filepath.Join(tmp, "remote.yaml")
	os.WriteFile(remotePath, []byte(remote), 0o644)

	lineOf := func(text, needle string) string {
		for i, l := range strings.Split(text, "\n") {
			if strings.Contains(l, needle) {
				return strconv.Itoa(i + 1)
			}
		}
		t.Fatalf("%q not found", needle)
		return ""
	}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no args", []string{"validate"}, 2, "fullsend: missing HARNESS (see fullsend validate --help)"},
		{"unknown flag", []string{"validate", "--nope", "x"}, 2, "unknown flag"},
		{"missing file", []string{"validate", "--fullsend-dir", dir, "harness/missing.yaml"}, 1, "harness harness/missing.yaml: no such file"},
		{"unknown field", []string{"validate", "--fullsend-dir", dir, badPath}, 1, badPath + ":" + lineOf(bad, "timeout_minuets") + ": timeout_minuets: unknown field"},
		{"remote script", []string{"validate", "--fullsend-dir", dir, remotePath}, 1, remotePath + ":" + lineOf(remote, "pre_script") + ": pre_script: "},
		{"unknown forge", []string{"validate", "--fullsend-dir", dir, "--forge", "gitea", lib.AllForges}, 1, `no forge overlay "gitea" (available: github, gitlab, jira)`},
		{"remote harness", []string{"validate", "https://github.com/o/h.yaml#sha256=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}, 1, "fetched by `fullsend resolve`"},
		{"http harness", []string{"validate", "http://github.com/o/h.yaml"}, 1, "only https"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, c.args...)
			line := oneStderrLine(t, stderr)
			if code != c.code || !strings.Contains(line, c.want) {
				t.Fatalf("exit %d, stderr %q; want %d containing %q", code, line, c.code, c.want)
			}
			if stdout != "" {
				t.Fatalf("stdout on failure: %q", stdout)
			}
		})
	}
}

func TestValidateFindsRootFromHarnessPath(t *testing.T) {
	d := t.TempDir()
	writeFiles(t, d, map[string]string{
		"agents/a.md":    "---\nname: a\n---\n",
		"harness.yaml":   "agent: agents/a.md\n",
		"config.yaml":    "version: \"1\"\ndispatch: {}\n",
		"sub/other.yaml": "agent: agents/a.md\n",
	})
	code, stdout, stderr := runCLI(t, "validate", filepath.Join(d, "harness.yaml"))
	if code != 0 || !strings.Contains(stdout, "valid: harness.yaml: 1 resources") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "fullsend: note: "+filepath.Join(d, "config.yaml")+":2: dispatch: belongs to fullsend features outside the runner") {
		t.Fatalf("config notice missing: %q", stderr)
	}
	// An explicit --fullsend-dir wins over the harness location.
	code, _, stderr = runCLI(t, "validate", "--fullsend-dir", t.TempDir(), filepath.Join(d, "harness.yaml"))
	if code != 1 || !strings.Contains(stderr, "agents/a.md") {
		t.Fatalf("explicit dir ignored: %d %s", code, stderr)
	}
}

func TestVersion(t *testing.T) {
	code, stdout, _ := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(stdout, "fullsend ") || !strings.Contains(stdout, "go1.") {
		t.Fatalf("%d %q", code, stdout)
	}
	code, stdout, _ = runCLI(t, "version", "--json")
	var v map[string]string
	if code != 0 || json.Unmarshal([]byte(stdout), &v) != nil || v["version"] == "" || v["commit"] == "" || !strings.HasPrefix(v["go"], "go1.") || v["platform"] == "" {
		t.Fatalf("%d %q", code, stdout)
	}
	code, _, stderr := runCLI(t, "version", "extra")
	if code != 2 {
		t.Fatalf("extra arg: %d %s", code, stderr)
	}
}

func TestCompletion(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		code, stdout, stderr := runCLI(t, "completion", sh)
		if code != 0 || !strings.Contains(stdout, "fullsend") || len(stdout) < 500 {
			t.Fatalf("%s: %d %q %q", sh, code, stdout[:min(len(stdout), 200)], stderr)
		}
	}
	// Dynamic completion lists our commands.
	code, stdout, _ := runCLI(t, "__complete", "val")
	if code != 0 || !strings.Contains(stdout, "validate") {
		t.Fatalf("__complete: %d %q", code, stdout)
	}
}

func TestHelp(t *testing.T) {
	code, stdout, _ := runCLI(t, "--help")
	if code != 0 || !strings.Contains(stdout, "validate") || !strings.Contains(stdout, "--fullsend-dir") {
		t.Fatalf("%d %q", code, stdout)
	}
}

func TestValidateExampleHello(t *testing.T) {
	p := filepath.Join("..", "..", "examples", "hello", "harness.yaml")
	code, stdout, stderr := runCLI(t, "validate", "--json", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var v validateJSON
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, r := range v.Resources {
		kinds[r.Kind] = true
		if r.Location != "local" || r.LocalPath == "" {
			t.Errorf("resource %+v", r)
		}
	}
	for _, k := range []string{"agent", "policy", "skill", "schema"} {
		if !kinds[k] {
			t.Errorf("example has no %s", k)
		}
	}
}

func TestValidateShowsNativeTools(t *testing.T) {
	d := t.TempDir()
	writeFiles(t, d, map[string]string{
		"agents/a.md":  "---\nname: a\n---\n",
		"harness.yaml": "agent: agents/a.md\nnative:\n  tools: [web_fetch]\n",
		"bad.yaml":     "agent: agents/a.md\nnative:\n  tools: [web_fetch, telnet]\n",
	})
	code, stdout, stderr := runCLI(t, "validate", "--fullsend-dir", d, filepath.Join(d, "harness.yaml"))
	if code != 0 || !strings.Contains(stdout, "native tools allowed: web_fetch\n") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, "validate", "--fullsend-dir", d, "--json", filepath.Join(d, "harness.yaml"))
	var v validateJSON
	if err := json.Unmarshal([]byte(stdout), &v); code != 0 || err != nil || len(v.NativeTools) != 1 || v.NativeTools[0] != "web_fetch" {
		t.Fatalf("json: %d %v %s", code, err, stdout)
	}
	code, _, stderr = runCLI(t, "validate", "--fullsend-dir", d, filepath.Join(d, "bad.yaml"))
	if line := oneStderrLine(t, stderr); code != 1 || !strings.Contains(line, "bad.yaml:3") || !strings.Contains(line, `unknown native tool "telnet"`) {
		t.Fatalf("bad tool: %d %q", code, stderr)
	}
}
