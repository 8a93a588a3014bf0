package native

import (
	"context"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	"github.com/fullsend-ai/fullsend/internal/spantest"
	"github.com/fullsend-ai/fullsend/internal/trace"
)

// TestToolSpansVerdicts: execute_tool spans carry the outcome and the hook
// verdicts: a PreToolUse block is "blocked", a PostToolUse secret verdict
// is an event on an otherwise completed call. Not parallel: it installs
// the global tracer provider.
func TestToolSpansVerdicts(t *testing.T) {
	exp := spantest.Record(t)
	h := newHarnessEnv(t, model.APIOpenAI,
		modeltest.Call("g1", "bash", map[string]any{"command": "curl http://169.254.169.254/latest/meta-data/"}),
		modeltest.Call("p1", "bash", map[string]any{"command": "echo aws_key=AKIAABCDEFGHIJKLMNOP"}),
		modeltest.Say("ok"),
	)
	ctx, agent := trace.Start(context.Background(), "invoke_agent a")
	if _, err := h.run(ctx, h.input(nil)); err != nil {
		t.Fatal(err)
	}
	agent.End()
	got := map[string]string{} // call id -> outcome + verdict events
	for _, s := range exp.GetSpans() {
		if s.Name != "execute_tool bash" {
			continue
		}
		var id, desc string
		for _, kv := range s.Attributes {
			switch kv.Key {
			case "gen_ai.tool.call.id":
				id = kv.Value.AsString()
			case "fullsend.tool.outcome":
				desc = kv.Value.AsString()
			}
		}
		for _, ev := range s.Events {
			for _, kv := range ev.Attributes {
				if kv.Key == "fullsend.hook.event" || kv.Key == "fullsend.hook.rule" {
					desc += " " + kv.Value.AsString()
				}
			}
		}
		got[id] = desc
	}
	if g := got["g1"]; !strings.HasPrefix(g, "blocked PreToolUse ") {
		t.Errorf("blocked call: %q", g)
	}
	if g := got["p1"]; !strings.HasPrefix(g, "ok PostToolUse secret.") {
		t.Errorf("withheld output: %q", g)
	}
}
