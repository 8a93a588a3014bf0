package claude

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/trace"
)

// The Claude Code CLI runs in the sandbox, so its model calls and tool
// calls are traced from its event stream, under the run's invoke_agent
// span: one "chat MODEL" span per model turn (from the previous turn's
// last tool result, or the start, to the turn's message), one
// "execute_tool NAME" span per tool call (tool_use to tool_result) with
// its outcome and a "hook_verdict" event per hook verdict. The CLI's own
// telemetry, when enabled in the sandbox, joins the same trace through
// TRACEPARENT.
type eventSpans struct {
	ctx   context.Context
	next  func(runtime.Event)
	mu    sync.Mutex
	since time.Time
	tools map[string]*toolSpan
}

type toolSpan struct {
	span    trace.Span
	blocked bool
}

// traceEvents wraps emit (may be nil) when ctx's span is recorded; the
// returned function ends the tool spans still open.
func traceEvents(ctx context.Context, emit func(runtime.Event)) (func(runtime.Event), func()) {
	if !trace.FromContext(ctx).IsRecording() {
		return emit, func() {}
	}
	t := &eventSpans{ctx: ctx, next: emit, since: time.Now(), tools: map[string]*toolSpan{}}
	return t.event, t.close
}

func (t *eventSpans) event(e runtime.Event) {
	t.mu.Lock()
	now := time.Now()
	switch e.Kind {
	case runtime.EventTurn:
		// The stream reports a turn when its message arrives; the call
		// began when the previous step ended.
		_, span := trace.StartAt(t.ctx, "chat "+e.Name, t.since,
			attribute.String("gen_ai.operation.name", "chat"),
			attribute.String("gen_ai.provider.name", "anthropic"),
			attribute.String("gen_ai.request.model", e.Name),
			attribute.Int("fullsend.agent.turn", e.Turn),
		)
		span.End(oteltrace.WithTimestamp(now))
		t.since = now
	case runtime.EventToolCall:
		_, span := trace.Start(t.ctx, "execute_tool "+e.Name,
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", e.Name),
			attribute.String("gen_ai.tool.call.id", e.ID))
		if trace.CaptureContent() {
			span.SetAttributes(attribute.String("gen_ai.tool.call.arguments", e.Text))
		}
		if old := t.tools[e.ID]; old != nil {
			old.span.End()
		}
		t.tools[e.ID] = &toolSpan{span: span}
	case runtime.EventVerdict:
		if ts := t.tools[e.ID]; ts != nil {
			ts.blocked = true
			ts.span.AddEvent("hook_verdict", oteltrace.WithAttributes(
				attribute.String("fullsend.hook.event", e.Name),
				attribute.String("fullsend.hook.rule", e.Rule),
				attribute.String("fullsend.hook.decision", "block"),
			))
		}
	case runtime.EventToolResult:
		if ts := t.tools[e.ID]; ts != nil {
			outcome := "ok"
			switch {
			case ts.blocked:
				outcome = "blocked"
			case e.IsError:
				outcome = "error"
			}
			ts.span.SetAttributes(attribute.String("fullsend.tool.outcome", outcome))
			if trace.CaptureContent() {
				ts.span.SetAttributes(attribute.String("gen_ai.tool.call.result", e.Text))
			}
			ts.span.End()
			delete(t.tools, e.ID)
		}
		t.since = now
	}
	t.mu.Unlock()
	if t.next != nil {
		t.next(e)
	}
}

func (t *eventSpans) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, ts := range t.tools {
		ts.span.SetAttributes(attribute.String("fullsend.tool.outcome", "unfinished"))
		ts.span.End()
		delete(t.tools, id)
	}
}
