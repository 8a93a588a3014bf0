package sandbox_test

import (
	"slices"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

func TestBackendNames(t *testing.T) {
	t.Parallel()
	if got := sandbox.BackendNames(); !slices.Equal(got, []string{"local", "docker", "kubernetes"}) || got[0] != sandbox.DefaultBackend {
		t.Fatalf("BackendNames() = %v", got)
	}
	for _, n := range sandbox.BackendNames() {
		if !sandbox.IsBackend(n) {
			t.Errorf("IsBackend(%q) = false", n)
		}
	}
	for _, n := range []string{"", "Local", "docker ", "podman", "k8s"} {
		if sandbox.IsBackend(n) {
			t.Errorf("IsBackend(%q) = true", n)
		}
	}
	if got := sandbox.BackendChoices("or"); got != "local, docker or kubernetes" {
		t.Errorf("BackendChoices = %q", got)
	}
}
