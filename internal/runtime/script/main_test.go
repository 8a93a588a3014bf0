package script_test

import (
	"os"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/reexec"
)

// TestMain: the local sandbox of sandbox_test.go runs this test binary in
// its roles (reexec).
func TestMain(m *testing.M) {
	reexec.Main()
	os.Exit(m.Run())
}
