package kubernetes_test

import (
	"os"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox/sandboxtest"
)

// TestMain: the conformance and exec tests stand a local sandbox in for the
// Pod, which runs this test binary in its roles, and the suite's probes in
// helper mode.
func TestMain(m *testing.M) {
	sandboxtest.Reexec()
	os.Exit(m.Run())
}
