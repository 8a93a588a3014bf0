package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// OpenAI chat-completions wire types (the subset we send and read).

type oaRequest struct {
	Model     string      `json:"model"`
	Messages  []oaMessage `json:"messages"`
	Tools     []oaTool    `json:"tools,omitempty"`
	MaxTokens int         `json:"max_tokens,omitempty"`
	Stream    bool        `json:"stream"`
	// StreamOptions asks for the final usage chunk (streaming only).
	StreamOptions *oaStreamOptions `json:"stream_options,omitempty"`
}

type oaStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type oaMessage struct {
	Role       string       `json:"role"`
	Content    any          `json:"content"` // string, []oaPart or nil
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type oaPart struct {
	Type     string      `json:"type"` // text | image_url
	Text     string      `json:"text,omitempty"`
	ImageURL *oaImageURL `json:"image_url,omitempty"`
}

type oaImageURL struct {
	URL string `json:"url"`
}

type oaToolCall struct {
	ID       string     `json:"id"`
	Type     string     `json:"type"`
	Function oaFunction `json:"function"`
}

type oaFunction struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type oaTool struct {
	Type     string        `json:"type"`
	Function oaFunctionDef `json:"function"`
}

type oaFunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type oaResponse struct {
	ID      string `json:"id"`
	Choices []struct {
		Message struct {
			Role             string          `json:"role"`
			Content          json.RawMessage `json:"content"`
			ReasoningContent string          `json:"reasoning_content"`
			Reasoning        string          `json:"reasoning"`
			ToolCalls        []oaToolCall    `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage oaUsage  `json:"usage"`
	Error *oaError `json:"error"`
}

type oaUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// usage normalises the counts: prompt_tokens already includes the cached
// tokens.
func (u oaUsage) usage() Usage {
	out := Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	if d := u.PromptTokensDetails; d != nil && d.CachedTokens > 0 {
		out.CacheReadInputTokens = d.CachedTokens
	}
	return out
}

type oaError struct {
	Message string `json:"message"`
}

// encodeOpenAI renders req in the chat-completions format. Tool results are
// "tool" messages; images in tool results (which the format does not allow
// there) follow as one user message after the run of tool messages.
func encodeOpenAI(model string, req *Request) ([]byte, error) {
	out := oaRequest{Model: model, MaxTokens: req.MaxTokens}
	if req.OnDelta != nil {
		out.Stream = true
		out.StreamOptions = &oaStreamOptions{IncludeUsage: true}
	}
	if req.System != "" {
		out.Messages = append(out.Messages, oaMessage{Role: "system", Content: req.System})
	}
	var pendingImages []oaPart
	flush := func() {
		if len(pendingImages) > 0 {
			parts := append([]oaPart{{Type: "text", Text: "Images returned by the tool calls above:"}}, pendingImages...)
			out.Messages = append(out.Messages, oaMessage{Role: "user", Content: parts})
			pendingImages = nil
		}
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleTool:
			var text strings.Builder
			for _, b := range m.Content {
				switch b.Type {
				case BlockText:
					text.WriteString(b.Text)
				case BlockImage:
					if b.Data == "" {
						return nil, fmt.Errorf("message %d: image block without data", i)
					}
					pendingImages = append(pendingImages, oaPart{Type: "image_url", ImageURL: &oaImageURL{URL: "data:" + b.MediaType + ";base64," + b.Data}})
				}
			}
			out.Messages = append(out.Messages, oaMessage{Role: "tool", ToolCallID: m.ToolCallID, Content: text.String()})
		case RoleAssistant:
			flush()
			om := oaMessage{Role: "assistant"}
			if t := m.Text(); t != "" || len(m.ToolCalls) == 0 {
				om.Content = t
			}
			for _, tc := range m.ToolCalls {
				args, _ := json.Marshal(tc.Arguments) // a JSON string, as the format wants
				om.ToolCalls = append(om.ToolCalls, oaToolCall{ID: tc.ID, Type: "function", Function: oaFunction{Name: tc.Name, Arguments: args}})
			}
			out.Messages = append(out.Messages, om)
		case RoleUser:
			flush()
			content, err := oaUserContent(m)
			if err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
			out.Messages = append(out.Messages, oaMessage{Role: "user", Content: content})
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	flush()
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, oaTool{Type: "function", Function: oaFunctionDef(t)})
	}
	return json.Marshal(out)
}

func oaUserContent(m Message) (any, error) {
	hasImage := false
	for _, b := range m.Content {
		if b.Type == BlockImage {
			hasImage = true
		}
	}
	if !hasImage {
		return m.Text(), nil
	}
	var parts []oaPart
	for _, b := range m.Content {
		switch b.Type {
		case BlockText:
			parts = append(parts, oaPart{Type: "text", Text: b.Text})
		case BlockImage:
			if b.Data == "" {
				return nil, errors.New("image block without data")
			}
			parts = append(parts, oaPart{Type: "image_url", ImageURL: &oaImageURL{URL: "data:" + b.MediaType + ";base64," + b.Data}})
		}
	}
	return parts, nil
}

func decodeOpenAI(data []byte) (*Response, error) {
	var r oaResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("decoding chat completion: %v", err)
	}
	if r.Error != nil && len(r.Choices) == 0 {
		return nil, fmt.Errorf("server error: %s", r.Error.Message)
	}
	if len(r.Choices) == 0 {
		return nil, errors.New("no choices in chat completion")
	}
	ch := r.Choices[0]
	msg := Message{Role: RoleAssistant, Reasoning: ch.Message.ReasoningContent}
	if msg.Reasoning == "" {
		msg.Reasoning = ch.Message.Reasoning
	}
	text, err := oaText(ch.Message.Content)
	if err != nil {
		return nil, err
	}
	if text != "" {
		msg.Content = []Block{TextBlock(text)}
	}
	for _, tc := range ch.Message.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: oaArguments(tc.Function.Arguments)})
	}
	return oaStops.response(msg, ch.FinishReason, r.Usage.usage(), r.ID), nil
}

// oaStops normalises finish_reason.
var oaStops = stopTable{
	"stop":          StopEnd,
	"":              StopEnd,
	"tool_calls":    StopToolUse,
	"function_call": StopToolUse,
	"length":        StopMaxTokens,
}

// oaText accepts content as a string, null, or an array of text parts.
func oaText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("message content: %v", err)
		}
		return s, nil
	}
	var parts []oaPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("message content: %v", err)
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// oaArguments returns the arguments text: the format says a JSON-encoded
// string, some servers send the object itself.
func oaArguments(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}
