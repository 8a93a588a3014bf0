package native

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/fullsend-ai/fullsend/internal/hooks"
	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/trace"
)

// Each tool call is one "execute_tool NAME" span (OpenTelemetry GenAI
// conventions) under the run's invoke_agent span, beside the model's chat
// spans: the tool, the call id, the outcome (ok, error, blocked) and one
// "hook_verdict" event per blocking hook verdict. Arguments and results
// (redacted) only when trace.CaptureContent says so.

func startTool(ctx context.Context, tc model.ToolCall) (context.Context, trace.Span) {
	return trace.Start(ctx, "execute_tool "+tc.Name,
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", tc.Name),
		attribute.String("gen_ai.tool.call.id", tc.ID),
		attribute.String("gen_ai.tool.type", "function"),
	)
}

func (l *loop) endTool(span trace.Span, tc model.ToolCall, out toolResult, blocked string, postRules []string, err error) {
	if span.IsRecording() {
		outcome := "ok"
		switch {
		case blocked != "":
			outcome = "blocked"
		case out.isError:
			outcome = "error"
		}
		span.SetAttributes(attribute.String("fullsend.tool.outcome", outcome))
		if blocked != "" {
			verdict(span, hooks.PreToolUse, blocked)
		}
		for _, r := range postRules {
			verdict(span, hooks.PostToolUse, r)
		}
		if trace.CaptureContent() {
			span.SetAttributes(
				attribute.String("gen_ai.tool.call.arguments", l.redact(tc.Arguments)),
				attribute.String("gen_ai.tool.call.result", l.redact(out.text)),
			)
		}
	}
	trace.End(span, err)
}

func verdict[E ~string](span trace.Span, event E, rule string) {
	span.AddEvent("hook_verdict", oteltrace.WithAttributes(
		attribute.String("fullsend.hook.event", string(event)),
		attribute.String("fullsend.hook.rule", rule),
		attribute.String("fullsend.hook.decision", "block"),
	))
}
