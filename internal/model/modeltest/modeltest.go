package modeltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/model"
)

// Reply is a successful model answer.
type Reply struct {
	Text      string
	ToolCalls []model.ToolCall // Arguments is sent verbatim (may be malformed)
	// Stop overrides the stop reason (default: tool_use when ToolCalls, else end).
	Stop model.StopReason
	// InputTokens is the dialect's own input count (prompt_tokens, which
	// includes cached tokens; input_tokens, which does not).
	InputTokens  int64
	OutputTokens int64
	// CacheReadTokens is sent as prompt_tokens_details.cached_tokens or
	// cache_read_input_tokens, CacheCreationTokens as
	// cache_creation_input_tokens (anthropic only); zero: not sent.
	CacheReadTokens, CacheCreationTokens int64
}

// usage is the wire usage object of r, without the output count when out
// is false (the anthropic message_start).
func (r *Reply) usage(api model.API, out bool) map[string]any {
	u := map[string]any{}
	if api == model.APIAnthropic {
		u["input_tokens"] = r.InputTokens
		if r.CacheReadTokens > 0 {
			u["cache_read_input_tokens"] = r.CacheReadTokens
		}
		if r.CacheCreationTokens > 0 {
			u["cache_creation_input_tokens"] = r.CacheCreationTokens
		}
		if out {
			u["output_tokens"] = r.OutputTokens
		} else {
			u["output_tokens"] = 1
		}
		return u
	}
	u["prompt_tokens"], u["completion_tokens"] = r.InputTokens, r.OutputTokens
	if r.CacheReadTokens > 0 {
		u["prompt_tokens_details"] = map[string]any{"cached_tokens": r.CacheReadTokens}
	}
	return u
}

// Step is one scripted exchange: a Reply, or a raw Status/Header/Body, or
// a Handler taking over the exchange. A Reply answers a request with
// "stream": true as server-sent events (see SetDeltaDelay), else as one
// JSON body.
type Step struct {
	Reply   *Reply
	Status  int
	Header  map[string]string
	Body    string
	Handler http.HandlerFunc
	// Fault is injected into a Reply streamed to a request that asked for
	// a stream (see Fault).
	Fault Fault
}

// Say is a Step replying with text only.
func Say(text string) Step { return Step{Reply: &Reply{Text: text, OutputTokens: 5}} }

// Call is a Step calling one tool with JSON args (marshalled from v unless v
// is a string, which is sent verbatim).
func Call(id, name string, v any) Step {
	return Step{Reply: &Reply{ToolCalls: []model.ToolCall{{ID: id, Name: name, Arguments: Args(v)}}, OutputTokens: 10}}
}

// Args marshals v (a string is returned verbatim).
func Args(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Status is a Step answering with an HTTP error status and headers.
func Status(code int, header map[string]string) Step {
	return Step{Status: code, Header: header, Body: `{"error":{"type":"rate_limit_error","message":"slow down"}}`}
}

// Received is one request as the server saw it.
type Received struct {
	Header http.Header
	Body   []byte
	// Decoded is the request converted back to the neutral form (System,
	// Messages, Tools, MaxTokens, Model), for assertions.
	Decoded model.Request
	// Stream and IncludeUsage: the request asked for a stream (and, for
	// openai, for the final usage chunk).
	Stream, IncludeUsage bool
	// CacheBreakpoints lists where the body carries a cache_control
	// object, as paths like "system[0]", "tools[3]",
	// "messages[2].content[1]", in document order. A request with more
	// than model.MaxCacheBreakpoints is answered 400, as the API does.
	CacheBreakpoints []string
}

// Server is a fake model API.
type Server struct {
	*httptest.Server
	API model.API
	t   testing.TB

	mu       sync.Mutex
	steps    []Step
	next     func(i int, r Received) Step
	received []Received
	served   int
	busy     time.Duration
	delay    time.Duration // before each streamed event
}

// HandlerTime is the total time spent inside the handler (the "model
// time" of the requests served so far, including request decoding).
func (s *Server) HandlerTime() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.busy
}

