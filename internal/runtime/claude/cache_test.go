package claude

import (
	"testing"

	"github.com/fullsend-ai/fullsend/internal/runtime"
)

// TestResultCacheCounts: the result line's prompt-cache counts reach the
// Outcome beside the input total that includes them, and the total usage
// and result events.
func TestResultCacheCounts(t *testing.T) {
	var evs []runtime.Event
	p := NewParser(func(e runtime.Event) { evs = append(evs, e) })
	p.Line([]byte(`{"type":"result","subtype":"success","is_error":false,"num_turns":2,"total_cost_usd":0.01,` +
		`"usage":{"input_tokens":40,"cache_creation_input_tokens":300,"cache_read_input_tokens":1200,"output_tokens":9}}`))
	out, ok := p.Outcome()
	if !ok {
		t.Fatal("no outcome")
	}
	if out.InputTokens != 1540 || out.CacheReadInputTokens != 1200 || out.CacheCreationInputTokens != 300 || out.OutputTokens != 9 {
		t.Fatalf("outcome %+v", out)
	}
	seen := 0
	for _, e := range evs {
		if e.Kind == runtime.EventResult || (e.Kind == runtime.EventUsage && e.Name == "total") {
			seen++
			if e.CacheReadInputTokens != 1200 || e.CacheCreationInputTokens != 300 || e.InputTokens != 1540 {
				t.Errorf("event %+v", e)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("%d total usage / result events: %+v", seen, evs)
	}
}
