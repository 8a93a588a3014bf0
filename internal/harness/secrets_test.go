package harness

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/config"
)

func secretsCfg(t *testing.T) *config.Config {
	c := orgCfg(t, "https://github.com/o/")
	c.Secrets = []config.Secret{{Name: "GH_TOKEN", FromEnv: "GH_TOKEN", Hosts: []string{"api.github.com"}}}
	return c
}

// TestSecretsNamesDeclared: a harness asks for declared secrets by name;
// an undeclared one, in the harness or a forge overlay, fails with
// file:line; a base's names add to the child's.
func TestSecretsNamesDeclared(t *testing.T) {
	d := tree(t, baseTree())
	cfg := secretsCfg(t)
	write(t, d, "harness/base.yaml", "agent: agents/a.md\nsecrets: [GH_TOKEN]\n")
	p := write(t, d, "harness/h.yaml", "base: harness/base.yaml\nsecrets: [GH_TOKEN]\n")
	h, err := Load(p, LoadOptions{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Validate(cfg); err != nil || strings.Join(h.Secrets, ",") != "GH_TOKEN" {
		t.Fatal(err, h.Secrets)
	}
	for body, want := range map[string]string{
		"agent: agents/a.md\nsecrets:\n  - GH_TOKEN\n  - NPM_TOKEN\n":     "h.yaml:4: secrets: secret not declared in config.yaml secrets: NPM_TOKEN",
		"agent: agents/a.md\nforge:\n  github:\n    secrets: [AWS_KEY]\n": "h.yaml:4: forge.github.secrets: secret not declared in config.yaml secrets: AWS_KEY",
		"agent: agents/a.md\nsecrets: [\"1BAD\"]\n":                       "h.yaml:2: secrets[0]",
	} {
		p := write(t, d, "harness/h.yaml", body)
		h, err := Load(p, LoadOptions{Config: cfg})
		if err == nil {
			err = h.Validate(cfg)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
	// Without a config (no secrets declared) any name is refused.
	p = write(t, d, "harness/h.yaml", "agent: agents/a.md\nsecrets: [GH_TOKEN]\n")
	h, err = Load(p, LoadOptions{})
	if err == nil {
		err = h.Validate(nil)
	}
	if !errors.Is(err, config.ErrSecretNotDeclared) {
		t.Fatal(err)
	}
}

// TestLoadRemoteRejectsSecrets: remote content may not ask for secrets.
func TestLoadRemoteRejectsSecrets(t *testing.T) {
	cfg := secretsCfg(t)
	for _, tail := range []string{"secrets: [GH_TOKEN]\n", "forge:\n  github:\n    secrets: [GH_TOKEN]\n"} {
		body := []byte("agent: ../agents/a.md#sha256=" + pin + "\nallowed_remote_resources: [https://github.com/o/lib/]\n" + tail)
		_, err := LoadRemote(context.Background(), remotePin(t, remoteURL, body), body, LoadOptions{Config: cfg})
		if !errors.Is(err, ErrRemoteSecrets) {
			t.Fatalf("%q: err = %v", tail, err)
		}
	}
}
