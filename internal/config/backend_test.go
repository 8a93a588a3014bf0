package config

import (
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// TestSandboxBackend: sandbox.backend accepts exactly sandbox.BackendNames
// and names them when it refuses one.
func TestSandboxBackend(t *testing.T) {
	t.Parallel()
	for _, name := range sandbox.BackendNames() {
		c, _, err := Parse("config.yaml", []byte("version: 1\nsandbox:\n  backend: "+name+"\n"))
		if err != nil || c.Sandbox.Backend != name {
			t.Errorf("backend %s: %v", name, err)
		}
	}
	_, _, err := Parse("config.yaml", []byte("version: 1\nsandbox:\n  backend: podman\n"))
	if err == nil || err.Error() != `config.yaml:3: sandbox.backend: invalid value: "podman" is not a backend (local, docker, kubernetes)` {
		t.Errorf("podman: %v", err)
	}
	if c, _, err := Parse("config.yaml", []byte("version: 1\n")); err != nil || c.Sandbox.Backend != sandbox.DefaultBackend {
		t.Errorf("default backend: %v %v", c, err)
	}
}
