package local

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/local/guest"
)

func TestUnavailableNamesTheSetting(t *testing.T) {
	err := unavailable(syscall.EPERM)
	if !errors.Is(err, sandbox.ErrUnavailable) {
		t.Errorf("not ErrUnavailable: %v", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "user.max_user_namespaces") && !strings.Contains(msg, "CONFIG_USER_NS") {
		t.Errorf("guest.Message names no setting: %s", msg)
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("multi-line: %q", msg)
	}
}

func TestSeccompPolicyAssembles(t *testing.T) {
	f := guest.SeccompFilter()
	if _, err := f.Policy.Assemble(); err != nil {
		t.Fatal(err)
	}
}
