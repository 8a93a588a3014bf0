package model

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/fullsend-ai/fullsend/internal/trace"
)

// Each Complete is one "chat MODEL" span (OpenTelemetry GenAI
// conventions): provider, model, server, token usage, finish reason,
// request id and attempts; a failed attempt that is retried is a "retry"
// event. Prompt and completion text (text and tool calls, never image
// data) are recorded only when trace.CaptureContent says so, with the
// credential redacted.

func (c *Client) startChat(ctx context.Context, model string, req *Request) (context.Context, trace.Span) {
	ctx, span := trace.Start(ctx, "chat "+model)
	if !span.IsRecording() {
		return ctx, span
	}
	provider := "openai"
	if c.cfg.API == APIAnthropic {
		provider = "anthropic"
	}
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.provider.name", provider),
		attribute.String("gen_ai.request.model", model),
		attribute.Int("gen_ai.request.max_tokens", req.MaxTokens),
	}
	if u, err := url.Parse(c.endpoint); err == nil {
		attrs = append(attrs, attribute.String("server.address", u.Hostname()))
		port := u.Port()
		if port == "" && u.Scheme == "https" {
			port = "443"
		} else if port == "" {
			port = "80"
		}
		if n, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, attribute.Int("server.port", n))
		}
	}
	if trace.CaptureContent() {
		if req.System != "" {
			attrs = append(attrs, attribute.String("gen_ai.system_instructions", c.cfg.Key.redact(req.System)))
		}
		attrs = append(attrs, attribute.String("gen_ai.input.messages", c.contentJSON(req.Messages)))
	}
	span.SetAttributes(attrs...)
	return ctx, span
}

func (c *Client) endChat(span trace.Span, resp *Response, err error) {
	if span.IsRecording() && resp != nil {
		span.SetAttributes(
			attribute.Int64("gen_ai.usage.input_tokens", resp.Usage.InputTokens),
			attribute.Int64("gen_ai.usage.output_tokens", resp.Usage.OutputTokens),
			attribute.StringSlice("gen_ai.response.finish_reasons", []string{string(resp.StopReason)}),
			attribute.Int("fullsend.model.attempts", resp.Attempts),
		)
		if resp.RequestID != "" {
			span.SetAttributes(attribute.String("gen_ai.response.id", resp.RequestID))
		}
		setCacheAttributes(span, resp.Usage)
		if trace.CaptureContent() {
			span.SetAttributes(attribute.String("gen_ai.output.messages", c.contentJSON([]Message{resp.Message})))
		}
	}
	trace.End(span, err)
}

func traceRetry(span trace.Span, rec Call) {
	if !span.IsRecording() {
		return
	}
	span.AddEvent("retry", oteltrace.WithAttributes(
		attribute.Int("fullsend.model.attempt", rec.Attempt),
		attribute.Int("http.response.status_code", rec.Status),
		attribute.Int64("fullsend.model.retry_after_ms", rec.RetryAfterMS),
		attribute.String("error.message", rec.Error), // already redacted
	))
}

// contentJSON renders messages for gen_ai.input/output.messages: role,
// text parts and tool calls; image data is left out; the key redacted.
func (c *Client) contentJSON(ms []Message) string {
	type part struct {
		Type      string `json:"type"`
		Content   string `json:"content,omitempty"`
		ID        string `json:"id,omitempty"`
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments,omitempty"`
	}
	type msg struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	}
	out := make([]msg, 0, len(ms))
	for _, m := range ms {
		o := msg{Role: string(m.Role), Parts: []part{}}
		if m.ToolCallID != "" {
			o.Parts = append(o.Parts, part{Type: "tool_call_response", ID: m.ToolCallID, Content: m.Text()})
		} else {
			for _, b := range m.Content {
				if b.Type == BlockText {
					o.Parts = append(o.Parts, part{Type: "text", Content: b.Text})
				}
			}
		}
		for _, tc := range m.ToolCalls {
			o.Parts = append(o.Parts, part{Type: "tool_call", ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
		}
		out = append(out, o)
	}
	b, _ := json.Marshal(out)
	return c.cfg.Key.redact(string(b))
}

// setCacheAttributes records the prompt-cache counts of u on span
// (GenAI conventions; both are part of gen_ai.usage.input_tokens), when
// the server reported them.
func setCacheAttributes(span trace.Span, u Usage) {
	if u.CacheReadInputTokens > 0 {
		span.SetAttributes(attribute.Int64("gen_ai.usage.cache_read.input_tokens", u.CacheReadInputTokens))
	}
	if u.CacheCreationInputTokens > 0 {
		span.SetAttributes(attribute.Int64("gen_ai.usage.cache_creation.input_tokens", u.CacheCreationInputTokens))
	}
}
