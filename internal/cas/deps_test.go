package cas

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the cache on the standard library plus
// internal/ref (STYLE: the verifying core has no third-party code).
func TestDependencies(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not found")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{
		"github.com/fullsend-ai/fullsend/internal/cas": true,
		"github.com/fullsend-ai/fullsend/internal/ref": true,
	}
	for _, p := range strings.Fields(string(out)) {
		if !allowed[p] {
			t.Errorf("internal/cas depends on %s", p)
		}
	}
}
