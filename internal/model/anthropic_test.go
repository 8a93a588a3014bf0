package model

import (
	"encoding/json"
	"testing"
)

// The Messages API refuses empty content: an empty user message, tool
// result or assistant turn is sent with a placeholder text block.
func TestEncodeAnthropicEmptyContent(t *testing.T) {
	req := &Request{Messages: []Message{
		{Role: RoleUser, Content: []Block{TextBlock("")}},
		{Role: RoleAssistant},
		{Role: RoleTool, ToolCallID: "c1"},
		{Role: RoleAssistant, Content: []Block{TextBlock("done")}},
	}}
	body, err := encodeAnthropic("m", req)
	if err != nil {
		t.Fatal(err)
	}
	var got anRequest
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	text := func(bs []anBlock) string {
		if len(bs) != 1 || bs[0].Type != "text" {
			return "not one text block"
		}
		return bs[0].Text
	}
	if len(got.Messages) != 4 {
		t.Fatalf("messages %s", body)
	}
	if m := got.Messages[0]; m.Role != "user" || text(m.Content) != "(empty)" {
		t.Errorf("empty user message sent as %+v", m)
	}
	if m := got.Messages[1]; m.Role != "assistant" || text(m.Content) != "(no output)" {
		t.Errorf("empty assistant turn sent as %+v", m)
	}
	if m := got.Messages[2]; m.Role != "user" || len(m.Content) != 1 || m.Content[0].Type != "tool_result" || m.Content[0].ToolUseID != "c1" || text(m.Content[0].Content) != "(no output)" {
		t.Errorf("empty tool result sent as %+v", m)
	}
	if m := got.Messages[3]; m.Role != "assistant" || text(m.Content) != "done" {
		t.Errorf("assistant text sent as %+v", m)
	}
}
