package hooks

import (
	"sort"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/harness"
)

// The harness parser and this package must agree on security.sandbox_hooks.
func TestHarnessKeysInSync(t *testing.T) {
	var keys []string
	for k := range harnessGroups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	known := append([]string(nil), harness.KnownSandboxHooks...)
	sort.Strings(known)
	if strings.Join(keys, ",") != strings.Join(known, ",") {
		t.Fatalf("hooks maps %v, harness accepts %v", keys, known)
	}
}
