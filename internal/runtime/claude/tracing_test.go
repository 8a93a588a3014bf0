package claude

import (
	"context"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/spantest"
	"github.com/fullsend-ai/fullsend/internal/trace"
)

// TestEventSpans: the Claude Code stream becomes chat and execute_tool
// spans under the invoke_agent span: outcomes ok / error / blocked (a hook
// verdict, also an event), an unanswered call ended as unfinished, and
// every event still reaches the run. Not parallel: it installs the global
// tracer provider.
func TestEventSpans(t *testing.T) {
	exp := spantest.Record(t)

	ctx, agent := trace.Start(context.Background(), "invoke_agent a")
	var passed int
	emit, end := traceEvents(ctx, func(runtime.Event) { passed++ })
	for _, e := range []runtime.Event{
		{Kind: runtime.EventTurn, Turn: 1, Name: "claude-test"},
		{Kind: runtime.EventToolCall, Name: "Bash", ID: "t1"},
		{Kind: runtime.EventToolCall, Name: "Read", ID: "t2"},
		{Kind: runtime.EventToolCall, Name: "Bash", ID: "t3"},
		{Kind: runtime.EventToolCall, Name: "Write", ID: "t4"},
		{Kind: runtime.EventToolResult, Name: "Bash", ID: "t1"},
		{Kind: runtime.EventToolResult, Name: "Read", ID: "t2", IsError: true},
		{Kind: runtime.EventVerdict, Name: "PreToolUse", ID: "t3", Rule: "bash.curl-pipe-shell", IsError: true},
		{Kind: runtime.EventToolResult, Name: "Bash", ID: "t3", IsError: true},
		{Kind: runtime.EventTurn, Turn: 2, Name: "claude-test"},
	} {
		emit(e)
	}
	end()
	agent.End()
	if passed != 10 {
		t.Errorf("%d events passed on, want 10", passed)
	}
	outcome := map[string]string{}
	chats := 0
	for _, s := range exp.GetSpans() {
		if s.Name == "invoke_agent a" {
			continue
		}
		if s.Parent.SpanID() != agent.SpanContext().SpanID() {
			t.Errorf("span %q not under invoke_agent", s.Name)
		}
		if s.Name == "chat claude-test" {
			chats++
			continue
		}
		for _, kv := range s.Attributes {
			if kv.Key == "fullsend.tool.outcome" {
				id := ""
				for _, kv2 := range s.Attributes {
					if kv2.Key == "gen_ai.tool.call.id" {
						id = kv2.Value.AsString()
					}
				}
				outcome[id] = kv.Value.AsString()
			}
		}
		if len(s.Events) > 0 && (s.Events[0].Name != "hook_verdict" || outcome["t3"] != "blocked") {
			t.Errorf("span %q events %+v", s.Name, s.Events)
		}
	}
	want := map[string]string{"t1": "ok", "t2": "error", "t3": "blocked", "t4": "unfinished"}
	for id, o := range want {
		if outcome[id] != o {
			t.Errorf("tool %s outcome %q, want %q (all: %v)", id, outcome[id], o, outcome)
		}
	}
	if chats != 2 {
		t.Errorf("%d chat spans, want 2", chats)
	}
}

// TestRunSpans: Run traces the recorded Claude Code stream of a denied
// tool call under the caller's span: chat spans, execute_tool spans, the
// denied one "blocked" with its hook verdict.
func TestRunSpans(t *testing.T) {
	exp := spantest.Record(t)
	f := setup(t)
	ctx, agent := trace.Start(context.Background(), "invoke_agent code")
	must(t, f.rt.Bootstrap(ctx, f.s, f.boot))
	if _, err := f.rt.Run(ctx, f.s, f.input(rec("hook_denied"), &recorder{}, nil)); err != nil {
		t.Fatal(err)
	}
	agent.End()
	var chats, tools, blocked int
	for _, s := range exp.GetSpans() {
		if s.Parent.SpanID() != agent.SpanContext().SpanID() {
			continue
		}
		switch {
		case strings.HasPrefix(s.Name, "chat "):
			chats++
		case strings.HasPrefix(s.Name, "execute_tool "):
			tools++
			for _, kv := range s.Attributes {
				if kv.Key == "fullsend.tool.outcome" && kv.Value.AsString() == "blocked" && len(s.Events) > 0 && s.Events[0].Name == "hook_verdict" {
					blocked++
				}
			}
		}
	}
	if chats == 0 || tools != 2 || blocked == 0 {
		t.Errorf("under invoke_agent: %d chat, %d execute_tool (%d blocked with a verdict); want > 0, 2, > 0", chats, tools, blocked)
	}
}
