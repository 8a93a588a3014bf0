package sandbox_test

import (
	"errors"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// TestCheckEnvName: a name is [A-Za-z_][A-Za-z0-9_]*. "=" above all is
// refused: "A=B" as a name would set A to "B=<value>" in the environment
// block, and "=X" names nothing a shell can read.
func TestCheckEnvName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"PATH", true},
		{"_", true},
		{"a1_B2", true},
		{"HTTPS_PROXY", true},
		{"", false},
		{"=", false},
		{"A=B", false},
		{"=A", false},
		{"A=", false},
		{"1A", false},
		{"A-B", false},
		{"A B", false},
		{"A.B", false},
		{"A\x00", false},
		{"A\n", false},
		{"É", false},
	} {
		err := sandbox.CheckEnvName(c.name)
		if c.ok && err != nil {
			t.Errorf("CheckEnvName(%q) = %v, want nil", c.name, err)
		}
		if !c.ok && !errors.Is(err, sandbox.ErrInvalidSpec) {
			t.Errorf("CheckEnvName(%q) = %v, want ErrInvalidSpec", c.name, err)
		}
	}
}
