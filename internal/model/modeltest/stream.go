package modeltest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fullsend-ai/fullsend/internal/model"
)

// Fault is a failure injected into a streamed Reply, after about half of
// its events (so always after the first byte of the body).
type Fault int

const (
	FaultNone      Fault = iota
	FaultCut             // the connection is dropped mid-stream
	FaultMalformed       // an event whose data is not JSON
	FaultError           // an error event (overloaded)
	FaultOversize        // a data line longer than model.MaxStreamEvent
	FaultNoFinal         // the stream ends cleanly without its final event
)

// SetDeltaDelay sets the pause before each event of a streamed reply.
func (s *Server) SetDeltaDelay(d time.Duration) {
	s.mu.Lock()
	s.delay = d
	s.mu.Unlock()
}

// PieceSize is the most bytes of text or tool arguments one streamed
// event carries, so that arguments always arrive split.
const PieceSize = 5

// pieces splits s into chunks of at most PieceSize bytes on rune
// boundaries.
func pieces(s string) []string {
	var out []string
	for len(s) > 0 {
		n := min(PieceSize, len(s))
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// sseEvent is one event to send: an optional name and its data.
type sseEvent struct{ name, data string }

func sseJSON(name string, v any) sseEvent {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return sseEvent{name: name, data: string(b)}
}

func (s *Server) stream(w http.ResponseWriter, i int, step Step, includeUsage bool) {
	var evs []sseEvent
	if s.API == model.APIAnthropic {
		evs = anthropicEvents(i, step.Reply)
	} else {
		evs = openAIEvents(i, step.Reply, includeUsage)
	}
	s.mu.Lock()
	delay := s.delay
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("request-id", fmt.Sprintf("req_%d", i+1))
	for k, v := range step.Header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	faultAt := -1
	switch step.Fault {
	case FaultNone:
	case FaultNoFinal:
		evs = evs[:len(evs)-1]
	default:
		faultAt = max(1, len(evs)/2)
	}
	for n, ev := range evs {
		if n == faultAt {
			s.fault(w, flusher, step.Fault)
			return
		}
		if delay > 0 {
			time.Sleep(delay)
		}
		writeEvent(w, ev)
		if flusher != nil {
			flusher.Flush()
		}
	}
}

func writeEvent(w io.Writer, ev sseEvent) {
	var b strings.Builder
	if ev.name != "" {
		b.WriteString("event: " + ev.name + "\n")
	}
	b.WriteString("data: " + ev.data + "\n\n")
	_, _ = io.WriteString(w, b.String())
}

func (s *Server) fault(w http.ResponseWriter, f http.Flusher, fault Fault) {
	switch fault {
	case FaultCut:
		if f != nil {
			f.Flush()
		}
		panic(http.ErrAbortHandler) // drops the connection, no chunk terminator
	case FaultMalformed:
		writeEvent(w, sseEvent{name: s.eventName("content_block_delta"), data: `{"type":"content_block_delta",`})
	case FaultError:
		if s.API == model.APIAnthropic {
			writeEvent(w, sseEvent{name: "error", data: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`})
		} else {
			writeEvent(w, sseEvent{data: `{"error":{"message":"upstream overloaded","type":"server_error"}}`})
		}
	case FaultOversize:
		_, _ = io.WriteString(w, "data: \""+strings.Repeat("x", model.MaxStreamEvent)+"\"\n\n")
	}
	if f != nil {
		f.Flush()
	}
}

func (s *Server) eventName(n string) string {
	if s.API == model.APIAnthropic {
		return n
	}
	return ""
}

func openAIEvents(i int, r *Reply, includeUsage bool) []sseEvent {
	id := fmt.Sprintf("chatcmpl-%d", i+1)
	chunk := func(delta map[string]any, finish any) sseEvent {
		return sseJSON("", map[string]any{"id": id, "object": "chat.completion.chunk",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	evs := []sseEvent{chunk(map[string]any{"role": "assistant", "content": ""}, nil)}
	for _, p := range pieces(r.Text) {
		evs = append(evs, chunk(map[string]any{"content": p}, nil))
	}
	for j, c := range r.ToolCalls {
		evs = append(evs, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": j, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil))
		for _, p := range pieces(c.Arguments) {
			evs = append(evs, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": j,
				"function": map[string]any{"arguments": p}}}}, nil))
		}
	}
	evs = append(evs, chunk(map[string]any{}, openAIStops.of(r)))
	if includeUsage {
		evs = append(evs, sseJSON("", map[string]any{"id": id, "object": "chat.completion.chunk", "choices": []any{},
			"usage": r.usage(model.APIOpenAI, true)}))
	}
	return append(evs, sseEvent{data: "[DONE]"})
}

func anthropicEvents(i int, r *Reply) []sseEvent {
	ev := func(typ string, fields map[string]any) sseEvent {
		fields["type"] = typ
		return sseJSON(typ, fields)
	}
	evs := []sseEvent{
		ev("message_start", map[string]any{"message": map[string]any{"id": fmt.Sprintf("msg_%d", i+1), "type": "message",
			"role": "assistant", "content": []any{}, "model": "fake-model", "stop_reason": nil,
			"usage": r.usage(model.APIAnthropic, false)}}),
		ev("ping", map[string]any{}),
	}
	idx := 0
	if r.Text != "" {
		evs = append(evs, ev("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "text", "text": ""}}))
		for _, p := range pieces(r.Text) {
			evs = append(evs, ev("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "text_delta", "text": p}}))
		}
		evs = append(evs, ev("content_block_stop", map[string]any{"index": idx}))
		idx++
	}
	for _, c := range r.ToolCalls {
		evs = append(evs, ev("content_block_start", map[string]any{"index": idx,
			"content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}}))
		for _, p := range pieces(string(anthropicInput(c.Arguments))) {
			evs = append(evs, ev("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}}))
		}
		evs = append(evs, ev("content_block_stop", map[string]any{"index": idx}))
		idx++
	}
	evs = append(evs,
		ev("message_delta", map[string]any{"delta": map[string]any{"stop_reason": anthropicStops.of(r), "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": r.OutputTokens}}),
		ev("message_stop", map[string]any{}))
	return evs
}
