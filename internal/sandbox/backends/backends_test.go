package backends_test

import (
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/backends"
)

func TestNames(t *testing.T) {
	if got := strings.Join(backends.Names(), ","); got != "docker,kubernetes,local" {
		t.Fatalf("Names() = %s", got)
	}
	if !slices.IsSorted(backends.Names()) {
		t.Fatal("Names() not sorted")
	}
}

func TestOpenUnknown(t *testing.T) {
	_, err := backends.Open("nope", sandbox.Options{})
	if !errors.Is(err, sandbox.ErrUnknownBackend) || err.Error() != `sandbox backend "nope": unknown sandbox backend (known: [docker kubernetes local])` {
		t.Fatalf("Open(nope) = %v", err)
	}
}

// TestOpenEach: every listed name opens its own backend, or fails for a
// reason of this machine (no engine, no cluster), never as unknown.
func TestOpenEach(t *testing.T) {
	for _, name := range backends.Names() {
		b, err := backends.Open(name, sandbox.Options{})
		if err != nil {
			if errors.Is(err, sandbox.ErrUnknownBackend) || !strings.Contains(err.Error(), name+" sandbox") {
				t.Errorf("Open(%s) = %v", name, err)
			}
			continue
		}
		if b.Name() != name {
			t.Errorf("Open(%s) opened %s", name, b.Name())
		}
	}
	if runtime.GOOS == "linux" {
		if _, err := backends.Open(backends.Local, sandbox.Options{}); err != nil {
			t.Errorf("Open(local) = %v: local.New only fails when it cannot find its own binary", err)
		}
	}
}
