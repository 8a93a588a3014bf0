package audit

import (
	"testing"

	"github.com/fullsend-ai/fullsend/internal/fetch/fetchtest"
)

// TestDependencies keeps the audit log on the standard library only.
func TestDependencies(t *testing.T) {
	fetchtest.CheckDeps(t, "github.com/fullsend-ai/fullsend/internal/audit")
}
