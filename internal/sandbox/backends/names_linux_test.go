package backends_test

import (
	"slices"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/backends"
	"github.com/fullsend-ai/fullsend/internal/sandbox/docker"
	"github.com/fullsend-ai/fullsend/internal/sandbox/kubernetes"
	"github.com/fullsend-ai/fullsend/internal/sandbox/local"
)

// TestNamesAreTheOneList: package backends opens exactly
// sandbox.BackendNames, and each backend package names itself the same.
func TestNamesAreTheOneList(t *testing.T) {
	t.Parallel()
	if got, want := backends.Names(), slices.Sorted(slices.Values(sandbox.BackendNames())); !slices.Equal(got, want) {
		t.Fatalf("backends.Names() = %v, sandbox.BackendNames() = %v", got, want)
	}
	for pkg, name := range map[string]string{sandbox.BackendLocal: local.Name, sandbox.BackendDocker: docker.Name, sandbox.BackendKubernetes: kubernetes.Name} {
		if pkg != name {
			t.Errorf("backend package names itself %q, the list says %q", name, pkg)
		}
	}
}
