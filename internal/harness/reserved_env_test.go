package harness

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// The FULLSEND_ prefix is fullsend's: no harness, local or remote, may set
// such a name (a remote base setting FULLSEND_CANARY_TOKEN would silence
// the canary hook), and the org's allowed_env_names cannot lift that.
func TestReservedEnvPrefix(t *testing.T) {
	d := tree(t, baseTree())
	allowAll := config.Default()
	allowAll.Security.AllowedEnvNames = []string{"FULLSEND_CANARY_TOKEN", "FULLSEND_OUTPUT_DIR", "FULLSEND_TOOL_ALLOWLIST"}
	for _, env := range []string{
		"sandbox: {FULLSEND_CANARY_TOKEN: x}",
		"sandbox: {FULLSEND_TOOL_ALLOWLIST: Bash}",
		"runner: {FULLSEND_OUTPUT_DIR: /tmp}",
	} {
		p := write(t, d, "harness/h.yaml", "agent: agents/a.md\nenv:\n  "+env+"\n")
		h, err := Load(p, LoadOptions{})
		if err != nil {
			t.Fatalf("%s: load: %v", env, err)
		}
		for _, cfg := range []*config.Config{config.Default(), allowAll} {
			err = h.Validate(cfg)
			if !errors.Is(err, config.ErrEnvReserved) {
				t.Fatalf("local %s: err = %v, want ErrEnvReserved", env, err)
			}
			if !strings.Contains(err.Error(), "h.yaml:3: env.") || !strings.Contains(err.Error(), "FULLSEND_ prefix") {
				t.Errorf("local %s: error does not name file:line: field and the reason: %v", env, err)
			}
		}
	}

	// A remote base that sets the canary token in env.sandbox.
	cfg := orgCfg(t, "https://github.com/o/")
	url := "https://github.com/o/lib/harness/base.yaml"
	b := []byte("agent: agents/a.md#sha256=" + pin + "\nenv:\n  sandbox:\n    FULLSEND_CANARY_TOKEN: quiet\n")
	child := "allowed_remote_resources: [https://github.com/o/lib/]\nbase: " + url + "#sha256=" + string(ref.SHA256(b)) + "\n"
	p := write(t, d, "harness/h.yaml", child)
	h, err := Load(p, LoadOptions{Config: cfg, FetchBase: func(context.Context, ref.Ref) ([]byte, error) { return b, nil }})
	if err != nil {
		t.Fatal(err)
	}
	err = h.Validate(cfg)
	if !errors.Is(err, config.ErrEnvReserved) || !strings.Contains(err.Error(), url+":4: env.sandbox.FULLSEND_CANARY_TOKEN") {
		t.Fatalf("remote base: err = %v, want ErrEnvReserved naming %s:4", err, url)
	}
	// The same file as the top-level remote harness.
	h, err = LoadRemote(context.Background(), remotePin(t, url, b), b, LoadOptions{Config: cfg})
	if err == nil {
		err = h.Validate(cfg)
	}
	if !errors.Is(err, config.ErrEnvReserved) {
		t.Fatalf("remote harness: err = %v, want ErrEnvReserved", err)
	}

	// FULLSEND_FORGE is the upstream harnesses' name: fullsend neither sets
	// nor reads it. Lower case is another name.
	p = write(t, d, "harness/h.yaml", "agent: agents/a.md\nenv:\n  sandbox: {FULLSEND_FORGE: github, fullsend_mode: x}\n")
	if h, err = Load(p, LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := h.Validate(config.Default()); err != nil {
		t.Fatalf("FULLSEND_FORGE refused: %v", err)
	}
}
