package fetch_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies: the fetch client depends on the standard library and
// on fullsend's pure rule packages only.
func TestDependencies(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not found")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}",
		"github.com/fullsend-ai/fullsend/internal/fetch").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := map[string]bool{
		"github.com/fullsend-ai/fullsend/internal/fetch":    true,
		"github.com/fullsend-ai/fullsend/internal/netguard": true,
		"github.com/fullsend-ai/fullsend/internal/ref":      true,
	}
	for _, p := range strings.Fields(string(out)) {
		if !allowed[p] && !strings.HasPrefix(p, "vendor/golang.org/x/") {
			t.Errorf("fetch depends on %s", p)
		}
	}
}
