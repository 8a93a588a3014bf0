package config

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/corpustest"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// TestLoadLibraries: the config.yaml of the project's library and of the
// real one load without notices, keep their agents and allowlist, and
// leave every default in place.
func TestLoadLibraries(t *testing.T) {
	corpustest.Each(t, func(t *testing.T, lib corpustest.Library) {
		c, notices, err := Load(lib.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(notices) != 0 {
			t.Errorf("unexpected notices: %v", notices)
		}
		var sources []string
		for _, a := range c.Agents {
			sources = append(sources, a.Source)
		}
		if !slices.Equal(sources, lib.Agents) {
			t.Errorf("agents = %v, want %v", sources, lib.Agents)
		}
		if !slices.Equal(c.AllowedRemoteResources, lib.AllowedRemote) {
			t.Errorf("allowed_remote_resources = %v, want %v", c.AllowedRemoteResources, lib.AllowedRemote)
		}
		if got := c.EffectiveAllowedDomains(); !slices.Equal(got, []string{"raw.githubusercontent.com"}) {
			t.Errorf("EffectiveAllowedDomains = %v", got)
		}
		rr := c.Security.RemoteResources
		if c.Security.FailMode != "closed" || rr.MaxDepth != 10 || rr.MaxResources != 50 || rr.Timeout != 30*time.Second || rr.MaxSizeBytes != 10<<20 {
			t.Errorf("defaults lost: %+v", c.Security)
		}
	})
}

func TestLoadMissingIsDefault(t *testing.T) {
	c, n, err := Load(t.TempDir())
	if err != nil || n != nil || c.Path != "" {
		t.Fatalf("Load(empty dir) = %+v %v %v", c, n, err)
	}
	d := Default()
	rr := d.Security.RemoteResources
	if rr.Timeout != 30*time.Second || rr.MaxSizeBytes != 10<<20 || rr.MaxDepth != 10 || rr.MaxResources != 50 {
		t.Errorf("limits %+v", rr)
	}
	if d.Security.Scan.Local.MLThreshold != 0.92 || d.Security.Scan.Remote.MLThreshold != 0.95 {
		t.Errorf("thresholds %+v", d.Security.Scan)
	}
	gh, ok := d.ForgeByHost("GitHub.com:443")
	if !ok || gh.APIURL != "https://api.github.com" || gh.TokenEnv != "GITHUB_TOKEN" || gh.Type != "github" {
		t.Errorf("github forge %+v", gh)
	}
	gl, ok := d.ForgeByHost("gitlab.com")
	if !ok || gl.APIURL != "https://gitlab.com/api/v4" || gl.TokenEnv != "GITLAB_TOKEN" {
		t.Errorf("gitlab forge %+v", gl)
	}
}

const full = `version: "1"
runtime: claude
agents:
  - source: harness/triage.yaml
allowed_remote_resources:
  - https://GitHub.com/fullsend-ai/library/
sandbox:
  backend: docker
  docker: {host: unix:///run/podman.sock, oci_runtime: runsc, image: busybox}
security:
  fail_mode: open
  remote_resources:
    allowed_domains: [github.com, "*.github.io"]
    allowed_private_networks: [10.1.2.3/8, "::1/128"]
    trusted_harness_prefixes: [https://github.com/fullsend-ai/]
    timeout: 5s
    max_size_bytes: 1024
    max_depth: 3
    max_resources: 7
  scan:
    local: {context_injection: false, ml_threshold: 0.5}
    remote: {ml_threshold: 0.99}
  llm_guard: {url: "http://127.0.0.1:8000/analyze", token_env: LLM_GUARD_TOKEN, timeout: 2s}
forges:
  - {host: ghe.corp.example:8443, type: github, token_env: GHE_TOKEN}
  - {host: GitLab.com, type: gitlab, api_url: "https://gitlab.com/api/v4/", token_env: GL}
`

func TestParseFull(t *testing.T) {
	c, notices, err := Parse("config.yaml", []byte(full))
	if err != nil {
		t.Fatal(err)
	}
	if len(notices) != 0 {
		t.Errorf("notices %v", notices)
	}
	rr := c.Security.RemoteResources
	if c.Runtime != "claude" || c.Sandbox.Backend != "docker" || c.Sandbox.Docker.OCIRuntime != "runsc" {
		t.Errorf("runtime/sandbox %+v", c)
	}
	if c.AllowedRemoteResources[0] != "https://github.com/fullsend-ai/library/" {
		t.Errorf("prefix not canonical: %v", c.AllowedRemoteResources)
	}
	if c.Security.FailMode != "open" || rr.Timeout != 5*time.Second || rr.MaxSizeBytes != 1024 || rr.MaxDepth != 3 || rr.MaxResources != 7 {
		t.Errorf("security %+v", c.Security)
	}
	if !slices.Equal(rr.AllowedPrivateNetworks, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}) {
		t.Errorf("private networks %v", rr.AllowedPrivateNetworks)
	}
	if got := c.EffectiveAllowedDomains(); !slices.Equal(got, []string{"github.com", "*.github.io"}) {
		t.Errorf("domains %v", got)
	}
	if ci := c.Security.Scan.Local.ContextInjection; ci == nil || *ci || c.Security.Scan.Local.MLThreshold != 0.5 || c.Security.Scan.Remote.MLThreshold != 0.99 {
		t.Errorf("scan %+v", c.Security.Scan)
	}
	if c.Security.LLMGuard.TokenEnv != "LLM_GUARD_TOKEN" || c.Security.LLMGuard.Timeout != 2*time.Second {
		t.Errorf("llm guard %+v", c.Security.LLMGuard)
	}
	ghe, ok := c.ForgeByHost("ghe.corp.example:8443")
	if !ok || ghe.APIURL != "https://ghe.corp.example:8443/api/v3" {
		t.Errorf("ghe %+v", ghe)
	}
	if _, ok := c.ForgeByHost("ghe.corp.example"); ok {
		t.Error("port must be part of the forge match")
	}
	gl, _ := c.ForgeByHost("gitlab.com")
	if gl.TokenEnv != "GL" || gl.APIURL != "https://gitlab.com/api/v4" {
		t.Errorf("gitlab override %+v", gl)
	}
	if _, ok := c.ForgeByHost("github.com"); !ok {
		t.Error("default github.com forge dropped")
	}
}

