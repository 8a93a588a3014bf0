package claude

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fullsend-ai/fullsend/internal/hooks"
	"github.com/fullsend-ai/fullsend/internal/runtime"
)

// Parser turns Claude Code's stream-json output (`--output-format
// stream-json --verbose --include-partial-messages --include-hook-events`,
// one JSON object per line) into normalised events and an Outcome. It
// follows what the CLI 2.1 really prints (testdata/real-*/ holds captures):
//
//	system    subtype init: session id, model, tools (EventInfo "init");
//	          api_retry: EventInfo with the attempt, status and wait;
//	          hook_response: a hook's answer: a deny or block (or a hook
//	          that exited 2) is an EventVerdict named after the fullsend
//	          hook (hooks.Tag in the answer) or the CLI's hook name;
//	          status and hook_started are ignored; others are EventInfo
//	assistant message.content[]: text → EventText, tool_use → EventToolCall.
//	          The CLI prints one line per content block, each with the usage
//	          of message_start (output_tokens 1), so a new message.id is a
//	          new turn (EventTurn) and its usage comes from the partial
//	          message's message_delta. The CLI's own "<synthetic>" messages
//	          (an API error it gave up on) are not turns: their text is an
//	          EventError.
//	stream_event  message_delta: EventUsage of that message's turn (input
//	          tokens of message_start, output tokens of message_delta);
//	          other partial-message events are ignored
//	user      message.content[] tool_result → EventToolResult (IsError from
//	          is_error); the echoed prompt is ignored
//	result    subtype success | error_max_turns | error_during_execution | …,
//	          is_error, api_error_status, total_cost_usd, usage → Outcome,
//	          EventUsage (totals) and EventResult; permission_denials not
//	          already reported by a hook_response → EventVerdict
//
// Turns are counted from the model's messages, not from the result's
// num_turns (which counts a turn the turn limit refused). Other types
// (rate_limit_event, …) are ignored. A line that is not JSON produces an
// EventError and parsing continues. The zero Parser is not usable; call
// NewParser.
type Parser struct {
	emit      func(runtime.Event)
	now       func() time.Time
	out       runtime.Outcome
	msgs      map[string]*turnInfo // message id → turn
	toolNames map[string]string
	verdicts  map[string]bool // tool_use_id of calls with a verdict
	sawResult bool
	model     string
}

type turnInfo struct {
	n       int
	input   int64
	counted bool // usage event sent
}

// NewParser returns a parser sending events to emit (may be nil).
func NewParser(emit func(runtime.Event)) *Parser {
	if emit == nil {
		emit = func(runtime.Event) {}
	}
	return &Parser{emit: emit, now: time.Now, msgs: map[string]*turnInfo{}, toolNames: map[string]string{}, verdicts: map[string]bool{}}
}

type streamMsg struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype"`
	SessionID string          `json:"session_id"`
	Message   json.RawMessage `json:"message"`
	Error     string          `json:"error"`
	ParentID  *string         `json:"parent_tool_use_id"`

	// system init
	Model   string   `json:"model"`
	Tools   []string `json:"tools"`
	Cwd     string   `json:"cwd"`
	Version string   `json:"claude_code_version"`

	// system api_retry
	Attempt     int    `json:"attempt"`
	MaxRetries  int    `json:"max_retries"`
	RetryDelay  int64  `json:"retry_delay_ms"`
	ErrorStatus *int   `json:"error_status"`
	HookName    string `json:"hook_name"`
	HookEvent   string `json:"hook_event"`
	Stdout      string `json:"stdout"`
	Stderr      string `json:"stderr"`
	ExitCode    *int   `json:"exit_code"`

	// assistant
	APIError bool `json:"is_api_error_message"`

	// stream_event
	Event        json.RawMessage `json:"event"`
	APIMessageID string          `json:"api_message_id"`

	// result
	IsError        bool     `json:"is_error"`
	Result         string   `json:"result"`
	TotalCostUSD   float64  `json:"total_cost_usd"`
	Usage          *usage   `json:"usage"`
	Errors         []string `json:"errors"`
	APIErrorStatus *int     `json:"api_error_status"`
	TerminalReason string   `json:"terminal_reason"`
	Denials        []struct {
		ToolName  string          `json:"tool_name"`
		ToolUseID string          `json:"tool_use_id"`
		ToolInput json.RawMessage `json:"tool_input"`
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

// syntheticModel is the model name of messages the CLI makes up itself.
const syntheticModel = "<synthetic>"

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
	case "stream_event":
		p.streamEvent(&m)
	case "user":
		p.user(&m)
	case "result":
		p.result(&m)
	}
}

