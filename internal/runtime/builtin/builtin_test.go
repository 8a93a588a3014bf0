package builtin

import (
	"errors"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/runtime"
)

func TestGet(t *testing.T) {
	if got := strings.Join(Names(), ","); got != "claude,native,script" {
		t.Fatalf("Names() = %s", got)
	}
	for _, name := range Names() {
		r, err := Get(name)
		if err != nil || r.Name() != name || r.ConfigDir() != runtime.ClaudeConfigDir {
			t.Fatalf("Get(%s) = %v, %v", name, r, err)
		}
	}
	// Each call builds a fresh runtime: runs never share one.
	a, _ := Get("native")
	b, _ := Get("native")
	if a == b {
		t.Error("Get returned the same native runtime twice")
	}
	c, _ := Get("claude")
	if _, ok := c.(runtime.HooksBootstrap); !ok {
		t.Error("claude runtime does not implement HooksBootstrap")
	}
	if _, ok := c.(runtime.TranscriptHandler); !ok {
		t.Error("claude runtime does not implement TranscriptHandler")
	}
	_, err := Get("nope")
	var ue *runtime.UnknownError
	if !errors.As(err, &ue) || err.Error() != `runtime "nope": not registered (known: claude, native, script)` {
		t.Fatalf("unknown runtime error: %v", err)
	}
}
