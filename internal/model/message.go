package model

import (
	"encoding/json"
	"strings"
)

// Role is the author of a Message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool carries the result of one tool call (ToolCallID set).
	RoleTool Role = "tool"
)

// BlockType is the kind of a content Block.
type BlockType string

const (
	BlockText  BlockType = "text"
	BlockImage BlockType = "image"
)

// Block is one piece of message content.
type Block struct {
	Type BlockType `json:"type"`
	Text string    `json:"text,omitempty"`
	// Image fields. Data is the base64 of the image bytes; it is what the
	// wire formats carry. Transcripts store File and SHA256 instead and clear
	// Data (see the native runtime).
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	SHA256    string `json:"sha256,omitempty"`
	File      string `json:"file,omitempty"`
	Size      int    `json:"size,omitempty"`
}

// TextBlock returns a text block.
func TextBlock(s string) Block { return Block{Type: BlockText, Text: s} }

// ToolCall is one tool invocation requested by the model. Arguments is the
// raw JSON text the model produced; it may be malformed, and the caller
// decides what to do about it.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Message is one conversation entry in a provider-neutral form.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content,omitempty"`
	// ToolCalls is set on assistant messages that call tools.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and IsError are set on RoleTool messages.
	ToolCallID string `json:"tool_call_id,omitempty"`
	IsError    bool   `json:"is_error,omitempty"`
	// Reasoning is reasoning text some servers return beside the answer
	// (reasoning_content). It is kept for the transcript, never sent back.
	Reasoning string `json:"reasoning,omitempty"`
}

// Text concatenates the message's text blocks.
func (m Message) Text() string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == BlockText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// ToolSpec declares one tool offered to the model. Parameters is a JSON
// Schema object.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one completion request.
type Request struct {
	Model     string     // "" = Config.Model
	System    string     // system prompt
	Messages  []Message  // conversation so far
	Tools     []ToolSpec // tools offered
	MaxTokens int        // output bound for this call (> 0)
	// OnDelta, when set, makes the call stream (SSE): it receives the
	// answer's pieces in order as they arrive, on the calling goroutine,
	// before Complete returns the assembled Response (the same value a
	// non-streaming call returns). It must not block for long: the stream
	// is read only between calls. Nil: no streaming.
	OnDelta func(Delta)
}

// DeltaKind is the kind of a streamed Delta.
type DeltaKind string

const (
	DeltaText      DeltaKind = "text"      // a piece of the answer text
	DeltaReasoning DeltaKind = "reasoning" // a piece of the reasoning text
	DeltaToolCall  DeltaKind = "tool_call" // a tool call begins (Index, ID, Name)
)

// Delta is one streamed piece of a model answer. Text pieces have the
// API key redacted, even when the key is split across pieces.
type Delta struct {
	Kind  DeltaKind `json:"kind"`
	Text  string    `json:"text,omitempty"`
	Index int       `json:"index,omitempty"` // position of the tool call in the message, from 0
	ID    string    `json:"id,omitempty"`    // tool call id (may be empty on local servers)
	Name  string    `json:"name,omitempty"`  // tool name
}

// StopReason is why the model stopped producing output, normalised.
type StopReason string

const (
	StopEnd       StopReason = "end"        // finished its turn
	StopToolUse   StopReason = "tool_use"   // wants tool results
	StopMaxTokens StopReason = "max_tokens" // hit Request.MaxTokens
	StopOther     StopReason = "other"      // refusal, content filter, unknown
)

// Usage counts tokens of one call. InputTokens counts every input token,
// cached or not, in both dialects (an Anthropic answer's input_tokens,
// cache_creation_input_tokens and cache_read_input_tokens summed; an
// OpenAI answer's prompt_tokens); the cache counts say how many of them
// were read from the server's prompt cache or written to it, when the
// server reports it (OpenAI-compatible servers report reads only).
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	// CacheReadInputTokens: input tokens served from the prompt cache.
	CacheReadInputTokens int64 `json:"cache_read_input_tokens,omitempty"`
	// CacheCreationInputTokens: input tokens written to the prompt cache.
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens,omitempty"`
}

// Add adds o's counts to u.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CacheReadInputTokens += o.CacheReadInputTokens
	u.CacheCreationInputTokens += o.CacheCreationInputTokens
}

// Response is the model's answer to one Request.
type Response struct {
	Message    Message    // RoleAssistant
	StopReason StopReason // normalised
	RawStop    string     // the server's own finish/stop reason
	Usage      Usage
	RequestID  string // server request id (header, else body id)
	Attempts   int    // HTTP attempts made (1 = no retry)
}

// stopTable maps a dialect's stop (or finish) reasons to StopReason; a
// reason it does not list is StopOther.
type stopTable map[string]StopReason

// response assembles the Response to one answer, normalising its raw stop
// reason. An answer that ends its turn while calling tools counts as
// StopToolUse: some servers say "stop" while returning tool calls.
func (st stopTable) response(msg Message, raw string, usage Usage, id string) *Response {
	stop, ok := st[raw]
	if !ok {
		stop = StopOther
	}
	if len(msg.ToolCalls) > 0 && stop == StopEnd {
		stop = StopToolUse
	}
	return &Response{Message: msg, StopReason: stop, RawStop: raw, Usage: usage, RequestID: id}
}
