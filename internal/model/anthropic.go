package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Anthropic Messages wire types (the subset we send and read).

type anRequest struct {
	Model     string      `json:"model"`
	MaxTokens int         `json:"max_tokens"`
	System    []anBlock   `json:"system,omitempty"`
	Messages  []anMessage `json:"messages"`
	Tools     []anTool    `json:"tools,omitempty"`
	Stream    bool        `json:"stream,omitempty"`
}

type anMessage struct {
	Role    string    `json:"role"`
	Content []anBlock `json:"content"`
}

type anBlock struct {
	Type string `json:"type"` // text | image | tool_use | tool_result
	Text string `json:"text,omitempty"`
	// thinking
	Thinking string `json:"thinking,omitempty"`
	// image
	Source *anSource `json:"source,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string    `json:"tool_use_id,omitempty"`
	Content   []anBlock `json:"content,omitempty"`
	IsError   bool      `json:"is_error,omitempty"`
	// CacheControl marks a prompt-cache breakpoint (requests only).
	CacheControl *anCacheControl `json:"cache_control,omitempty"`
}

// anCacheControl is a prompt-cache breakpoint: the server caches the
// request's prefix up to and including the marked block.
type anCacheControl struct {
	Type string `json:"type"` // ephemeral
}

// anCacheBreakpoint is the breakpoint every marked block carries.
var anCacheBreakpoint = &anCacheControl{Type: "ephemeral"}

type anSource struct {
	Type      string `json:"type"` // base64
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type anTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *anCacheControl `json:"cache_control,omitempty"`
}

type anResponse struct {
	ID         string    `json:"id"`
	Type       string    `json:"type"`
	Role       string    `json:"role"`
	Content    []anBlock `json:"content"`
	StopReason string    `json:"stop_reason"`
	Usage      anUsage   `json:"usage"`
	Error      *anError  `json:"error"`
}

type anUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// usage normalises the counts: input_tokens leaves out the tokens read
// from or written to the cache, Usage.InputTokens counts them all.
func (u anUsage) usage() Usage {
	return Usage{
		InputTokens:              u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		OutputTokens:             u.OutputTokens,
		CacheReadInputTokens:     u.CacheReadInputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens,
	}
}

type anError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// anServerError is the error an error answer reports (e may be absent).
func anServerError(e *anError) error {
	msg := "unknown error"
	if e != nil {
		msg = e.Type + ": " + e.Message
	}
	return fmt.Errorf("server error: %s", msg)
}

// encodeAnthropic renders req in the Messages format: tool results become
// tool_result blocks of a user message; consecutive messages of the same
// role are merged, as the API requires strict alternation. Prompt-cache
// breakpoints are set as anCacheMarks says.
func encodeAnthropic(model string, req *Request) ([]byte, error) {
	out := anRequest{Model: model, MaxTokens: req.MaxTokens, Stream: req.OnDelta != nil}
	if req.System != "" {
		out.System = []anBlock{{Type: "text", Text: req.System}}
	}
	if out.MaxTokens <= 0 {
		out.MaxTokens = 4096
	}
	add := func(role string, blocks []anBlock) {
		if n := len(out.Messages); n > 0 && out.Messages[n-1].Role == role {
			out.Messages[n-1].Content = append(out.Messages[n-1].Content, blocks...)
			return
		}
		out.Messages = append(out.Messages, anMessage{Role: role, Content: blocks})
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			blocks, err := anContent(m.Content)
			if err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
			add("user", anOrText(blocks, "(empty)"))
		case RoleTool:
			blocks, err := anContent(m.Content)
			if err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
			add("user", []anBlock{{Type: "tool_result", ToolUseID: m.ToolCallID, Content: anOrText(blocks, "(no output)"), IsError: m.IsError}})
		case RoleAssistant:
			var blocks []anBlock
			if t := m.Text(); t != "" {
				blocks = append(blocks, anBlock{Type: "text", Text: t})
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, anBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: anInput(tc.Arguments)})
			}
			add("assistant", anOrText(blocks, "(no output)"))
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, anTool{Name: t.Name, Description: t.Description, InputSchema: t.Parameters})
	}
	anCacheMarks(&out)
	return json.Marshal(out)
}

// MaxCacheBreakpoints is how many cache_control breakpoints the Messages
// API accepts in one request.
const MaxCacheBreakpoints = 4

// anCacheMarks sets the prompt-cache breakpoints of out, at most
// MaxCacheBreakpoints, on the parts that stay the same from one turn to
// the next (the server caches the prefix ending at each one):
//   - the system prompt;
//   - the last tool (the whole tool list: tools precede the system prompt
//     in the cached prefix);
//   - the last block of the last message, so the next turn, which extends
//     this conversation, reads it back;
//   - the last block of the previous turn's last message (the user message
//     before the last assistant message), which is where the previous
//     request put its own breakpoint: this request reads the prefix that
//     request cached.
func anCacheMarks(out *anRequest) {
	if n := len(out.System); n > 0 {
		out.System[n-1].CacheControl = anCacheBreakpoint
	}
	if n := len(out.Tools); n > 0 {
		out.Tools[n-1].CacheControl = anCacheBreakpoint
	}
	marked := 0
	for i := len(out.Messages) - 1; i >= 0 && marked < 2; i-- {
		m := &out.Messages[i]
		if m.Role != "user" || len(m.Content) == 0 {
			continue
		}
		m.Content[len(m.Content)-1].CacheControl = anCacheBreakpoint
		marked++
	}
}

// anOrText returns blocks, or one text block saying placeholder when there
// are none: the API refuses empty content.
func anOrText(blocks []anBlock, placeholder string) []anBlock {
	if len(blocks) == 0 {
		return []anBlock{{Type: "text", Text: placeholder}}
	}
	return blocks
}

func anContent(bs []Block) ([]anBlock, error) {
	var out []anBlock
	for _, b := range bs {
		switch b.Type {
		case BlockText:
			if b.Text != "" {
				out = append(out, anBlock{Type: "text", Text: b.Text})
			}
		case BlockImage:
			if b.Data == "" {
				return nil, errors.New("image block without data")
			}
			out = append(out, anBlock{Type: "image", Source: &anSource{Type: "base64", MediaType: b.MediaType, Data: b.Data}})
		}
	}
	return out, nil
}

// anInput returns the tool_use input: the arguments when they are a JSON
// object, else an empty object (the API accepts only objects; malformed
// arguments never come from this dialect).
func anInput(args string) json.RawMessage {
	raw := bytes.TrimSpace([]byte(args))
	if len(raw) > 0 && raw[0] == '{' && json.Valid(raw) {
		return raw
	}
	return json.RawMessage("{}")
}

func decodeAnthropic(data []byte) (*Response, error) {
	var r anResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("decoding message: %v", err)
	}
	if r.Type == "error" || (r.Error != nil && len(r.Content) == 0) {
		return nil, anServerError(r.Error)
	}
	if r.Type != "" && r.Type != "message" {
		return nil, fmt.Errorf("unexpected object type %q", r.Type)
	}
	msg := Message{Role: RoleAssistant}
	for _, b := range r.Content {
		switch b.Type {
		case "text":
			if b.Text != "" {
				msg.Content = append(msg.Content, TextBlock(b.Text))
			}
		case "tool_use":
			in := string(bytes.TrimSpace(b.Input))
			if in == "" || in == "null" {
				in = "{}"
			}
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: in})
		case "thinking":
			msg.Reasoning += b.Thinking
		}
	}
	return anStops.response(msg, r.StopReason, r.Usage.usage(), r.ID), nil
}

// anStops normalises stop_reason.
var anStops = stopTable{
	"end_turn":      StopEnd,
	"stop_sequence": StopEnd,
	"":              StopEnd,
	"tool_use":      StopToolUse,
	"max_tokens":    StopMaxTokens,
}