func (p *Parser) system(m *streamMsg) {
	switch m.Subtype {
	case "init":
		p.model = m.Model
		p.send(runtime.Event{Kind: runtime.EventInfo, Name: "init",
			Text: fmt.Sprintf("Claude Code %s, session %s, model %s, %d tools, cwd %s", m.Version, m.SessionID, m.Model, len(m.Tools), m.Cwd)})
	case "api_retry":
		status := "a connection error"
		if m.ErrorStatus != nil {
			status = fmt.Sprintf("HTTP %d", *m.ErrorStatus)
		}
		text := fmt.Sprintf("model API attempt %d of %d failed with %s", m.Attempt, m.MaxRetries, status)
		if m.Error != "" {
			text += " (" + m.Error + ")"
		}
		text += fmt.Sprintf("; retrying in %d ms", m.RetryDelay)
		p.send(runtime.Event{Kind: runtime.EventInfo, Name: "api_retry", Text: text})
	case "hook_response":
		p.hookResponse(m)
	case "status", "hook_started":
	default:
		p.send(runtime.Event{Kind: runtime.EventInfo, Name: m.Subtype})
	}
}

// hookResponse records a blocking hook answer as a verdict.
func (p *Parser) hookResponse(m *streamMsg) {
	a := hooks.ParseAnswer(m.Stdout)
	failed := m.ExitCode != nil && *m.ExitCode == 2 // a hook that could not decide blocks
	if !a.Block && !failed {
		return
	}
	name, rule, reason := a.Tag.Hook, a.Tag.Rule, a.Reason
	if name == "" {
		name = m.HookName // a hook of the target repository, or an untagged one
	}
	if failed && !a.Block {
		rule, reason = "hook.error", strings.TrimSpace(m.Stderr)
		if reason == "" {
			reason = "the hook exited 2 (blocks)"
		}
	}
	if rule == "" {
		rule = strings.ToLower(m.HookEvent) + ".block"
	}
	if a.Tag.ToolUseID != "" {
		p.verdicts[a.Tag.ToolUseID] = true
	}
	p.send(runtime.VerdictEvent(name, m.HookEvent, a.Tag.Tool, a.Tag.ToolUseID, rule, reason, p.out.Turns))
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
	bs, text := blocks(msg.Content)
	if msg.Model == syntheticModel || m.APIError {
		// The CLI's own stand-in message (an API error, an interruption):
		// no model turn.
		for _, b := range bs {
			if b.Type == "text" && b.Text != "" {
				text = b.Text
			}
		}
		if text == "" {
			text = m.Error
		}
		p.send(runtime.Event{Kind: runtime.EventError, Name: firstNonEmpty(m.Error, "synthetic"), IsError: true, Text: text})
		return
	}
	if msg.ID == "" || p.msgs[msg.ID] == nil {
		p.out.Turns++
		ti := &turnInfo{n: p.out.Turns}
		if msg.Usage != nil {
			ti.input = msg.Usage.input()
		}
		if msg.ID != "" {
			p.msgs[msg.ID] = ti
		}
		p.send(runtime.Event{Kind: runtime.EventTurn, Turn: p.out.Turns, Name: msg.Model})
	}
	if m.Error != "" {
		p.send(runtime.Event{Kind: runtime.EventError, Name: m.Error, IsError: true, Text: "assistant error: " + m.Error})
		p.out.Errors = append(p.out.Errors, "assistant error: "+m.Error)
	}
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

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// streamEvent takes the final usage of a message from its message_delta.
func (p *Parser) streamEvent(m *streamMsg) {
	var ev struct {
		Type  string `json:"type"`
		Usage *usage `json:"usage"`
	}
	if json.Unmarshal(m.Event, &ev) != nil || ev.Type != "message_delta" || ev.Usage == nil {
		return
	}
	ti := p.msgs[m.APIMessageID]
	if ti == nil || ti.counted {
		return
	}
	ti.counted = true
	in := ti.input
	if u := ev.Usage.input(); u > 0 {
		in = u
	}
	p.send(runtime.Event{Kind: runtime.EventUsage, Turn: ti.n, InputTokens: in, OutputTokens: ev.Usage.OutputTokens})
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
	p.out.CostUSD = m.TotalCostUSD
	if m.Usage != nil {
		p.out.InputTokens = m.Usage.input()
		p.out.OutputTokens = m.Usage.OutputTokens
		p.out.CacheReadInputTokens = m.Usage.CacheReadInputTokens
		p.out.CacheCreationInputTokens = m.Usage.CacheCreationInputTokens
	}
	switch {
	case m.Subtype == "success" && !m.IsError:
		p.out.StopReason = runtime.StopCompleted
	case m.Subtype == "error_max_turns" || m.TerminalReason == "max_turns":
		p.out.StopReason = runtime.StopMaxTurns
	default:
		p.out.StopReason = runtime.StopError
	}
	if p.out.StopReason != runtime.StopCompleted {
		msg := resultError(m)
		p.out.Errors = append(p.out.Errors, msg)
		p.send(runtime.Event{Kind: runtime.EventError, Name: firstNonEmpty(m.TerminalReason, m.Subtype), Text: msg, IsError: true})
	}
	for _, d := range m.Denials {
		if d.ToolUseID != "" && p.verdicts[d.ToolUseID] {
			continue
		}
		p.verdicts[d.ToolUseID] = true
		p.send(runtime.Event{Kind: runtime.EventVerdict, Name: "permission_denial", ID: d.ToolUseID, Rule: "permission.denied", IsError: true,
			Text: fmt.Sprintf("Claude Code denied the call of %s: %s", d.ToolName, toolInputText(d.ToolName, d.ToolInput)), Turn: p.out.Turns})
	}
	p.send(runtime.Event{Kind: runtime.EventUsage, Turn: p.out.Turns, InputTokens: p.out.InputTokens,
		OutputTokens: p.out.OutputTokens, CostUSD: p.out.CostUSD, Name: "total",
		CacheReadInputTokens: p.out.CacheReadInputTokens, CacheCreationInputTokens: p.out.CacheCreationInputTokens})
	p.send(runtime.Event{Kind: runtime.EventResult, Name: p.out.StopReason, Text: m.Result, IsError: m.IsError,
		Turn: p.out.Turns, InputTokens: p.out.InputTokens, OutputTokens: p.out.OutputTokens, CostUSD: p.out.CostUSD,
		CacheReadInputTokens: p.out.CacheReadInputTokens, CacheCreationInputTokens: p.out.CacheCreationInputTokens})
}

// resultError words an unsuccessful result in one line.
func resultError(m *streamMsg) string {
	detail := strings.TrimSpace(m.Result)
	if len(m.Errors) > 0 {
		detail = strings.Join(append([]string{detail}, m.Errors...), "; ")
		detail = strings.TrimPrefix(detail, "; ")
	}
	switch {
	case m.APIErrorStatus != nil || m.TerminalReason == "api_error":
		status := "no response"
		if m.APIErrorStatus != nil {
			status = fmt.Sprintf("HTTP %d", *m.APIErrorStatus)
		}
		return fmt.Sprintf("model API error (%s): %s", status, detail)
	case m.Subtype == "error_max_turns" || m.TerminalReason == "max_turns":
		return "turn limit reached: " + firstNonEmpty(detail, "maximum number of turns")
	case m.Subtype == "success":
		return "claude reported an error: " + firstNonEmpty(detail, m.TerminalReason)
	}
	return fmt.Sprintf("claude %s: %s", m.Subtype, firstNonEmpty(detail, m.TerminalReason))
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
