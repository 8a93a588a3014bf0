package native

import (
	"os"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/reexec"
)

// TestMain: the local sandbox of local_test.go runs this test binary in its
// roles (reexec).
//
// The run key of the transcripts' MAC chain lives in a private state
// directory, never the user's.
func TestMain(m *testing.M) {
	reexec.Main()
	state, err := os.MkdirTemp("", "fullsend-native-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", state)
	code := m.Run()
	os.RemoveAll(state)
	os.Exit(code)
}
