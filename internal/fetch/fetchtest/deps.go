package fetchtest

import (
	"os/exec"
	"strings"
	"testing"
)

// CheckDeps is the dependency-diet test of the verifying core (fetch, cas,
// audit): it fails t for each package outside the standard library that
// pkg (an import path) depends on, other than pkg itself and the allowed
// ones. An allowed entry ending in "/" admits every path below it. It skips
// the test when there is no go tool in PATH.
func CheckDeps(t testing.TB, pkg string, allowed ...string) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not found")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	name := strings.TrimPrefix(pkg, "github.com/fullsend-ai/fullsend/")
	for _, p := range strings.Fields(string(out)) {
		if p != pkg && !admitted(p, allowed) {
			t.Errorf("%s depends on %s", name, p)
		}
	}
}

func admitted(p string, allowed []string) bool {
	for _, a := range allowed {
		if p == a || strings.HasSuffix(a, "/") && strings.HasPrefix(p, a) {
			return true
		}
	}
	return false
}
