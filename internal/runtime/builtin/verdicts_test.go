package builtin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/builtin"
)

// TestVerdictContractCoversEveryRuntime: every runtime that ships is held
// to the verdict contract — its package's tests run
// runtimetest.CheckVerdicts (a block, a denial and a canary trip, each an
// EventVerdict) — unless it declares runtime.Unguarded, with its reason. A
// runtime added without either fails here.
func TestVerdictContractCoversEveryRuntime(t *testing.T) {
	for _, name := range builtin.Names() {
		rt, err := builtin.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if u, ok := rt.(runtime.Unguarded); ok {
			if strings.TrimSpace(u.Unguarded()) == "" {
				t.Errorf("runtime %s: Unguarded gives no reason", name)
			}
			continue
		}
		tests, err := filepath.Glob(filepath.Join("..", name, "*_test.go"))
		if err != nil || len(tests) == 0 {
			t.Errorf("runtime %s: no tests in internal/runtime/%s (%v)", name, name, err)
			continue
		}
		found := false
		for _, f := range tests {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), "runtimetest.CheckVerdicts(") {
				found = true
			}
		}
		if !found {
			t.Errorf("runtime %s: its tests never run runtimetest.CheckVerdicts, and it does not declare runtime.Unguarded", name)
		}
	}
}
