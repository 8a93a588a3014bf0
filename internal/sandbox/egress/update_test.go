package egress

import (
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// TestUpdateSession: a session without a proxy can only stay without
// network; a bad allowlist is refused before anything changes.
func TestUpdateSession(t *testing.T) {
	if err := UpdateSession(nil, "local sandbox s1", sandbox.Network{}, nil); err != nil {
		t.Fatalf("none on a session without network: %v", err)
	}
	err := UpdateSession(nil, "local sandbox s1", sandbox.Network{Allow: []string{"example.com"}}, nil)
	if err == nil || !strings.Contains(err.Error(), "local sandbox s1: update network: session was provisioned without network access") {
		t.Fatalf("allow on a session without network: %v", err)
	}
	// The allowlist is checked first: the error is about the entry.
	err = UpdateSession(nil, "local sandbox s1", sandbox.Network{Allow: []string{"http://bad host"}}, nil)
	if err == nil || strings.Contains(err.Error(), "provisioned without network") {
		t.Fatalf("a malformed allowlist entry: %v", err)
	}
}
