package sandboxtest

import (
	"strings"
	"testing"
)

// TestUnavailableUnknownBackend: a backend nobody registered is
// unavailable, with the reason sandbox.Open gives, every time it is asked.
func TestUnavailableUnknownBackend(t *testing.T) {
	err := Unavailable("no-such-backend")
	if err == nil || !strings.Contains(err.Error(), "no-such-backend") {
		t.Fatalf("Unavailable = %v, want an error naming the backend", err)
	}
	if again := Unavailable("no-such-backend"); again != err {
		t.Fatalf("second answer %v, want the cached %v", again, err)
	}
}
