package model

import "testing"

// Each dialect's stop reasons map to the neutral ones; an unknown reason is
// StopOther, and an answer ending its turn with tool calls wants their
// results.
func TestStopTables(t *testing.T) {
	call := []ToolCall{{ID: "c1", Name: "bash", Arguments: "{}"}}
	for _, c := range []struct {
		dialect string
		table   stopTable
		raw     string
		calls   []ToolCall
		want    StopReason
	}{
		{"anthropic", anStops, "end_turn", nil, StopEnd},
		{"anthropic", anStops, "stop_sequence", nil, StopEnd},
		{"anthropic", anStops, "", nil, StopEnd},
		{"anthropic", anStops, "tool_use", nil, StopToolUse},
		{"anthropic", anStops, "max_tokens", nil, StopMaxTokens},
		{"anthropic", anStops, "refusal", nil, StopOther},
		{"anthropic", anStops, "end_turn", call, StopToolUse},
		{"anthropic", anStops, "max_tokens", call, StopMaxTokens},
		{"openai", oaStops, "stop", nil, StopEnd},
		{"openai", oaStops, "", nil, StopEnd},
		{"openai", oaStops, "tool_calls", nil, StopToolUse},
		{"openai", oaStops, "function_call", nil, StopToolUse},
		{"openai", oaStops, "length", nil, StopMaxTokens},
		{"openai", oaStops, "content_filter", nil, StopOther},
		{"openai", oaStops, "stop", call, StopToolUse},
		{"openai", oaStops, "content_filter", call, StopOther},
	} {
		msg := Message{Role: RoleAssistant, ToolCalls: c.calls}
		r := c.table.response(msg, c.raw, Usage{InputTokens: 3, OutputTokens: 4}, "req_1")
		if r.StopReason != c.want || r.RawStop != c.raw || r.Usage != (Usage{InputTokens: 3, OutputTokens: 4}) || r.RequestID != "req_1" || len(r.Message.ToolCalls) != len(c.calls) {
			t.Errorf("%s %q with %d calls: %+v, want stop %s", c.dialect, c.raw, len(c.calls), r, c.want)
		}
	}
}
