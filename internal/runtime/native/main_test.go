package native

import (
	"os"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/reexec"
)

// TestMain: the local sandbox of local_test.go runs this test binary in its
// roles (reexec).
func TestMain(m *testing.M) {
	reexec.Main()
	os.Exit(m.Run())
}
