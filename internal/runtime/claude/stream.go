package claude

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fullsend-ai/fullsend/internal/runtime"
)

// Parser turns Claude Code's stream-json output (`--output-format
// stream-json --verbose`, one JSON object per line) into normalised events
// and an Outcome. Message types handled:
//
//	system    subtype init: session id, model, tools (EventInfo "init");
//	          other subtypes: EventInfo named after the subtype
//	assistant message.content[]: text → EventText, tool_use → EventToolCall;
//	          a new message.id is a new turn (EventTurn, EventUsage once per
//	          message: Claude Code splits one message over several lines);
//	          an "error" field → EventError
//	user      message.content[] tool_result → EventToolResult (IsError from
//	          is_error); the echoed prompt is ignored
//	result    subtype success | error_max_turns | error_during_execution | …,
//	          is_error, num_turns, total_cost_usd, usage → Outcome, EventUsage
//	          (totals) and EventResult
//
// Other types (stream_event, rate_limit_event, …) are ignored. A line that is
// not JSON produces an EventError and parsing continues. The zero Parser is
// not usable; call NewParser.
type Parser struct {
	emit      func(runtime.Event)
	now       func() time.Time
	out       runtime.Outcome
	msgIDs    map[string]bool
	toolNames map[string]string
	sawResult bool
	model     string
}

// NewParser returns a parser sending events to emit (may be nil).
func NewParser(emit func(runtime.Event)) *Parser {
	if emit == nil {
		emit = func(runtime.Event) {}
	}
	return &Parser{emit: emit, now: time.Now, msgIDs: map[string]bool{}, toolNames: map[string]string{}}
}

type streamMsg struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype"`
	SessionID string          `json:"session_id"`
	Message   json.RawMessage `json:"message"`
	Error     string          `json:"error"`
	ParentID  *string         `json:"parent_tool_use_id"`

	// system init
	Model string   `json:"model"`
	Tools []string `json:"tools"`
	Cwd   string   `json:"cwd"`

	// result
	IsError      bool     `json:"is_error"`
	NumTurns     int      `json:"num_turns"`
	Result       string   `json:"result"`
	TotalCostUSD float64  `json:"total_cost_usd"`
	Usage        *usage   `json:"usage"`
	Errors       []string `json:"errors"`
	DurationMS   int64    `json:"duration_ms"`
	Denials      []struct {
		ToolName string `json:"tool_name"`
	} `json:"permission_denials"`
}

type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// input counts every prompt token the model processed, cached or not.
func (u *usage) input() int64 {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

type apiMessage struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Usage   *usage          `json:"usage"`
}

type contentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func (p *Parser) send(e runtime.Event) {
	e.Time = p.now()
	e.Text = runtime.Truncate(e.Text)
	p.emit(e)
}

// Line parses one line of output. Empty lines are skipped.
func (p *Parser) Line(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	var m streamMsg
	if err := json.Unmarshal(line, &m); err != nil || m.Type == "" {
		p.send(runtime.Event{Kind: runtime.EventError, Name: "unparsed", Text: string(line), IsError: true})
		return
	}
	if m.SessionID != "" && p.out.SessionID == "" {
		p.out.SessionID = m.SessionID
	}
	switch m.Type {
	case "system":
		p.system(&m)
	case "assistant":
		p.assistant(&m)
	case "user":
		p.user(&m)
	case "result":
		p.result(&m)
	}
}

func (p *Parser) system(m *streamMsg) {
	if m.Subtype == "init" {
		p.model = m.Model
		p.send(runtime.Event{Kind: runtime.EventInfo, Name: "init",
			Text: fmt.Sprintf("session %s, model %s, %d tools, cwd %s", m.SessionID, m.Model, len(m.Tools), m.Cwd)})
		return
	}
	p.send(runtime.Event{Kind: runtime.EventInfo, Name: m.Subtype})
}

func blocks(raw json.RawMessage) ([]contentBlock, string) {
	if len(raw) == 0 {
		return nil, ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return nil, s
	}
	var bs []contentBlock
	_ = json.Unmarshal(raw, &bs)
	return bs, ""
}

