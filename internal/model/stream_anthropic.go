package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// anStreamEvent is one Messages stream event (the subset we read).
type anStreamEvent struct {
	Type    string `json:"type"`
	Message *struct {
		ID    string  `json:"id"`
		Usage anUsage `json:"usage"`
	} `json:"message"`
	Index        int      `json:"index"`
	ContentBlock *anBlock `json:"content_block"`
	Delta        *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anUsage `json:"usage"`
	Error *anError `json:"error"`
}

type anStreamBlock struct {
	typ      string // text | tool_use | thinking | other
	id, name string
	start    json.RawMessage // tool_use input of content_block_start
	buf      strings.Builder
	stopped  bool
}

// anStream assembles a Messages stream: message_start, then per content
// block a start, deltas (text_delta, input_json_delta, thinking_delta) and
// a stop, then message_delta (stop_reason, usage) and message_stop. Pings
// and unknown event or delta types are skipped; an error event ends the
// stream with its message.
type anStream struct {
	sink    *deltaSink
	id      string
	started bool
	blocks  map[int]*anStreamBlock
	calls   int // tool_use blocks so far
	stop    string
	wire    anUsage // usage as sent, merged over the events
	done    bool
}

func (d *anStream) final() string { return "message_stop" }

func (d *anStream) event(ev sseEvent) (bool, error) {
	var e anStreamEvent
	if err := json.Unmarshal(ev.data, &e); err != nil {
		return false, fmt.Errorf("decoding event %q: %v", ev.name, err)
	}
	if ev.name != "" && ev.name != e.Type {
		return false, fmt.Errorf("event %q carries data of type %q", ev.name, e.Type)
	}
	if e.Type == "error" {
		return false, anServerError(e.Error)
	}
	if e.Type == "ping" {
		return false, nil
	}
	if !d.started && e.Type != "message_start" {
		return false, fmt.Errorf("%s before message_start", e.Type)
	}
	switch e.Type {
	case "message_start":
		if d.started || e.Message == nil {
			return false, errors.New("bad message_start")
		}
		d.started, d.id = true, e.Message.ID
		d.wire = e.Message.Usage
	case "content_block_start":
		return false, d.blockStart(e)
	case "content_block_delta":
		return false, d.blockDelta(e)
	case "content_block_stop":
		b := d.blocks[e.Index]
		if b == nil || b.stopped {
			return false, fmt.Errorf("content_block_stop for block %d, which is not open", e.Index)
		}
		b.stopped = true
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != "" {
			d.stop = e.Delta.StopReason
		}
		if e.Usage != nil {
			// Counts are cumulative; the input ones are often sent only
			// in message_start.
			u := e.Usage
			if u.InputTokens > 0 || u.CacheCreationInputTokens > 0 || u.CacheReadInputTokens > 0 {
				d.wire.InputTokens = max(d.wire.InputTokens, u.InputTokens)
				d.wire.CacheCreationInputTokens = max(d.wire.CacheCreationInputTokens, u.CacheCreationInputTokens)
				d.wire.CacheReadInputTokens = max(d.wire.CacheReadInputTokens, u.CacheReadInputTokens)
			}
			d.wire.OutputTokens = u.OutputTokens
		}
	case "message_stop":
		d.done = true
		return true, nil
	}
	return false, nil
}

func (d *anStream) blockStart(e anStreamEvent) error {
	if e.ContentBlock == nil {
		return fmt.Errorf("content_block_start %d without a block", e.Index)
	}
	if d.blocks[e.Index] != nil {
		return fmt.Errorf("content block %d started twice", e.Index)
	}
	b := &anStreamBlock{typ: e.ContentBlock.Type}
	switch b.typ {
	case "text":
		b.buf.WriteString(e.ContentBlock.Text)
		d.sink.text(DeltaText, e.ContentBlock.Text)
	case "thinking":
		b.buf.WriteString(e.ContentBlock.Thinking)
		d.sink.text(DeltaReasoning, e.ContentBlock.Thinking)
	case "tool_use":
		b.id, b.name, b.start = e.ContentBlock.ID, e.ContentBlock.Name, e.ContentBlock.Input
		d.sink.toolCall(d.calls, b.id, b.name)
		d.calls++
	default:
		b.typ = "other"
	}
	d.blocks[e.Index] = b
	return nil
}

func (d *anStream) blockDelta(e anStreamEvent) error {
	b := d.blocks[e.Index]
	if b == nil || b.stopped {
		return fmt.Errorf("content_block_delta for block %d, which is not open", e.Index)
	}
	if e.Delta == nil {
		return fmt.Errorf("content_block_delta %d without a delta", e.Index)
	}
	var want, piece string
	kind := DeltaText
	switch e.Delta.Type {
	case "text_delta":
		want, piece = "text", e.Delta.Text
	case "input_json_delta":
		want, piece = "tool_use", e.Delta.PartialJSON
	case "thinking_delta":
		want, piece, kind = "thinking", e.Delta.Thinking, DeltaReasoning
	default:
		return nil // signature_delta, citations and later additions
	}
	if b.typ != want {
		return fmt.Errorf("%s for a %s block", e.Delta.Type, b.typ)
	}
	b.buf.WriteString(piece)
	if want != "tool_use" {
		d.sink.text(kind, piece)
	}
	return nil
}

func (d *anStream) response() (*Response, error) {
	if !d.done {
		return nil, errors.New("stream not finished")
	}
	idx := make([]int, 0, len(d.blocks))
	for i := range d.blocks {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	msg := Message{Role: RoleAssistant}
	for _, i := range idx {
		b := d.blocks[i]
		if !b.stopped {
			return nil, fmt.Errorf("content block %d never stopped", i)
		}
		switch b.typ {
		case "text":
			if b.buf.Len() > 0 {
				msg.Content = append(msg.Content, TextBlock(b.buf.String()))
			}
		case "thinking":
			msg.Reasoning += b.buf.String()
		case "tool_use":
			in := strings.TrimSpace(b.buf.String())
			if in == "" {
				in = string(bytes.TrimSpace(b.start))
			}
			if in == "" || in == "null" {
				in = "{}"
			}
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: b.id, Name: b.name, Arguments: in})
		}
	}
	return anStops.response(msg, d.stop, d.wire.usage(), d.id), nil
}
