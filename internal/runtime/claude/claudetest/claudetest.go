// Package claudetest is a fake Anthropic Messages API on loopback for tests
// that run the real Claude Code CLI: POST /v1/messages answered as a
// streamed (server-sent events) or plain JSON message, from a script of
// turns. It owns no production behaviour.
//
// Each request that offers tools is one turn of the agent's loop and takes
// the next scripted Turn (New) or asks a function (NewFunc); a request
// without tools (a side request of the CLI) gets a short text answer and
// does not consume the script. A Turn is text and tool calls, an HTTP
// error with an Anthropic error body, or Hold: the answer never comes until
// the client goes away or the test ends (a model slower than the run's
// timeout). Every request is kept, decoded, for assertions.
//
// Handlers report script problems with t.Errorf and an HTTP error, never
// t.Fatal: they run on server goroutines. The server listens on 127.0.0.1
// only.
package claudetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Turn is one scripted model answer.
type Turn struct {
	Text  string
	Tools []ToolUse
	// Stop is the stop reason (default: tool_use with Tools, else end_turn).
	Stop         string
	InputTokens  int64 // default 100
	OutputTokens int64 // default 20
	// Status, when non-zero, answers with this HTTP status and an Anthropic
	// error body of ErrType / ErrMessage instead of a message.
	Status     int
	ErrType    string
	ErrMessage string
	Header     map[string]string
	// Hold never answers: the request stays open until the client goes
	// away or the test ends.
	Hold bool
}

// ToolUse is one tool call of a Turn; Input is marshalled to JSON.
type ToolUse struct {
	ID    string
	Name  string
	Input any
}

// Say is a Turn answering with text only.
func Say(text string) Turn { return Turn{Text: text} }

// Use is a Turn calling one tool.
func Use(id, name string, input any) Turn {
	return Turn{Tools: []ToolUse{{ID: id, Name: name, Input: input}}}
}

// Bash is a Turn running one shell command.
func Bash(id, command string) Turn {
	return Use(id, "Bash", map[string]string{"command": command, "description": "run " + id})
}

// Write is a Turn writing a file with the Write tool.
func Write(id, path, content string) Turn {
	return Use(id, "Write", map[string]string{"file_path": path, "content": content})
}

// Fail is a Turn answering with an HTTP error.
func Fail(status int, errType, msg string) Turn {
	return Turn{Status: status, ErrType: errType, ErrMessage: msg}
}

// Request is one request as the server saw it.
type Request struct {
	Path      string
	Header    http.Header
	Body      []byte
	Model     string
	Stream    bool
	MaxTokens int
	Tools     []string // names of the tools offered
	Messages  []Message
}

// Message is one conversation message of a request.
type Message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// Text flattens a message's content: text blocks, and tool_result
// contents, one per line.
func (m Message) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var blocks []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(m.Content, &blocks)
	var parts []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "tool_result":
			parts = append(parts, Message{Content: b.Content}.Text())
		}
	}
	return strings.Join(parts, "\n")
}

// Transcript is the text of every message of the request, one per line.
func (r *Request) Transcript() string {
	var parts []string
	for _, m := range r.Messages {
		parts = append(parts, m.Role+": "+m.Text())
	}
	return strings.Join(parts, "\n")
}

// Server is the fake API. URL is its base URL (ANTHROPIC_BASE_URL).
type Server struct {
	*httptest.Server
	t    testing.TB
	stop chan struct{}

	mu     sync.Mutex
	script []Turn
	next   func(i int, r *Request) Turn
	reqs   []*Request
	turns  int
}

// New starts a server answering the agent's turns with script in order;
// it is closed at the end of the test.
func New(t testing.TB, script ...Turn) *Server {
	return start(t, script, nil)
}

// NewFunc starts a server computing each turn from its number (from 0) and
// the request.
func NewFunc(t testing.TB, next func(i int, r *Request) Turn) *Server {
	return start(t, nil, next)
}

func start(t testing.TB, script []Turn, next func(int, *Request) Turn) *Server {
	s := &Server{t: t, script: script, next: next, stop: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(func() {
		close(s.stop)
		s.CloseClientConnections()
		s.Close()
	})
	return s
}

// Addr is the server's "127.0.0.1:PORT".
func (s *Server) Addr() string { return s.Listener.Addr().String() }

// Requests returns the requests received so far.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.reqs...)
}