// New starts a server answering with steps in order; it is closed at the
// end of the test.
func New(t testing.TB, api model.API, steps ...Step) *Server {
	s := &Server{API: api, t: t, steps: steps}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Close)
	return s
}

// NewFunc starts a server computing each step from the request number
// (from 0) and the request.
func NewFunc(t testing.TB, api model.API, next func(i int, r Received) Step) *Server {
	s := &Server{API: api, t: t, next: next}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Close)
	return s
}

// Push appends steps to the script.
func (s *Server) Push(steps ...Step) {
	s.mu.Lock()
	s.steps = append(s.steps, steps...)
	s.mu.Unlock()
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

// Remaining is the number of scripted steps not yet served.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.steps) - s.served
}

// Config returns a model.Config pointing at the server without auth.
func (s *Server) Config() model.Config {
	base := s.URL + "/v1"
	if s.API == model.APIAnthropic {
		base = s.URL
	}
	return model.Config{API: s.API, BaseURL: base, Model: "fake-model", Auth: model.AuthNone}
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	defer func() {
		d := time.Since(start)
		s.mu.Lock()
		s.busy += d
		s.mu.Unlock()
	}()
	want := "/v1/chat/completions"
	if s.API == model.APIAnthropic {
		want = "/v1/messages"
	}
	if r.Method != http.MethodPost || r.URL.Path != want {
		s.t.Errorf("modeltest: unexpected %s %s (want POST %s)", r.Method, r.URL.Path, want)
		http.Error(w, "wrong endpoint", http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	rec := Received{Header: r.Header.Clone(), Body: body}
	var err error
	if s.API == model.APIAnthropic {
		rec.Decoded, err = decodeAnthropicRequest(body)
	} else {
		rec.Decoded, err = decodeOpenAIRequest(body)
	}
	if err == nil {
		rec.Stream, rec.IncludeUsage, err = decodeStreamFlags(body)
	}
	if err == nil {
		rec.CacheBreakpoints, err = cacheBreakpoints(body)
	}
	if err != nil {
		s.t.Errorf("modeltest: undecodable request: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if len(rec.CacheBreakpoints) > model.MaxCacheBreakpoints {
		s.mu.Lock()
		s.received = append(s.received, rec)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":"A maximum of %d blocks with cache_control may be provided. Found %d."}}`,
			model.MaxCacheBreakpoints, len(rec.CacheBreakpoints))
		return
	}
	s.mu.Lock()
	i := len(s.received)
	s.received = append(s.received, rec)
	var step Step
	ok := true
	if s.next != nil {
		s.mu.Unlock()
		step = s.next(i, rec)
		s.mu.Lock()
	} else if s.served < len(s.steps) {
		step = s.steps[s.served]
		s.served++
	} else {
		ok = false
	}
	s.mu.Unlock()
	if !ok {
		s.t.Errorf("modeltest: request %d beyond the script", i+1)
		http.Error(w, "script exhausted", http.StatusInternalServerError)
		return
	}
	switch {
	case step.Handler != nil:
		step.Handler(w, r)
	case step.Reply != nil && rec.Stream:
		s.stream(w, i, step, rec.IncludeUsage)
	case step.Reply != nil:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("request-id", fmt.Sprintf("req_%d", i+1))
		for k, v := range step.Header {
			w.Header().Set(k, v)
		}
		if s.API == model.APIAnthropic {
			_, _ = w.Write(anthropicReply(i, step.Reply))
		} else {
			_, _ = w.Write(openAIReply(i, step.Reply))
		}
	default:
		for k, v := range step.Header {
			w.Header().Set(k, v)
		}
		code := step.Status
		if code == 0 {
			code = http.StatusOK
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, step.Body)
	}
}

func openAIReply(i int, r *Reply) []byte {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type tc struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	msg := map[string]any{"role": "assistant", "content": nil}
	if r.Text != "" {
		msg["content"] = r.Text
	}
	var calls []tc
	for _, c := range r.ToolCalls {
		calls = append(calls, tc{ID: c.ID, Type: "function", Function: fn{Name: c.Name, Arguments: c.Arguments}})
	}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	finish := openAIStops.of(r)
	b, _ := json.Marshal(map[string]any{
		"id":      fmt.Sprintf("chatcmpl-%d", i+1),
		"object":  "chat.completion",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   r.usage(model.APIOpenAI, true),
	})
	return b
}

// wireStops names the stop reasons of one dialect.
type wireStops struct{ end, toolUse, maxTokens, other string }

var (
	openAIStops    = wireStops{end: "stop", toolUse: "tool_calls", maxTokens: "length", other: "content_filter"}
	anthropicStops = wireStops{end: "end_turn", toolUse: "tool_use", maxTokens: "max_tokens", other: "refusal"}
)

// of is the stop reason sent for r: its Stop when set, else tool use when
// it calls tools, else end.
func (n wireStops) of(r *Reply) string {
	switch {
	case r.Stop == model.StopMaxTokens:
		return n.maxTokens
	case r.Stop == model.StopOther:
		return n.other
	case r.Stop == model.StopEnd:
		return n.end
	case len(r.ToolCalls) > 0:
		return n.toolUse
	}
	return n.end
}

// anthropicInput is the tool_use input sent for arguments: the compact
// JSON when they are valid JSON, else the arguments as a JSON string.
func anthropicInput(args string) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(args)) == nil {
		return buf.Bytes()
	}
	b, _ := json.Marshal(args)
	return b
}