func TestEffectiveDomainsAddsForgeAPI(t *testing.T) {
	c, _, err := Parse("c.yaml", []byte("allowed_remote_resources:\n  - https://github.com/o/\n  - \"https://[2001:db8::1]:8443/x/\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.EffectiveAllowedDomains(); !slices.Equal(got, []string{"github.com", "2001:db8::1", "api.github.com"}) {
		t.Errorf("domains %v", got)
	}
	c2, _, _ := Parse("c.yaml", []byte("security: {remote_resources: {allowed_domains: []}}\nallowed_remote_resources: [https://github.com/o/]\n"))
	if got := c2.EffectiveAllowedDomains(); got == nil || len(got) != 0 {
		t.Errorf("explicit empty allowed_domains must stay empty: %v", got)
	}
}

func TestNotices(t *testing.T) {
	in := "version: \"1\"\ndispatch: {x: 1}\nrepos: []\ncreate_issues: true\ninference: {}\nroles: {}\nfrobnicate: 1\nagents:\n  - {source: a.yaml, name: a}\n"
	c, notices, err := Parse("config.yaml", []byte(in))
	if err != nil || c == nil {
		t.Fatal(err)
	}
	want := []string{
		"config.yaml:2: dispatch: belongs to fullsend features outside the runner; ignored",
		"config.yaml:3: repos: belongs",
		"config.yaml:4: create_issues: belongs",
		"config.yaml:5: inference: belongs",
		"config.yaml:6: roles: belongs",
		"config.yaml:7: frobnicate: unknown key; ignored",
		"config.yaml:9: agents[0].name: unknown key; ignored",
	}
	if len(notices) != len(want) {
		t.Fatalf("notices %q", notices)
	}
	for i, w := range want {
		if !strings.HasPrefix(notices[i], w) {
			t.Errorf("notice %d = %q, want prefix %q", i, notices[i], w)
		}
	}
}

var badConfigs = []struct {
	name, in, want string
	err            error
}{
	{"unknown in security", "security:\n  fail_mod: open\n", "c.yaml:2: security.fail_mod: unknown field", yamlx.ErrUnknownField},
	{"unknown in remote_resources", "security:\n  remote_resources:\n    allowed_domain: [x.com]\n", "c.yaml:3: security.remote_resources.allowed_domain", yamlx.ErrUnknownField},
	{"unknown in scan", "security:\n  scan:\n    local: {threshold: 1}\n", "c.yaml:3: security.scan.local.threshold", yamlx.ErrUnknownField},
	{"unknown in llm_guard", "security:\n  llm_guard: {uri: x}\n", "c.yaml:2: security.llm_guard.uri", yamlx.ErrUnknownField},
	{"unknown in forges", "forges:\n  - host: x.example\n    type: github\n    token: abc\n", "c.yaml:4: forges[0].token", yamlx.ErrUnknownField},
	{"fail mode", "security: {fail_mode: maybe}\n", "c.yaml:1: security.fail_mode", yamlx.ErrValue},
	{"bad cidr", "security:\n  remote_resources:\n    allowed_private_networks: [10.0.0.0]\n", "c.yaml:3: security.remote_resources.allowed_private_networks[0]", yamlx.ErrValue},
	{"bad domain", "security:\n  remote_resources:\n    allowed_domains: [\"*.com\"]\n", "c.yaml:3: security.remote_resources.allowed_domains[0]", nil},
	{"domain with scheme", "security:\n  remote_resources:\n    allowed_domains: [\"https://github.com\"]\n", "allowed_domains[0]", nil},
	{"prefix no slash", "allowed_remote_resources:\n  - https://github.com/o\n", "c.yaml:2: allowed_remote_resources[0]", ref.ErrPrefix},
	{"prefix http", "allowed_remote_resources:\n  - http://github.com/o/\n", "c.yaml:2: allowed_remote_resources[0]", ref.ErrScheme},
	{"trusted prefix", "security:\n  remote_resources:\n    trusted_harness_prefixes: [https://u@github.com/]\n", "trusted_harness_prefixes", ref.ErrUserinfo},
	{"duration", "security: {remote_resources: {timeout: 30}}\n", "security.remote_resources.timeout", yamlx.ErrValue},
	{"negative duration", "security: {remote_resources: {timeout: -1s}}\n", "security.remote_resources.timeout", yamlx.ErrValue},
	{"zero size", "security: {remote_resources: {max_size_bytes: 0}}\n", "max_size_bytes", yamlx.ErrValue},
	{"negative depth", "security: {remote_resources: {max_depth: -1}}\n", "max_depth", yamlx.ErrValue},
	{"text resources", "security: {remote_resources: {max_resources: many}}\n", "max_resources", yamlx.ErrType},
	{"forge type", "forges: [{host: x.example, type: gitea}]\n", "forges[0].type", yamlx.ErrValue},
	{"forge no type", "forges: [{host: x.example}]\n", "forges[0].type", yamlx.ErrValue},
	{"forge no host", "forges: [{type: github}]\n", "forges[0].host", yamlx.ErrValue},
	{"forge host path", "forges: [{host: x.example/a, type: github}]\n", "forges[0].host", yamlx.ErrValue},
	{"forge api http", "forges: [{host: x.example, type: github, api_url: \"http://x.example/api\"}]\n", "forges[0].api_url", ref.ErrScheme},
	{"forge token env", "forges: [{host: x.example, type: github, token_env: \"1X\"}]\n", "forges[0].token_env", yamlx.ErrValue},
	{"forge dup", "forges: [{host: x.example, type: github}, {host: X.example, type: gitlab}]\n", "forges[1].host", yamlx.ErrDuplicate},
	{"remote context injection off", "security: {scan: {remote: {context_injection: false}}}\n", "security.scan.remote.context_injection", yamlx.ErrValue},
	{"threshold range", "security: {scan: {local: {ml_threshold: 1.5}}}\n", "ml_threshold", yamlx.ErrValue},
	{"llm guard http remote", "security: {llm_guard: {url: \"http://guard.example/x\"}}\n", "security.llm_guard.url", nil},
	{"version", "version: \"2\"\n", "c.yaml:1: version", yamlx.ErrValue},
	{"backend", "sandbox: {backend: vm}\n", "sandbox.backend", yamlx.ErrValue},
	{"agents scalar", "agents: harness/a.yaml\n", "agents", yamlx.ErrType},
	{"agent source http", "agents: [{source: \"http://x/a.yaml\"}]\n", "agents[0].source", ref.ErrScheme},
	{"runtime name", "runtime: Claude!\n", `c.yaml:1: runtime: invalid value: "Claude!" is not a runtime name`, yamlx.ErrValue},
	{"llm guard token env", "security: {llm_guard: {token_env: \"A-B\"}}\n", `c.yaml:1: security.llm_guard.token_env: invalid value: "A-B" is not an environment variable name`, yamlx.ErrValue},
	{"forge api query", "forges: [{host: x.example, type: github, api_url: \"https://x.example/api?v=3\"}]\n", "c.yaml:1: forges[0].api_url: invalid value: an API URL has no query", yamlx.ErrValue},
	{"agent no source", "agents:\n  - {name: a}\n", "c.yaml:2: agents[0].source: invalid value: required", yamlx.ErrValue},
	{"kubernetes unknown key, value checked first", "sandbox:\n  kubernetes:\n    nodes: [a]\n", "c.yaml:3: sandbox.kubernetes.nodes: wrong type", yamlx.ErrType},
	{"limits unknown key", "sandbox:\n  limits: {disk: 1Gi}\n", "c.yaml:2: sandbox.limits.disk: unknown field: (known: memory, pids, cpus, tmp_size, workspace_size, output_size, output_files, snapshot_size)", yamlx.ErrUnknownField},
	{"syntax", "security: [\n", "c.yaml", yamlx.ErrSyntax},
	{"duplicate", "version: \"1\"\nversion: \"1\"\n", "c.yaml:2: version", yamlx.ErrDuplicate},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range badConfigs {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse("c.yaml", []byte(tc.in))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %q, want it to contain %q", err, tc.want)
			}
			if tc.err != nil && !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			var ye *yamlx.Error
			if !errors.As(err, &ye) || ye.File != "c.yaml" {
				t.Fatalf("not a *yamlx.Error naming the file: %T", err)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(full))
	for _, tc := range badConfigs {
		f.Add([]byte(tc.in))
	}
	for _, dir := range corpustest.Seeds(f) {
		data, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, notices, err := Parse("f.yaml", data)
		if err != nil {
			var ye *yamlx.Error
			if !errors.As(err, &ye) || c != nil || notices != nil {
				t.Fatalf("error %T %v with result %v", err, err, c)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if c.Security.FailMode != FailClosed && c.Security.FailMode != FailOpen {
			t.Fatalf("fail mode %q", c.Security.FailMode)
		}
		rr := c.Security.RemoteResources
		if rr.Timeout <= 0 || rr.MaxDepth <= 0 || rr.MaxResources <= 0 || rr.MaxSizeBytes <= 0 {
			t.Fatalf("non-positive limit %+v", rr)
		}
		for _, p := range append(slices.Clone(c.AllowedRemoteResources), rr.TrustedHarnessPrefixes...) {
			if cp, err := ref.CanonicalPrefix(p); err != nil || cp != p {
				t.Fatalf("prefix %q not canonical", p)
			}
		}
		for _, f := range c.Forges {
			if f.Type != "github" && f.Type != "gitlab" || !strings.HasPrefix(f.APIURL, "https://") {
				t.Fatalf("forge %+v", f)
			}
		}
	})
}

func TestNameRules(t *testing.T) {
	for _, c := range []struct {
		s         string
		name, env bool
	}{
		{"", false, false},
		{"claude", true, true},
		{"claude-2_x", true, false},
		{"Claude", false, true},
		{"GH_TOKEN", false, true},
		{"A1", false, true},
		{"1a", true, false}, // an env name does not start with a digit
		{"a.b", false, false},
		{"é", false, false},
		{strings.Repeat("a", 4096), true, true}, // no length bound
	} {
		if got := validName(c.s); got != c.name {
			t.Errorf("validName(%.20q) = %v", c.s, got)
		}
		if got := ValidEnvName(c.s); got != c.env {
			t.Errorf("ValidEnvName(%.20q) = %v", c.s, got)
		}
	}
}