// Turns is the number of agent turns served so far.
func (s *Server) Turns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turns
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		// Side endpoints (token counting, …) are not part of the script.
		http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"not served by the fake"}}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var raw struct {
		Model     string                  `json:"model"`
		Stream    bool                    `json:"stream"`
		MaxTokens int                     `json:"max_tokens"`
		Messages  []Message               `json:"messages"`
		Tools     []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		s.t.Errorf("claudetest: undecodable request: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := &Request{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Model: raw.Model, Stream: raw.Stream, MaxTokens: raw.MaxTokens, Messages: raw.Messages}
	for _, tl := range raw.Tools {
		req.Tools = append(req.Tools, tl.Name)
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	n := len(s.reqs)
	var turn Turn
	ok := true
	if len(req.Tools) == 0 {
		turn = Say("ok")
	} else {
		i := s.turns
		s.turns++
		switch {
		case s.next != nil:
			s.mu.Unlock()
			turn = s.next(i, req)
			s.mu.Lock()
		case i < len(s.script):
			turn = s.script[i]
		default:
			ok = false
		}
	}
	s.mu.Unlock()
	if !ok {
		s.t.Errorf("claudetest: turn %d beyond the script of %d", s.Turns(), len(s.script))
		writeError(w, http.StatusBadRequest, "invalid_request_error", "claudetest: script exhausted")
		return
	}
	for k, v := range turn.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("request-id", fmt.Sprintf("req_fake_%d", n))
	switch {
	case turn.Hold:
		select {
		case <-r.Context().Done():
		case <-s.stop:
		}
	case turn.Status != 0:
		writeError(w, turn.Status, turn.ErrType, turn.ErrMessage)
	case req.Stream:
		s.stream(w, n, req, turn)
	default:
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(message(n, req, turn, true))
	}
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	if typ == "" {
		typ = "api_error"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
}

func (t Turn) tokens() (in, out int64) {
	in, out = t.InputTokens, t.OutputTokens
	if in == 0 {
		in = 100
	}
	if out == 0 {
		out = 20
	}
	return in, out
}

func (t Turn) stop() string {
	switch {
	case t.Stop != "":
		return t.Stop
	case len(t.Tools) > 0:
		return "tool_use"
	}
	return "end_turn"
}

func toolInput(v any) json.RawMessage {
	if v == nil {
		return json.RawMessage("{}")
	}
	if s, ok := v.(string); ok {
		return json.RawMessage(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// message is the whole (non-streamed) answer; final says whether usage
// and stop reason are the final ones.
func message(n int, req *Request, t Turn, final bool) map[string]any {
	in, out := t.tokens()
	content := []any{}
	if final {
		if t.Text != "" {
			content = append(content, map[string]any{"type": "text", "text": t.Text})
		}
		for _, u := range t.Tools {
			content = append(content, map[string]any{"type": "tool_use", "id": u.ID, "name": u.Name, "input": toolInput(u.Input)})
		}
	}
	m := map[string]any{
		"id": fmt.Sprintf("msg_fake_%d", n), "type": "message", "role": "assistant", "model": req.Model,
		"content": content, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": in, "output_tokens": 1},
	}
	if final {
		m["stop_reason"] = t.stop()
		m["usage"] = map[string]any{"input_tokens": in, "output_tokens": out}
	}
	return m
}

func (s *Server) stream(w http.ResponseWriter, n int, req *Request, t Turn) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	event := func(name string, v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if fl != nil {
			fl.Flush()
		}
	}
	event("message_start", map[string]any{"type": "message_start", "message": message(n, req, t, false)})
	idx := 0
	if t.Text != "" {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": t.Text}})
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	for _, u := range t.Tools {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "tool_use", "id": u.ID, "name": u.Name, "input": map[string]any{}}})
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(toolInput(u.Input))}})
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	_, out := t.tokens()
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": t.stop(), "stop_sequence": nil}, "usage": map[string]any{"output_tokens": out}})
	event("message_stop", map[string]any{"type": "message_stop"})
}