func decodeStreamFlags(body []byte) (stream, includeUsage bool, err error) {
	var in struct {
		Stream        bool `json:"stream"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return false, false, err
	}
	return in.Stream, in.StreamOptions != nil && in.StreamOptions.IncludeUsage, nil
}

func anthropicReply(i int, r *Reply) []byte {
	var content []map[string]any
	if r.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": r.Text})
	}
	for _, c := range r.ToolCalls {
		in := anthropicInput(c.Arguments)
		content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": in})
	}
	if content == nil {
		content = []map[string]any{}
	}
	stop := anthropicStops.of(r)
	b, _ := json.Marshal(map[string]any{
		"id": fmt.Sprintf("msg_%d", i+1), "type": "message", "role": "assistant",
		"content": content, "stop_reason": stop,
		"usage": r.usage(model.APIAnthropic, true),
	})
	return b
}

func decodeOpenAIRequest(body []byte) (model.Request, error) {
	var in struct {
		Model    string `json:"model"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Function model.ToolSpec `json:"function"`
		} `json:"tools"`
		MaxTokens int `json:"max_tokens"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return model.Request{}, err
	}
	out := model.Request{Model: in.Model, MaxTokens: in.MaxTokens}
	for _, t := range in.Tools {
		out.Tools = append(out.Tools, t.Function)
	}
	for _, m := range in.Messages {
		blocks, err := oaBlocks(m.Content)
		if err != nil {
			return out, err
		}
		if m.Role == "system" {
			out.System = concatText(blocks)
			continue
		}
		nm := model.Message{Role: model.Role(m.Role), Content: blocks, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			nm.ToolCalls = append(nm.ToolCalls, model.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		out.Messages = append(out.Messages, nm)
	}
	return out, nil
}

func oaBlocks(raw json.RawMessage) ([]model.Block, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []model.Block{model.TextBlock(s)}, nil
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, err
	}
	var out []model.Block
	for _, p := range parts {
		switch p.Type {
		case "text":
			out = append(out, model.TextBlock(p.Text))
		case "image_url":
			mt, data, _ := strings.Cut(strings.TrimPrefix(p.ImageURL.URL, "data:"), ";base64,")
			out = append(out, model.Block{Type: model.BlockImage, MediaType: mt, Data: data})
		}
	}
	return out, nil
}

func decodeAnthropicRequest(body []byte) (model.Request, error) {
	type block struct {
		Type   string `json:"type"`
		Text   string `json:"text"`
		Source struct {
			MediaType string `json:"media_type"`
			Data      string `json:"data"`
		} `json:"source"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
		IsError   bool            `json:"is_error"`
	}
	var in struct {
		Model     string          `json:"model"`
		MaxTokens int             `json:"max_tokens"`
		System    json.RawMessage `json:"system"` // a string or text blocks
		Messages  []struct {
			Role    string  `json:"role"`
			Content []block `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return model.Request{}, err
	}
	out := model.Request{Model: in.Model, MaxTokens: in.MaxTokens}
	if len(in.System) > 0 && in.System[0] == '"' {
		if err := json.Unmarshal(in.System, &out.System); err != nil {
			return out, err
		}
	} else if len(in.System) > 0 && string(in.System) != "null" {
		var sys []block
		if err := json.Unmarshal(in.System, &sys); err != nil {
			return out, fmt.Errorf("system: %v", err)
		}
		for _, b := range sys {
			if b.Type != "text" {
				return out, fmt.Errorf("system: block of type %q", b.Type)
			}
			out.System += b.Text
		}
	}
	for _, t := range in.Tools {
		out.Tools = append(out.Tools, model.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
	}
	conv := func(b block) (model.Block, bool) {
		switch b.Type {
		case "text":
			return model.TextBlock(b.Text), true
		case "image":
			return model.Block{Type: model.BlockImage, MediaType: b.Source.MediaType, Data: b.Source.Data}, true
		}
		return model.Block{}, false
	}
	for _, m := range in.Messages {
		cur := model.Message{Role: model.Role(m.Role)}
		for _, b := range m.Content {
			switch b.Type {
			case "tool_use":
				cur.ToolCalls = append(cur.ToolCalls, model.ToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
			case "tool_result":
				tm := model.Message{Role: model.RoleTool, ToolCallID: b.ToolUseID, IsError: b.IsError}
				var inner []block
				if len(b.Content) > 0 && b.Content[0] == '[' {
					if err := json.Unmarshal(b.Content, &inner); err != nil {
						return out, err
					}
				}
				for _, ib := range inner {
					if nb, ok := conv(ib); ok {
						tm.Content = append(tm.Content, nb)
					}
				}
				out.Messages = append(out.Messages, tm)
			default:
				if nb, ok := conv(b); ok {
					cur.Content = append(cur.Content, nb)
				}
			}
		}
		if len(cur.Content) > 0 || len(cur.ToolCalls) > 0 {
			out.Messages = append(out.Messages, cur)
		}
	}
	return out, nil
}

// cacheBreakpoints returns the paths of the objects of body that carry a
// cache_control key, in document order.
func cacheBreakpoints(body []byte) ([]string, error) {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, err
	}
	var out []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if _, ok := x["cache_control"]; ok {
				out = append(out, path)
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool {
				return keyRank(keys[i]) < keyRank(keys[j]) || keyRank(keys[i]) == keyRank(keys[j]) && keys[i] < keys[j]
			})
			for _, k := range keys {
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(p, x[k])
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		}
	}
	walk("", v)
	return out, nil
}

// keyRank orders the top-level keys as the API reads the prefix: tools,
// system, messages.
func keyRank(k string) int {
	switch k {
	case "tools":
		return 0
	case "system":
		return 1
	case "messages":
		return 2
	}
	return 3
}

func concatText(bs []model.Block) string {
	var b strings.Builder
	for _, x := range bs {
		b.WriteString(x.Text)
	}
	return b.String()
}

// LastToolResult returns the text of the last tool message of the request
// and whether it was marked as an error (openai has no error flag: false).
func (r Received) LastToolResult() (string, bool) {
	for i := len(r.Decoded.Messages) - 1; i >= 0; i-- {
		m := r.Decoded.Messages[i]
		if m.Role == model.RoleTool {
			return m.Text(), m.IsError
		}
	}
	return "", false
}
