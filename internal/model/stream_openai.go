package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// oaChunk is one chat.completion.chunk (the subset we read).
type oaChunk struct {
	ID      string `json:"id"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          json.RawMessage `json:"content"`
			ReasoningContent string          `json:"reasoning_content"`
			Reasoning        string          `json:"reasoning"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *oaUsage `json:"usage"`
	Error *oaError `json:"error"`
}

// oaStream assembles a chat-completions stream: content and reasoning
// pieces are concatenated, tool calls assembled by their index, the
// finish_reason kept, usage read from the final chunk (stream_options
// include_usage), and "data: [DONE]" ends it.
type oaStream struct {
	sink      *deltaSink
	id        string
	text      strings.Builder
	reasoning strings.Builder
	calls     []ToolCall
	callIdx   map[int]int // wire index -> position in calls
	finish    string
	usage     Usage
	choices   bool // a chunk with a choice arrived
	done      bool
}

func (d *oaStream) final() string { return "data: [DONE]" }

func (d *oaStream) event(ev sseEvent) (bool, error) {
	if string(ev.data) == "[DONE]" {
		d.done = true
		return true, nil
	}
	var ch oaChunk
	if err := json.Unmarshal(ev.data, &ch); err != nil {
		return false, fmt.Errorf("decoding chunk: %v", err)
	}
	if ch.Error != nil {
		return false, fmt.Errorf("server error: %s", ch.Error.Message)
	}
	if ev.name == "error" {
		return false, fmt.Errorf("server error: %s", ev.data)
	}
	if d.id == "" {
		d.id = ch.ID
	}
	if ch.Usage != nil {
		d.usage = ch.Usage.usage()
	}
	for _, c := range ch.Choices {
		if c.Index != 0 {
			continue
		}
		d.choices = true
		reasoning := c.Delta.ReasoningContent
		if reasoning == "" {
			reasoning = c.Delta.Reasoning
		}
		if err := d.choice(c.Delta.Content, reasoning); err != nil {
			return false, err
		}
		for _, tc := range c.Delta.ToolCalls {
			pos, ok := d.callIdx[tc.Index]
			if !ok {
				pos = len(d.calls)
				d.callIdx[tc.Index] = pos
				d.calls = append(d.calls, ToolCall{ID: tc.ID, Name: tc.Function.Name})
				d.sink.toolCall(pos, tc.ID, tc.Function.Name)
			}
			call := &d.calls[pos]
			if call.ID == "" {
				call.ID = tc.ID
			}
			if call.Name == "" {
				call.Name = tc.Function.Name
			}
			call.Arguments += oaArguments(tc.Function.Arguments)
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			d.finish = *c.FinishReason
		}
	}
	return false, nil
}

func (d *oaStream) choice(content json.RawMessage, reasoning string) error {
	text, err := oaText(content)
	if err != nil {
		return err
	}
	if reasoning != "" {
		d.reasoning.WriteString(reasoning)
		d.sink.text(DeltaReasoning, reasoning)
	}
	if text != "" {
		d.text.WriteString(text)
		d.sink.text(DeltaText, text)
	}
	return nil
}

func (d *oaStream) response() (*Response, error) {
	if !d.done {
		return nil, errors.New("stream not finished")
	}
	if !d.choices {
		return nil, errors.New("no choices in stream")
	}
	msg := Message{Role: RoleAssistant, Reasoning: d.reasoning.String(), ToolCalls: d.calls}
	if t := d.text.String(); t != "" {
		msg.Content = []Block{TextBlock(t)}
	}
	return oaStops.response(msg, d.finish, d.usage, d.id), nil
}
