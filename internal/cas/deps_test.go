package cas

import (
	"testing"

	"github.com/fullsend-ai/fullsend/internal/fetch/fetchtest"
)

// TestDependencies keeps the cache on the standard library plus
// internal/ref and internal/limit (STYLE: the verifying core has no
// third-party code).
func TestDependencies(t *testing.T) {
	fetchtest.CheckDeps(t, "github.com/fullsend-ai/fullsend/internal/cas",
		"github.com/fullsend-ai/fullsend/internal/limit",
		"github.com/fullsend-ai/fullsend/internal/ref")
}