func (p *Parser) assistant(m *streamMsg) {
	var msg apiMessage
	_ = json.Unmarshal(m.Message, &msg)
	if msg.ID == "" || !p.msgIDs[msg.ID] {
		if msg.ID != "" {
			p.msgIDs[msg.ID] = true
		}
		p.out.Turns++
		p.send(runtime.Event{Kind: runtime.EventTurn, Turn: p.out.Turns, Name: msg.Model})
		if msg.Usage != nil {
			p.send(runtime.Event{Kind: runtime.EventUsage, Turn: p.out.Turns,
				InputTokens: msg.Usage.input(), OutputTokens: msg.Usage.OutputTokens})
		}
	}
	if m.Error != "" {
		p.send(runtime.Event{Kind: runtime.EventError, Name: m.Error, IsError: true, Text: "assistant error: " + m.Error})
		p.out.Errors = append(p.out.Errors, "assistant error: "+m.Error)
	}
	bs, text := blocks(msg.Content)
	if text != "" {
		p.send(runtime.Event{Kind: runtime.EventText, Text: text, Turn: p.out.Turns})
	}
	for _, b := range bs {
		switch b.Type {
		case "text":
			if b.Text != "" {
				p.send(runtime.Event{Kind: runtime.EventText, Text: b.Text, Turn: p.out.Turns})
			}
		case "tool_use", "server_tool_use":
			p.out.ToolCalls++
			p.toolNames[b.ID] = b.Name
			p.send(runtime.Event{Kind: runtime.EventToolCall, Name: b.Name, ID: b.ID, Text: toolInputText(b.Name, b.Input), Turn: p.out.Turns})
		}
	}
}

// toolInputText shows a Bash command as itself and other inputs as JSON.
func toolInputText(name string, in json.RawMessage) string {
	if name == "Bash" {
		var b struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(in, &b) == nil && b.Command != "" {
			return b.Command
		}
	}
	return string(in)
}

func (p *Parser) user(m *streamMsg) {
	var msg apiMessage
	_ = json.Unmarshal(m.Message, &msg)
	bs, _ := blocks(msg.Content)
	for _, b := range bs {
		if b.Type != "tool_result" {
			continue
		}
		p.send(runtime.Event{Kind: runtime.EventToolResult, ID: b.ToolUseID, Name: p.toolNames[b.ToolUseID],
			Text: resultText(b.Content), IsError: b.IsError, Turn: p.out.Turns})
	}
}

// resultText flattens tool_result content (a string or text blocks).
func resultText(raw json.RawMessage) string {
	bs, s := blocks(raw)
	if s != "" || len(bs) == 0 {
		return s
	}
	var parts []string
	for _, b := range bs {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		default:
			parts = append(parts, "["+b.Type+"]")
		}
	}
	return strings.Join(parts, "\n")
}

func (p *Parser) result(m *streamMsg) {
	p.sawResult = true
	if m.NumTurns > 0 {
		p.out.Turns = m.NumTurns
	}
	p.out.CostUSD = m.TotalCostUSD
	if m.Usage != nil {
		p.out.InputTokens = m.Usage.input()
		p.out.OutputTokens = m.Usage.OutputTokens
	}
	switch {
	case m.Subtype == "success" && !m.IsError:
		p.out.StopReason = runtime.StopCompleted
	case m.Subtype == "error_max_turns":
		p.out.StopReason = runtime.StopMaxTurns
	default:
		p.out.StopReason = runtime.StopError
	}
	if m.IsError || p.out.StopReason != runtime.StopCompleted {
		msg := m.Subtype
		if m.Result != "" {
			msg += ": " + m.Result
		}
		for _, e := range m.Errors {
			msg += "; " + e
		}
		p.out.Errors = append(p.out.Errors, "claude "+msg)
		p.send(runtime.Event{Kind: runtime.EventError, Name: m.Subtype, Text: "claude " + msg, IsError: true})
	}
	for _, d := range m.Denials {
		p.out.Errors = append(p.out.Errors, "permission denied: "+d.ToolName)
	}
	p.send(runtime.Event{Kind: runtime.EventUsage, Turn: p.out.Turns, InputTokens: p.out.InputTokens,
		OutputTokens: p.out.OutputTokens, CostUSD: p.out.CostUSD, Name: "total"})
	p.send(runtime.Event{Kind: runtime.EventResult, Name: p.out.StopReason, Text: m.Result, IsError: m.IsError,
		Turn: p.out.Turns, InputTokens: p.out.InputTokens, OutputTokens: p.out.OutputTokens, CostUSD: p.out.CostUSD})
}

// Outcome returns what was parsed so far; ok is false when no result
// message was seen (the CLI died or was killed).
func (p *Parser) Outcome() (runtime.Outcome, bool) {
	o := p.out
	o.Errors = append([]string(nil), p.out.Errors...)
	return o, p.sawResult
}

// lineWriter feeds complete lines to a parser as output arrives (events
// are live); Flush handles a last line without a newline. Lines are parsed
// whole however long: stream-json lines carry whole tool results.
type lineWriter struct {
	mu  sync.Mutex
	p   *Parser
	buf []byte
	raw *bytes.Buffer // every byte, for the transcript
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.raw != nil {
		w.raw.Write(b)
	}
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.p.Line(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	return len(b), nil
}

func (w *lineWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.p.Line(w.buf)
		w.buf = nil
	}
}
