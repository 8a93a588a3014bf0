package harness

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// A remote base (or a remote top-level harness, or an overlay inside one)
// may not set env.runner at all: that environment reaches host scripts.
func TestRemoteContentMayNotSetRunnerEnv(t *testing.T) {
	d := tree(t, baseTree())
	cfg := orgCfg(t, "https://github.com/o/")
	url := "https://github.com/o/lib/harness/base.yaml"
	for _, body := range []string{
		"agent: agents/a.md#sha256=" + pin + "\nenv:\n  runner:\n    LD_PRELOAD: output/pwn.so\n",
		"agent: agents/a.md#sha256=" + pin + "\nenv:\n  runner:\n    HARMLESS: \"1\"\n",
		"agent: agents/a.md#sha256=" + pin + "\nforge:\n  github:\n    env:\n      runner:\n        BASH_ENV: output/x\n",
	} {
		b := []byte(body)
		child := "allowed_remote_resources: [https://github.com/o/lib/]\nbase: " + url + "#sha256=" + string(ref.SHA256(b)) + "\n"
		p := write(t, d, "harness/h.yaml", child)
		_, err := Load(p, LoadOptions{Config: cfg, FetchBase: func(context.Context, ref.Ref) ([]byte, error) { return b, nil }})
		if !errors.Is(err, ErrRemoteRunnerEnv) {
			t.Fatalf("remote base %q: err = %v, want ErrRemoteRunnerEnv", body, err)
		}
		if !strings.Contains(err.Error(), url+":") || !strings.Contains(err.Error(), "env.runner.") {
			t.Errorf("error does not name the file, line and field: %v", err)
		}
		// The same harness loaded as a top-level remote harness.
		r := remotePin(t, url, b)
		if _, err := LoadRemote(context.Background(), r, b, LoadOptions{Config: cfg}); !errors.Is(err, ErrRemoteRunnerEnv) {
			t.Errorf("LoadRemote %q: err = %v", body, err)
		}
	}
	// env.sandbox without ${VAR} stays allowed in remote content.
	b := []byte("agent: agents/a.md#sha256=" + pin + "\nenv:\n  sandbox:\n    MODE: fast\n")
	child := "allowed_remote_resources: [https://github.com/o/lib/]\nbase: " + url + "#sha256=" + string(ref.SHA256(b)) + "\n"
	p := write(t, d, "harness/h.yaml", child)
	h, err := Load(p, LoadOptions{Config: cfg, FetchBase: func(context.Context, ref.Ref) ([]byte, error) { return b, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if h.Env.Sandbox["MODE"] != "fast" {
		t.Fatalf("env.sandbox = %v", h.Env.Sandbox)
	}
}

func TestRefusedEnvNames(t *testing.T) {
	d := tree(t, baseTree())
	cases := []struct {
		env     string
		refused bool
	}{
		{"runner: {LD_PRELOAD: x}", true},
		{"runner: {LD_LIBRARY_PATH: x}", true},
		{"sandbox: {DYLD_INSERT_LIBRARIES: x}", true},
		{"runner: {BASH_ENV: x}", true},
		{"runner: {ENV: x}", true},
		{"runner: {BASH_FUNC_ls%%: x}", false}, // not a valid name: a parse error, checked below
		{"sandbox: {IFS: x}", true},
		{"runner: {PATH: /tmp}", true},
		{"sandbox: {PYTHONPATH: x}", true},
		{"sandbox: {PYTHONSTARTUP: x}", true},
		{"sandbox: {PERL5OPT: x}", true},
		{"sandbox: {PERLLIB: x}", true},
		{"sandbox: {RUBYOPT: x}", true},
		{"sandbox: {NODE_OPTIONS: x}", true},
		{"sandbox: {NODE_PATH: x}", true},
		{"runner: {GIT_SSH_COMMAND: x}", true},
		{"runner: {GIT_EXEC_PATH: x}", true},
		{"sandbox: {GIT_CONFIG_GLOBAL: x}", true},
		{"sandbox: {JAVA_TOOL_OPTIONS: x}", true},
		{"sandbox: {_JAVA_OPTIONS: x}", true},
		{"runner: {GCONV_PATH: x}", true},
		{"runner: {LOCPATH: x}", true},
		{"runner: {HOSTALIASES: x}", true},
		{"runner: {RES_OPTIONS: x}", true},
		{"runner: {SSL_CERT_FILE: x}", true},
		{"sandbox: {HTTPS_PROXY: x}", true},
		{"sandbox: {https_proxy: x}", true},
		{"sandbox: {NO_PROXY: x}", true},
		{"sandbox: {all_proxy: x}", true},
		{"sandbox: {GIT_AUTHOR_NAME: bot}", false},
		{"sandbox: {GIT_COMMITTER_EMAIL: bot@example.com}", false},
		{"sandbox: {REPO_FULL_NAME: o/r}", false},
		{"runner: {PUSH_TOKEN: x}", false},
		{"sandbox: {MY_PATH: x}", false},
		{"sandbox: {PATHS: x}", false},
		{"sandbox: {ENVIRONMENT: x}", false},
		{"sandbox: {PROXY_MODE: x}", false},
	}
	for _, c := range cases {
		p := write(t, d, "harness/h.yaml", "agent: agents/a.md\nenv:\n  "+c.env+"\n")
		h, err := Load(p, LoadOptions{})
		if strings.Contains(c.env, "%") {
			if err == nil {
				t.Errorf("%s: invalid name accepted", c.env)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: load: %v", c.env, err)
		}
		err = h.Validate(config.Default())
		if c.refused != errors.Is(err, config.ErrEnvRefused) {
			t.Errorf("%s: err = %v, refused want %v", c.env, err, c.refused)
		}
		if c.refused && !strings.Contains(err.Error(), "h.yaml:3: env.") {
			t.Errorf("%s: error lacks file:line: field: %v", c.env, err)
		}
	}
	// The org may allow a name, by exact name only.
	cfg := config.Default()
	cfg.Security.AllowedEnvNames = []string{"PATH"}
	p := write(t, d, "harness/h.yaml", "agent: agents/a.md\nenv: {runner: {PATH: /opt/bin}}\n")
	h, err := Load(p, LoadOptions{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Validate(cfg); err != nil {
		t.Fatalf("allowed by name: %v", err)
	}
	p = write(t, d, "harness/h.yaml", "agent: agents/a.md\nenv: {runner: {PATH_EXTRA: x, LD_PRELOAD: y}}\n")
	h, _ = Load(p, LoadOptions{Config: cfg})
	if err := h.Validate(cfg); !errors.Is(err, config.ErrEnvRefused) || !strings.Contains(err.Error(), "LD_PRELOAD") {
		t.Fatalf("allowing PATH must not allow LD_PRELOAD: %v", err)
	}
	// Names in forge overlays and in a local base are checked too.
	for _, files := range []map[string]string{
		{"harness/h.yaml": "agent: agents/a.md\nforge:\n  gitlab:\n    env:\n      sandbox:\n        NODE_OPTIONS: --require=x\n"},
		{"harness/b.yaml": "agent: agents/a.md\nenv: {runner: {BASH_ENV: x}}\n", "harness/h.yaml": "base: harness/b.yaml\n"},
	} {
		for f, body := range files {
			write(t, d, f, body)
		}
		h, err := Load(d+"/harness/h.yaml", LoadOptions{Root: d})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Validate(nil); !errors.Is(err, config.ErrEnvRefused) {
			t.Errorf("%v: err = %v", files, err)
		}
	}
}

func TestResourcesOnlyLower(t *testing.T) {
	d := tree(t, baseTree())
	cfg := config.Default()
	cfg.Path = "/org/.fullsend/config.yaml"
	cfg.Sandbox.Limits.MemoryBytes = 2 << 30

	p := write(t, d, "harness/h.yaml", "agent: agents/a.md\nresources:\n  memory: 1Gi\n  pids: 100\n  cpus: 0.5\n  tmp_size: 64Mi\n  workspace_size: 1G\n  output_size: 1MiB\n  output_files: 500\n  snapshot_size: 512MiB\n")
	h, err := Load(p, LoadOptions{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	want := config.Limits{MemoryBytes: 1 << 30, Pids: 100, CPUs: 0.5, TmpBytes: 64 << 20, WorkspaceBytes: 1e9, OutputBytes: 1 << 20, OutputFiles: 500, SnapshotBytes: 512 << 20}
	if h.Resources != want {
		t.Fatalf("resources = %+v, want %+v", h.Resources, want)
	}
	if got := cfg.Sandbox.Limits.Lower(h.Resources); got != want {
		t.Fatalf("effective = %+v", got)
	}

	for _, c := range []struct{ body, field, org string }{
		{"resources:\n  memory: 3Gi\n", "resources.memory", "sandbox.limits.memory = 2GiB (/org/.fullsend/config.yaml)"},
		{"resources:\n  pids: 5000\n", "resources.pids", "sandbox.limits.pids = 1024"},
		{"resources:\n  cpus: 4\n", "resources.cpus", "sandbox.limits.cpus = 2"},
		{"resources:\n  tmp_size: 2Gi\n", "resources.tmp_size", "sandbox.limits.tmp_size = 1GiB"},
		{"resources:\n  workspace_size: 11Gi\n", "resources.workspace_size", "sandbox.limits.workspace_size = 10GiB"},
		{"resources:\n  output_size: 65Mi\n", "resources.output_size", "sandbox.limits.output_size = 64MiB"},
		{"resources:\n  output_files: 10001\n", "resources.output_files", "sandbox.limits.output_files = 10000"},
		{"resources:\n  snapshot_size: 2Gi\n", "resources.snapshot_size", "sandbox.limits.snapshot_size = 1GiB"},
		{"forge:\n  github:\n    resources:\n      memory: 8Gi\n", "forge.github.resources.memory", "sandbox.limits.memory = 2GiB"},
	} {
		p := write(t, d, "harness/h.yaml", "agent: agents/a.md\n"+c.body)
		h, err := Load(p, LoadOptions{Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		err = h.Validate(cfg)
		if err == nil || !strings.Contains(err.Error(), "h.yaml:") || !strings.Contains(err.Error(), ": "+c.field+": ") || !strings.Contains(err.Error(), c.org) {
			t.Errorf("%q: err = %v; want file:line, %s and %q", c.body, err, c.field, c.org)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("error is not one line: %q", err)
		}
	}
	// Bad values and unknown keys are parse errors with a line.
	for _, body := range []string{"resources: {memory: lots}\n", "resources: {pids: 0}\n", "resources: {cpus: -1}\n", "resources: {disk: 1Gi}\n", "resources: {memory: 1k}\n"} {
		p := write(t, d, "harness/h.yaml", "agent: agents/a.md\n"+body)
		if _, err := Load(p, LoadOptions{Config: cfg}); err == nil || !strings.Contains(err.Error(), "h.yaml:2: resources.") {
			t.Errorf("%q: err = %v", body, err)
		}
	}
	// Composition keeps the lower value: a child cannot raise its base.
	write(t, d, "harness/b.yaml", "agent: agents/a.md\nresources: {memory: 512Mi, pids: 64}\n")
	p = write(t, d, "harness/h.yaml", "base: harness/b.yaml\nresources: {memory: 1Gi, cpus: 1}\n")
	h, err = Load(p, LoadOptions{Root: d, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if want := (config.Limits{MemoryBytes: 512 << 20, Pids: 64, CPUs: 1}); h.Resources != want {
		t.Fatalf("merged resources = %+v, want %+v", h.Resources, want)
	}
}

// A local base is opened through the fullsend dir: a base that is a
// symlink leading out of it is refused, not read.
func TestLocalBaseSymlinkOutRefused(t *testing.T) {
	d := tree(t, baseTree())
	outside := write(t, t.TempDir(), "evil.yaml", "agent: agents/a.md\nenv: {sandbox: {X: \"1\"}}\n")
	if err := os.Symlink(outside, filepath.Join(d, "harness", "b.yaml")); err != nil {
		t.Fatal(err)
	}
	p := write(t, d, "harness/h.yaml", "base: harness/b.yaml\n")
	_, err := Load(p, LoadOptions{Root: d})
	if !errors.Is(err, ErrEscapes) {
		t.Fatalf("err = %v, want ErrEscapes", err)
	}
}
