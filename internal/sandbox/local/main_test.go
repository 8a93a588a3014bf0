//go:build linux

package local_test

import (
	"os"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox/sandboxtest"
)

// TestMain: the sandboxes run this test binary in their roles, and the
// conformance suite's probes in helper mode.
func TestMain(m *testing.M) {
	sandboxtest.Reexec()
	os.Exit(m.Run())
}
