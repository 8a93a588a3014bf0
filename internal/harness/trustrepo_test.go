package harness

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/ref"
)

// TestTrustRepoSettings: security.trust_repo_settings is a local opt-in:
// read from a local harness, refused in remote content, and a child cannot
// turn on what its base turned off.
func TestTrustRepoSettings(t *testing.T) {
	d := tree(t, baseTree())
	p := write(t, d, "harness/h.yaml", "agent: agents/a.md\nsecurity:\n  trust_repo_settings: true\n")
	h, err := Load(p, LoadOptions{})
	if err != nil || h.Security.TrustRepoSettings == nil || !*h.Security.TrustRepoSettings {
		t.Fatalf("local opt-in: %+v %v", h, err)
	}
	write(t, d, "harness/b.yaml", "agent: agents/a.md\nsecurity:\n  trust_repo_settings: false\n")
	p = write(t, d, "harness/c.yaml", "base: harness/b.yaml\nsecurity:\n  trust_repo_settings: true\n")
	h, err = Load(p, LoadOptions{})
	if err != nil || h.Security.TrustRepoSettings == nil || *h.Security.TrustRepoSettings || !strings.Contains(strings.Join(h.Notices, "\n"), "trust_repo_settings: true ignored") {
		t.Errorf("child weakening its base: %+v %v", h, err)
	}

	cfg := orgCfg(t, "https://github.com/o/")
	url := "https://github.com/o/lib/harness/base.yaml"
	b := []byte("agent: agents/a.md#sha256=" + pin + "\nsecurity:\n  trust_repo_settings: true\n")
	child := "allowed_remote_resources: [https://github.com/o/lib/]\nbase: " + url + "#sha256=" + string(ref.SHA256(b)) + "\n"
	p = write(t, d, "harness/r.yaml", child)
	_, err = Load(p, LoadOptions{Config: cfg, FetchBase: func(context.Context, ref.Ref) ([]byte, error) { return b, nil }})
	if !errors.Is(err, ErrRemoteTrustRepo) || !strings.Contains(err.Error(), url) {
		t.Errorf("remote base trusting the repo: %v", err)
	}
	if _, err := LoadRemote(context.Background(), remotePin(t, url, b), b, LoadOptions{Config: cfg}); !errors.Is(err, ErrRemoteTrustRepo) {
		t.Errorf("LoadRemote: %v", err)
	}
}
