package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/corpustest"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
	"github.com/fullsend-ai/fullsend/internal/yamlx/yamlxtest"
)

const pin = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// tree writes files (path -> content; a trailing "/" makes a directory) under
// a new temp dir and returns it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	d := t.TempDir()
	for p, c := range files {
		full := filepath.Join(d, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func baseTree() map[string]string {
	return map[string]string{
		"agents/a.md":             "---\nname: a\n---\n",
		"agents/b.md":             "---\nname: b\n---\n",
		"policies/p.yaml":         "version: 1\n",
		"policies/q.yaml":         "version: 1\n",
		"skills/s1/SKILL.md":      "---\nname: s1\n---\n",
		"skills/s2/SKILL.md":      "---\nname: s2\n---\n",
		"other/s1/SKILL.md":       "---\nname: s1\n---\n",
		"plugins/pl/plugin.json":  "{}",
		"schemas/r.schema.json":   "{}",
		"scripts/pre.sh":          "#!/bin/sh\n",
		"scripts/validate.sh":     "#!/bin/sh\n",
		"env/x.env":               "A=1\n",
		"profiles/pr.yaml":        "x: 1\n",
		"providers/pv.yaml":       "x: 1\n",
		"skills/nomd/README.md":   "",
		"harness/placeholder.txt": "",
	}
}

func orgCfg(t *testing.T, prefixes ...string) *config.Config {
	t.Helper()
	c := config.Default()
	for _, p := range prefixes {
		cp, err := ref.CanonicalPrefix(p)
		if err != nil {
			t.Fatal(err)
		}
		c.AllowedRemoteResources = append(c.AllowedRemoteResources, cp)
	}
	return c
}

func write(t *testing.T, dir, rel, content string) string {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const goodHarness = `agent: agents/a.md
policy: policies/p.yaml
skills: [skills/s1]
plugins: [plugins/pl]
openshell: {profiles: [profiles/pr.yaml]}
providers: [providers/pv.yaml]
pre_script: scripts/pre.sh
validation_loop: {script: scripts/validate.sh, schema: schemas/r.schema.json, max_iterations: 2}
host_files:
  - {src: env/x.env, dest: /sandbox/workspace/.env.d/x.env, expand: true}
  - {src: "${CREDS}", dest: /tmp/creds.json}
  - {src: env/missing.env, dest: /tmp/m, optional: true}
env: {runner: {A: "1"}, sandbox: {B: "2"}}
timeout_minutes: 5
`

func TestValidateGood(t *testing.T) {
	d := tree(t, baseTree())
	p := write(t, d, "harness/h.yaml", goodHarness)
	h, err := Load(p, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h.Root != d {
		t.Fatalf("FindRoot = %s, want %s", h.Root, d)
	}
	res, err := h.Check(nil)
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	for _, r := range res {
		fields = append(fields, r.Field)
	}
	want := []string{"agent", "policy", "openshell.profiles[0]", "providers[0]", "skills[0]", "plugins[0]",
		"validation_loop.schema", "validation_loop.script", "pre_script", "host_files[0].src", "host_files[1].src", "host_files[2].src"}
	if !slices.Equal(fields, want) {
		t.Fatalf("fields %v", fields)
	}
	if res[0].Local != filepath.Join(d, "agents/a.md") || res[0].Kind != Agent {
		t.Fatalf("agent resolved to %+v", res[0])
	}
	if !res[8].Executable || res[8].Kind != Script || !res[9].Executable {
		t.Fatalf("executables %+v", res[8])
	}
	if res[10].Local != "" || !res[10].EnvExpanded() {
		t.Fatalf("env host file %+v", res[10])
	}
	if res[11].Local != "" || !res[11].Optional {
		t.Fatalf("optional host file %+v", res[11])
	}
	if res[0].Pos.Line != 1 || res[4].Pos.Line != 3 || res[10].Pos.Line != 11 {
		t.Fatalf("positions %+v %+v %+v", res[0].Pos, res[4].Pos, res[10].Pos)
	}
}

// malformed variants of a harness: each must fail naming file, line and
// field.
var malformed = []yamlxtest.ErrorCase{
	{Name: "unknown field", In: "agent: agents/a.md\nagnet: x\n", Want: "h.yaml:2: agnet: unknown field", Err: yamlx.ErrUnknownField},
	{Name: "unknown nested", In: "validation_loop:\n  schema: schemas/r.schema.json\n  max_iteration: 2\n", Want: "h.yaml:3: validation_loop.max_iteration", Err: yamlx.ErrUnknownField},
	{Name: "unknown host_files key", In: "host_files:\n  - src: env/x.env\n    dst: /tmp/x\n", Want: "h.yaml:3: host_files[0].dst", Err: yamlx.ErrUnknownField},
	{Name: "unknown in forge overlay", In: "forge:\n  github:\n    skils: [skills/s1]\n", Want: "h.yaml:3: forge.github.skils", Err: yamlx.ErrUnknownField},
	{Name: "base inside overlay", In: "forge:\n  github:\n    base: x.yaml\n", Want: "h.yaml:3: forge.github.base", Err: yamlx.ErrUnknownField},
	{Name: "security in overlay", In: "forge:\n  github:\n    security: {fail_mode: open}\n", Want: "h.yaml:3: forge.github.security", Err: yamlx.ErrUnknownField},
	{Name: "unknown security", In: "security:\n  failmode: open\n", Want: "h.yaml:2: security.failmode", Err: yamlx.ErrUnknownField},
	{Name: "unknown hook", In: "security:\n  sandbox_hooks: {tirth: true}\n", Want: "h.yaml:2: security.sandbox_hooks.tirth", Err: yamlx.ErrUnknownField},
	{Name: "fail mode", In: "security: {fail_mode: sometimes}\n", Want: "h.yaml:1: security.fail_mode", Err: yamlx.ErrValue},
	{Name: "skills not list", In: "skills: skills/s1\n", Want: "h.yaml:1: skills", Err: yamlx.ErrType},
	{Name: "agent list", In: "agent: [a]\n", Want: "h.yaml:1: agent", Err: yamlx.ErrType},
	{Name: "timeout text", In: "timeout_minutes: soon\n", Want: "h.yaml:1: timeout_minutes", Err: yamlx.ErrType},
	{Name: "timeout zero", In: "timeout_minutes: 0\n", Want: "h.yaml:1: timeout_minutes", Err: yamlx.ErrValue},
	{Name: "max iterations", In: "validation_loop: {schema: s, max_iterations: 0}\n", Want: "h.yaml:1: validation_loop.max_iterations", Err: yamlx.ErrValue},
	{Name: "max fetches zero", In: "max_runtime_fetches: 0\n", Want: "h.yaml:1: max_runtime_fetches", Err: yamlx.ErrValue},
	{Name: "readonly text", In: "readonly_repo: yes please\n", Want: "h.yaml:1: readonly_repo", Err: yamlx.ErrType},
	{Name: "env name", In: "env:\n  runner:\n    BAD-NAME: x\n", Want: "h.yaml:3: env.runner.BAD-NAME", Err: yamlx.ErrValue},
	{Name: "env unknown", In: "env:\n  host: {A: b}\n", Want: "h.yaml:2: env.host", Err: yamlx.ErrUnknownField},
	{Name: "host file no dest", In: "host_files:\n  - src: env/x.env\n", Want: "h.yaml:2: host_files[0].dest", Err: yamlx.ErrValue},
	{Name: "forge name", In: "forge:\n  GitHub: {}\n", Want: "h.yaml:2: forge.GitHub", Err: yamlx.ErrValue},
	{Name: "duplicate key", In: "agent: a\nagent: b\n", Want: "h.yaml:2: agent: duplicate key", Err: yamlx.ErrDuplicate},
	{Name: "syntax", In: "agent: [\n", Want: "h.yaml:", Err: yamlx.ErrSyntax},
	{Name: "overlay refusal reason", In: "forge:\n  gitlab:\n    allowed_remote_resources: []\n", Want: "h.yaml:3: forge.gitlab.allowed_remote_resources: unknown field: not allowed inside a forge overlay", Err: yamlx.ErrUnknownField},
	{Name: "host file no src", In: "host_files:\n  - dest: /tmp/x\n", Want: "h.yaml:2: host_files[0].src: invalid value: required", Err: yamlx.ErrValue},
	{Name: "env unknown checks names first", In: "env:\n  host: {A-B: x}\n", Want: "h.yaml:2: env.host.A-B: invalid value", Err: yamlx.ErrValue},
	{Name: "env unknown checks values first", In: "env:\n  host: [x]\n", Want: "h.yaml:2: env.host: wrong type", Err: yamlx.ErrType},
	{Name: "openshell unknown", In: "openshell: {profile: [x]}\n", Want: "h.yaml:1: openshell.profile", Err: yamlx.ErrUnknownField},
}

func TestParseMalformed(t *testing.T) {
	yamlxtest.CheckErrors(t, malformed, func(in []byte) error {
		_, err := Parse("h.yaml", in)
		return err
	})
}

// lineEdit changes one line of a harness: the line is found by following
// path, a list of line prefixes (indentation included) each matched on or
// after the line the previous one matched.
type lineEdit struct {
	path []string
	repl func(line string) string
}

func (e lineEdit) apply(t *testing.T, src string) (string, int) {
	t.Helper()
	lines := strings.Split(src, "\n")
	i := 0
	for _, p := range e.path {
		for i < len(lines) && !strings.HasPrefix(lines[i], p) {
			i++
		}
		if i == len(lines) {
			t.Fatalf("no line %q (path %q) in the harness", p, e.path)
		}
	}
	lines[i] = e.repl(lines[i])
	return strings.Join(lines, "\n"), i + 1
}

// setValue keeps a line's indentation, "- " and key and replaces its value.
func setValue(v string) func(string) string {
	return func(l string) string {
		if k := strings.Index(l, ": "); k >= 0 {
			return l[:k+2] + v
		}
		return l[:strings.Index(l, "- ")+2] + v
	}
}

// TestLibrariesMalformedVariants: the Main harness of each library with one
// field broken fails naming file, line and field.
func TestLibrariesMalformedVariants(t *testing.T) {
	corpustest.Each(t, func(t *testing.T, lib corpustest.Library) {
		dir := lib.Dir
		cfg := loadConfig(t, dir)
		src, err := os.ReadFile(filepath.Join(dir, "harness", lib.Main+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		// An org-allowed prefix: remote references under it fail for
		// their own reason, not for the allowlist.
		allowed := lib.AllowedRemote[len(lib.AllowedRemote)-1]
		remote := func(p string) string { return allowed + "x/" + p + "#sha256=" + pin }
		edit := func(repl func(string) string, path ...string) lineEdit { return lineEdit{path, repl} }
		variants := []struct {
			name  string
			edit  lineEdit
			add   string // appended as a top-level line instead of edit
			field string
			err   error
		}{
			{name: "typo field", edit: edit(func(l string) string { return strings.Replace(l, "timeout_minutes:", "timeout_minute:", 1) }, "timeout_minutes:"), field: "timeout_minute", err: yamlx.ErrUnknownField},
			{name: "remote pre_script", edit: edit(setValue(remote("pre.sh")), "pre_script:"), field: "pre_script", err: ErrExecutableRemote},
			{name: "remote validation script", edit: edit(setValue(remote("v.sh")), "validation_loop:", "  script:"), field: "validation_loop.script", err: ErrExecutableRemote},
			{name: "remote host file", edit: edit(setValue(remote("e.env")), "host_files:", "  - src:"), field: "host_files[0].src", err: ErrExecutableRemote},
			{name: "unpinned agent", edit: edit(setValue(allowed+"main/agents/a.md"), "agent:"), field: "agent", err: ref.ErrMissingDigest},
			{name: "agent outside allowlist", edit: edit(setValue(allowed+"main/agents/a.md#sha256="+pin), "agent:"), field: "agent", err: ref.ErrNotAllowed},
			{name: "http agent", edit: edit(setValue("http://raw.githubusercontent.com/o/r/a.md#sha256="+pin), "agent:"), field: "agent", err: ref.ErrScheme},
			{name: "missing skill", edit: edit(setValue("skills/no-such-skill"), "skills:", "  - "), field: "skills[0]", err: ErrNotFound},
			{name: "escaping policy", edit: edit(setValue("../../../etc/passwd"), "policy:"), field: "policy", err: ErrEscapes},
			{name: "missing overlay skill", edit: edit(setValue("skills/no-such-forge-skill"), "forge:", "  github:", "    skills:", "      - "), field: "forge.github.skills[0]", err: ErrNotFound},
			{name: "runtime fetch without allowlist", add: "allow_runtime_fetch: true", field: "allow_runtime_fetch", err: ErrRuntimeFetch},
			{name: "max fetches without allowlist", add: "max_runtime_fetches: 3", field: "max_runtime_fetches", err: ErrRuntimeFetch},
			{name: "prefix not in org list", add: "allowed_remote_resources: [https://github.com/evil/]", field: "allowed_remote_resources", err: ErrOrgAllowlist},
			{name: "prefix without slash", add: "allowed_remote_resources: [" + strings.TrimSuffix(allowed, "/") + "]", field: "allowed_remote_resources", err: ref.ErrPrefix},
			{name: "env in agent", edit: edit(setValue("${AGENT}"), "agent:"), field: "agent", err: ErrEnvNotAllowed},
			{name: "relative dest", edit: edit(setValue("tmp/creds.json"), "host_files:", "    dest:"), field: "host_files[0].dest", err: yamlx.ErrValue},
			{name: "bad image digest", edit: edit(func(l string) string { return strings.Replace(l, "@sha256:", "@sha256:zz", 1) }, "image:"), field: "image", err: yamlx.ErrValue},
		}
		for _, v := range variants {
			t.Run(v.name, func(t *testing.T) {
				var mod string
				var line int
				if v.add != "" {
					mod = strings.TrimRight(string(src), "\n") + "\n" + v.add + "\n"
					line = strings.Count(mod, "\n")
				} else {
					mod, line = v.edit.apply(t, string(src))
				}
				p := filepath.Join(t.TempDir(), lib.Main+".yaml")
				if err := os.WriteFile(p, []byte(mod), 0o644); err != nil {
					t.Fatal(err)
				}
				h, err := Load(p, LoadOptions{Root: dir, Config: cfg})
				if err == nil {
					err = h.Validate(cfg)
				}
				if err == nil {
					t.Fatal("accepted")
				}
				if !errors.Is(err, v.err) {
					t.Fatalf("err = %v, want %v", err, v.err)
				}
				want := fmt.Sprintf("%s:%d: %s", p, line, v.field)
				if !strings.HasPrefix(err.Error(), want) {
					t.Fatalf("err = %q\nwant prefix %q", err, want)
				}
			})
		}
	})
}

func TestRemoteRefs(t *testing.T) {
	d := tree(t, baseTree())
	cfg := orgCfg(t, "https://github.com/fullsend-ai/")
	body := "allowed_remote_resources: [https://github.com/fullsend-ai/library/]\n" +
		"agent: https://GitHub.com/fullsend-ai/library/agents/a.md#sha256=" + strings.ToUpper(pin) + "\n" +
		"skills:\n  - skills/s1\n  - https://github.com/fullsend-ai/library/tree/abc/skills/rust#sha256=" + pin + "\n" +
		"allow_runtime_fetch: true\n"
	p := write(t, d, "harness/h.yaml", body)
	h, err := Load(p, LoadOptions{Root: d, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.Check(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Ref.URL != "https://github.com/fullsend-ai/library/agents/a.md" || string(res[0].Ref.Digest) != pin || res[0].Local != "" {
		t.Fatalf("agent %+v", res[0])
	}
	if h.EffectiveMaxRuntimeFetches() != DefaultMaxRuntimeFetches {
		t.Fatal("default max fetches")
	}
	// Prefix confusion and traversal are rejected by the allowlist.
	for _, bad := range []string{
		"https://github.com/fullsend-ai/library-evil/a.md#sha256=" + pin,
		"https://github.com/fullsend-ai/library/../evil/a.md#sha256=" + pin,
		"https://github.com/fullsend-ai/library/%2e%2e/evil/a.md#sha256=" + pin,
		"https://github.com/fullsend-ai/library%252Fevil/a.md#sha256=" + pin,
		"https://u@github.com/fullsend-ai/library/a.md#sha256=" + pin,
	} {
		p := write(t, d, "harness/bad.yaml", "allowed_remote_resources: [https://github.com/fullsend-ai/library/]\nagent: "+bad+"\n")
		h, err := Load(p, LoadOptions{Root: d, Config: cfg})
		if err == nil {
			err = h.Validate(cfg)
		}
		if err == nil || !strings.Contains(err.Error(), "bad.yaml:2: agent") {
			t.Errorf("%s: err = %v", bad, err)
		}
		if strings.Contains(fmt.Sprint(err), "u@") {
			t.Errorf("userinfo leaked: %v", err)
		}
	}
}

func TestBaseComposition(t *testing.T) {
	files := baseTree()
	files["harness/root.yaml"] = `agent: agents/a.md
policy: policies/p.yaml
skills: [skills/s1, skills/s2]
plugins: [plugins/pl]
providers: [providers/pv.yaml]
readonly_repo: true
host_files:
  - {src: env/x.env, dest: /a}
  - {src: env/x.env, dest: /b}
env: {runner: {A: base, B: base}}
allowed_remote_resources: [https://github.com/o/a/]
security: {fail_mode: closed, sandbox_hooks: {tirith: true}, host_scanners: true}
validation_loop: {schema: schemas/r.schema.json, max_iterations: 3}
timeout_minutes: 10
forge:
  github: {skills: [skills/s2], env: {runner: {G: base}}}
`
	files["harness/mid.yaml"] = "base: harness/root.yaml\nagent: agents/b.md\n"
	files["harness/child.yaml"] = `base: harness/mid.yaml
policy: policies/q.yaml
skills: [other/s1]
providers: [providers/pv.yaml]
readonly_repo: false
host_files:
  - {src: env/x.env, dest: /a, expand: true}
env: {runner: {B: child, C: child}}
allowed_remote_resources: [https://github.com/o/b/]
security: {fail_mode: open, sandbox_hooks: {tirith: false, ssrf: true}, host_scanners: false}
validation_loop: {max_iterations: 1}
forge:
  github: {env: {runner: {G: child}}}
  gitlab: {policy: policies/p.yaml}
`
	d := tree(t, files)
	cfg := orgCfg(t, "https://github.com/o/")
	h, err := Load(filepath.Join(d, "harness/child.yaml"), LoadOptions{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("%s: %+v", what, h)
		}
	}
	check("chain", slices.Equal(h.Chain, []string{filepath.Join(d, "harness/child.yaml"), "harness/mid.yaml", "harness/root.yaml"}))
	check("agent from mid", h.Agent == "agents/b.md")
	check("policy from child", h.Policy == "policies/q.yaml")
	check("skills basename replace", slices.Equal(h.Skills, []string{"skills/s2", "other/s1"}))
	check("plugins kept", slices.Equal(h.Plugins, []string{"plugins/pl"}))
	check("providers dedup", slices.Equal(h.Providers, []string{"providers/pv.yaml"}))
	check("readonly stricter", h.ReadonlyRepo)
	check("host files last dest wins", len(h.HostFiles) == 2 && h.HostFiles[0].Dest == "/b" && h.HostFiles[1].Dest == "/a" && h.HostFiles[1].Expand)
	check("env merge", h.Env.Runner["A"] == "base" && h.Env.Runner["B"] == "child" && h.Env.Runner["C"] == "child")
	check("allowlist union", slices.Equal(h.AllowedRemoteResources, []string{"https://github.com/o/a/", "https://github.com/o/b/"}))
	check("fail mode stricter", h.Security.FailMode == "closed")
	check("hooks stricter", h.Security.SandboxHooks["tirith"] && h.Security.SandboxHooks["ssrf"])
	check("host scanners stricter", h.Security.HostScanners != nil && *h.Security.HostScanners)
	check("validation loop per key", h.ValidationLoop.Schema == "schemas/r.schema.json" && h.ValidationLoop.MaxIterations == 1)
	check("timeout inherited", h.TimeoutMinutes == 10)
	check("forge names", slices.Equal(h.ForgeNames(), []string{"github", "gitlab"}))
	check("weakening noticed", len(h.Notices) >= 4)
	if err := h.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	if err := h.ApplyForge("github"); err != nil {
		t.Fatal(err)
	}
	check("forge merged per key", h.Env.Runner["G"] == "child" && slices.Equal(h.Skills, []string{"other/s1", "skills/s2"}))
	if err := h.Validate(cfg); err != nil {
		t.Fatal(err)
	}
}

func TestApplyForgeUnknown(t *testing.T) {
	h, err := Parse("h.yaml", []byte("forge: {github: {}, gitlab: {}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = h.ApplyForge("gitea")
	if err == nil || !strings.Contains(err.Error(), `no forge overlay "gitea" (available: github, gitlab)`) {
		t.Fatalf("err = %v", err)
	}
	h2, _ := Parse("h.yaml", []byte("agent: a\n"))
	if err := h2.ApplyForge("github"); err == nil || !strings.Contains(err.Error(), "no forge: section") {
		t.Fatalf("err = %v", err)
	}
}

func TestBaseCycleAndDepth(t *testing.T) {
	files := baseTree()
	files["harness/a.yaml"] = "base: harness/b.yaml\n"
	files["harness/b.yaml"] = "base: harness/c.yaml\n"
	files["harness/c.yaml"] = "base: harness/a.yaml\n"
	files["harness/self.yaml"] = "base: harness/self.yaml\n"
	for i := 0; i < 7; i++ {
		files[fmt.Sprintf("harness/d%d.yaml", i)] = fmt.Sprintf("base: harness/d%d.yaml\n", i+1)
	}
	files["harness/d7.yaml"] = "agent: agents/a.md\n"
	files["harness/d2ok.yaml"] = "agent: agents/a.md\n"
	d := tree(t, files)
	_, err := Load(filepath.Join(d, "harness/a.yaml"), LoadOptions{})
	if !errors.Is(err, ErrCycle) || !strings.Contains(err.Error(), "harness/b.yaml -> harness/c.yaml -> harness/a.yaml") {
		t.Fatalf("cycle err = %v", err)
	}
	if _, err := Load(filepath.Join(d, "harness/self.yaml"), LoadOptions{}); !errors.Is(err, ErrCycle) {
		t.Fatalf("self cycle err = %v", err)
	}
	if _, err := Load(filepath.Join(d, "harness/d0.yaml"), LoadOptions{}); !errors.Is(err, ErrChainTooLong) {
		t.Fatalf("depth err = %v", err)
	}
	// Exactly MaxBaseChain bases is fine.
	if _, err := Load(filepath.Join(d, "harness/d2.yaml"), LoadOptions{}); err != nil {
		t.Fatalf("chain of %d bases: %v", MaxBaseChain, err)
	}
	if _, err := Load(filepath.Join(d, "harness/d1.yaml"), LoadOptions{}); !errors.Is(err, ErrChainTooLong) {
		t.Fatalf("chain of %d bases: %v", MaxBaseChain+1, err)
	}
}

func TestRemoteBase(t *testing.T) {
	d := tree(t, baseTree())
	cfg := orgCfg(t, "https://github.com/o/")
	baseBody := []byte("agent: agents/remote.md#sha256=" + pin + "\nskills: [../skills/x#sha256=" + pin + "]\nsecurity: {fail_mode: closed}\n")
	sum := ref.SHA256(baseBody)
	url := "https://github.com/o/lib/harness/base.yaml"
	child := "allowed_remote_resources: [https://github.com/o/lib/]\nbase: " + url + "#sha256=" + string(sum) + "\nskills: [skills/s1]\n"
	p := write(t, d, "harness/h.yaml", child)

	// No fetcher: a clear error pointing at fullsend resolve.
	_, err := Load(p, LoadOptions{Config: cfg})
	if !errors.Is(err, ErrRemoteBase) || !strings.Contains(err.Error(), "h.yaml:2: base") {
		t.Fatalf("err = %v", err)
	}
	var fetched []string
	fetch := func(_ context.Context, r ref.Ref) ([]byte, error) {
		fetched = append(fetched, r.URL)
		return baseBody, nil
	}
	h, err := Load(p, LoadOptions{Config: cfg, FetchBase: fetch})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fetched, []string{url}) {
		t.Fatalf("fetched %v", fetched)
	}
	if h.Agent != "https://github.com/o/lib/harness/agents/remote.md#sha256="+pin {
		t.Fatalf("agent not resolved against the base URL: %q", h.Agent)
	}
	if !slices.Equal(h.Skills, []string{"https://github.com/o/lib/skills/x#sha256=" + pin, "skills/s1"}) {
		t.Fatalf("skills %v", h.Skills)
	}
	if err := h.Validate(cfg); err != nil {
		t.Fatal(err)
	}

	// Tampered bytes are caught even if the fetcher forgot to verify.
	_, err = Load(p, LoadOptions{Config: cfg, FetchBase: func(context.Context, ref.Ref) ([]byte, error) { return []byte("agent: x\n"), nil }})
	if err == nil || !strings.Contains(err.Error(), "does not match the pinned") {
		t.Fatalf("tamper err = %v", err)
	}
	// Unpinned, outside the allowlist, and outside the org list.
	for _, c := range []struct {
		body string
		err  error
	}{
		{"allowed_remote_resources: [https://github.com/o/lib/]\nbase: " + url + "\n", ref.ErrMissingDigest},
		{"allowed_remote_resources: [https://github.com/o/other/]\nbase: " + url + "#sha256=" + string(sum) + "\n", ref.ErrNotAllowed},
		{"allowed_remote_resources: [https://github.com/x/]\nbase: https://github.com/x/b.yaml#sha256=" + string(sum) + "\n", ErrOrgAllowlist},
		{"base: " + url + "#sha256=" + string(sum) + "\n", ref.ErrNotAllowed},
	} {
		p := write(t, d, "harness/bad.yaml", c.body)
		if _, err := Load(p, LoadOptions{Config: cfg, FetchBase: fetch}); !errors.Is(err, c.err) {
			t.Errorf("%q: err = %v, want %v", c.body, err, c.err)
		}
	}
	// A merged harness needs an agent.
	p = write(t, d, "harness/noagent.yaml", "skills: [skills/s1]\n")
	if h, err := Load(p, LoadOptions{}); err != nil || !errors.Is(h.Validate(nil), yamlx.ErrValue) || !strings.Contains(h.Validate(nil).Error(), "noagent.yaml: agent: invalid value: required") {
		t.Fatalf("harness without agent: %v %v", err, h.Validate(nil))
	}
	// A remote base may not name scripts (they become URLs) or local absolute paths.
	for _, c := range []struct {
		body string
		err  error
	}{
		{"agent: agents/a.md#sha256=" + pin + "\npre_script: scripts/pre.sh\n", ErrExecutableRemote},
		{"agent: /etc/passwd\n", ref.ErrLocalInRemote},
	} {
		body := []byte(c.body)
		s := ref.SHA256(body)
		p := write(t, d, "harness/bad2.yaml", "allowed_remote_resources: [https://github.com/o/lib/]\nbase: "+url+"#sha256="+string(s)+"\n")
		h, err := Load(p, LoadOptions{Config: cfg, FetchBase: func(context.Context, ref.Ref) ([]byte, error) { return body, nil }})
		if err == nil {
			err = h.Validate(cfg)
		}
		if !errors.Is(err, c.err) {
			t.Errorf("remote base with %q: err = %v, want %v", c.body, err, c.err)
		}
	}
}

func TestLayers(t *testing.T) {
	defaults := tree(t, map[string]string{"agents/a.md": "default", "policies/p.yaml": "default", "skills/s1/SKILL.md": "d"})
	org := tree(t, map[string]string{"agents/a.md": "org", "policies/p.yaml": "org"})
	repo := tree(t, map[string]string{"policies/p.yaml": "repo", "harness/h.yaml": "agent: agents/a.md\npolicy: policies/p.yaml\nskills: [skills/s1]\n"})
	h, err := Load(filepath.Join(repo, "harness/h.yaml"), LoadOptions{Root: repo, Layers: []string{defaults, org}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.Check(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"agent": filepath.Join(org, "agents/a.md"), "policy": filepath.Join(repo, "policies/p.yaml"), "skills[0]": filepath.Join(defaults, "skills/s1")}
	for _, r := range res {
		if r.Local != want[r.Field] {
			t.Errorf("%s -> %s, want %s", r.Field, r.Local, want[r.Field])
		}
	}
}

func TestContainment(t *testing.T) {
	d := tree(t, baseTree())
	outside := tree(t, map[string]string{"secret.md": "x", "dir/SKILL.md": "x"})
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(d, "agents/abs.md")))
	must(os.Symlink("../../"+filepath.Base(outside)+"/secret.md", filepath.Join(d, "agents/rel-out.md")))
	must(os.Symlink("a.md", filepath.Join(d, "agents/rel-in.md")))
	must(os.Symlink(filepath.Join(outside, "dir"), filepath.Join(d, "skills/absdir")))
	must(os.Symlink(d+"/agents/a.md", filepath.Join(d, "agents/abs-in.md")))
	// rel-out needs outside to be a sibling of d for the relative link to resolve.
	sib := filepath.Join(filepath.Dir(d), filepath.Base(outside))
	if _, err := os.Stat(sib); err != nil {
		must(os.Symlink(outside, sib))
	}
	cases := []struct {
		field, value string
		err          error
	}{
		{"agent", "agents/abs.md", ErrEscapes},
		{"agent", "agents/rel-out.md", ErrEscapes},
		{"agent", "agents/abs-in.md", ErrEscapes},
		{"agent", "../outside.md", ErrEscapes},
		{"agent", "agents/../../x.md", ErrEscapes},
		{"agent", "agents/rel-in.md", nil},
		{"agent", "agents/./a.md", nil},
		{"skills", "[skills/absdir]", ErrEscapes},
		{"agent", filepath.Join(outside, "secret.md"), nil}, // absolute paths are used as-is
		{"agent", "agents/nope.md", ErrNotFound},
		{"agent", "skills/s1", ErrWrongType},
		{"skills", "[agents/a.md]", ErrWrongType},
		{"skills", "[skills/nomd]", ErrNotFound},
	}
	for _, c := range cases {
		t.Run(c.value, func(t *testing.T) {
			body := c.field + ": " + c.value + "\n"
			if c.field != "agent" {
				body = body + "agent: agents/a.md\n"
			}
			p := write(t, d, "harness/h.yaml", body)
			h, err := Load(p, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			err = h.Validate(nil)
			if c.err == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, c.err) || !strings.Contains(err.Error(), "h.yaml:1: "+c.field) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
		})
	}
}

func TestRefsIncludeOverlays(t *testing.T) {
	h, err := Parse("h.yaml", []byte("agent: a.md\nforge:\n  gitlab:\n    policy: p.yaml\n    skills: [s]\n  github:\n    host_files: [{src: e, dest: /e}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range h.Refs() {
		got = append(got, fmt.Sprintf("%s=%s@%d", r.Field, r.Value, r.Pos.Line))
	}
	want := []string{"agent=a.md@1", "forge.github.host_files[0].src=e@7", "forge.gitlab.policy=p.yaml@4", "forge.gitlab.skills[0]=s@5"}
	if !slices.Equal(got, want) {
		t.Fatalf("refs %v", got)
	}
}

func TestFindRoot(t *testing.T) {
	if got := FindRoot("/x/.fullsend/harness/a.yaml"); got != "/x/.fullsend" {
		t.Fatal(got)
	}
	if got := FindRoot("/x/examples/hello/harness.yaml"); got != "/x/examples/hello" {
		t.Fatal(got)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(goodHarness))
	for _, m := range malformed {
		f.Add([]byte(m.In))
	}
	for _, dir := range corpustest.Seeds(f) {
		files, _ := filepath.Glob(filepath.Join(dir, "harness", "*.yaml"))
		if len(files) == 0 {
			f.Fatalf("no harnesses in %s", dir)
		}
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := Parse("f.yaml", data)
		if err != nil {
			var ye *yamlx.Error
			if !errors.As(err, &ye) || h != nil || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %T %q with %v", err, err, h)
			}
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error does not name the file: %q", err)
			}
			return
		}
		// Every reference field is listed exactly once and forge overlays
		// can be applied.
		refs := h.Refs()
		seen := map[string]bool{}
		for _, r := range refs {
			if seen[r.Field] || r.Value == "" || r.Kind == 0 {
				t.Fatalf("bad ref %+v", r)
			}
			seen[r.Field] = true
		}
		for _, name := range h.ForgeNames() {
			c, _ := Parse("f.yaml", data)
			if err := c.ApplyForge(name); err != nil {
				t.Fatalf("ApplyForge(%s): %v", name, err)
			}
			if len(c.Forge) != 0 || c.AppliedForge != name {
				t.Fatal("overlay left")
			}
		}
		if h.MaxRuntimeFetches < 0 || h.TimeoutMinutes < 0 {
			t.Fatal("negative limit")
		}
	})
}

// TestEmptyListEntryRefused: a bare "-" in a list of references is an
// error at its line, not an empty reference left for Validate.
func TestEmptyListEntryRefused(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"agent: a.md\nskills:\n  - skills/x\n  -\n", "h.yaml:4: skills[1]: invalid value: empty reference"},
		{"agent: a.md\nplugins:\n  -\n", "h.yaml:3: plugins[0]: invalid value: empty reference"},
		{"agent: a.md\nproviders:\n  -\n", "h.yaml:3: providers[0]: invalid value: empty reference"},
		{"agent: a.md\nopenshell:\n  profiles:\n    -\n", "h.yaml:4: openshell.profiles[0]: invalid value: empty reference"},
	} {
		_, err := Parse("h.yaml", []byte(tc.yaml))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: error %v, want %s", tc.yaml, err, tc.want)
		}
	}
}

func TestNameRules(t *testing.T) {
	for _, c := range []struct {
		s               string
		provider, forge bool
	}{
		{"", false, false},
		{"github", true, true},
		{"git-lab_2", true, true},
		{"GitHub", true, false},
		{"a.b", false, false},
		{"a/b", false, false},
		{strings.Repeat("a", 64), true, true},
		{strings.Repeat("a", 65), true, false},
		{strings.Repeat("a", 128), true, false},
		{strings.Repeat("a", 129), false, false},
	} {
		if got := validProviderName(c.s); got != c.provider {
			t.Errorf("validProviderName(%.20q) = %v", c.s, got)
		}
		if got := validForgeName(c.s); got != c.forge {
			t.Errorf("validForgeName(%.20q) = %v", c.s, got)
		}
	}
}
