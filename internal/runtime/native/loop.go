package native

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fullsend-ai/fullsend/internal/hooks"
	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// StopMaxTokens is the stop reason when the output-token budget ran out
// (runtime has no constant for it yet).
const StopMaxTokens = "max_tokens"

// Defaults of the loop bounds.
const (
	DefaultMaxTurns         = 50
	DefaultMaxOutputTokens  = 200_000
	DefaultMaxTokensPerCall = 8192
	DefaultWallTime         = 30 * time.Minute
	DefaultChildMaxTurns    = 20
	// MaxToolOutput bounds what the model sees of one tool output.
	MaxToolOutput = 32 << 10
)

// Limits bound one loop.
type Limits struct {
	MaxTurns         int           `json:"max_turns"`           // model calls
	MaxOutputTokens  int64         `json:"max_output_tokens"`   // sum over the loop
	MaxTokensPerCall int           `json:"max_tokens_per_call"` // per model call
	WallTime         time.Duration `json:"wall_time"`
	// CompactTokens: when a model call's input reaches it, older turns
	// are compacted before the next one (compact.go); 0: never.
	CompactTokens int64 `json:"compact_tokens,omitempty"`
}

func (l Limits) withDefaults() Limits {
	if l.MaxTurns <= 0 {
		l.MaxTurns = DefaultMaxTurns
	}
	if l.MaxOutputTokens <= 0 {
		l.MaxOutputTokens = DefaultMaxOutputTokens
	}
	if l.MaxTokensPerCall <= 0 {
		l.MaxTokensPerCall = DefaultMaxTokensPerCall
	}
	if l.WallTime <= 0 {
		l.WallTime = DefaultWallTime
	}
	return l
}

// Completer is the model port of the loop (*model.Client implements it).
type Completer interface {
	Complete(ctx context.Context, req *model.Request) (*model.Response, error)
}

// loop runs one conversation against the model, executing tool calls in
// the sandbox session. It is not safe for concurrent use.
type loop struct {
	client  Completer
	model   model.Config
	sess    sandbox.Session
	rd      *runDir
	tr      *transcript
	st      *State
	limits  Limits
	tools   []*tool
	workDir string
	env     map[string]string
	emit    func(runtime.Event)
	redact  func(string) string
	guard   *guard
	skills  *SkillRegistry
	// parent data for tools
	rt       *Runtime
	depth    int
	children int
	// delegate_task (parallel.go): a child's share of its siblings' token
	// budget; the pool the children of the current turn draw from; results
	// of children run ahead, by call id; the turn's workspace copy.
	pool     *tokenPool
	turnPool *tokenPool
	ready    map[string]toolResult
	snapMu   sync.Mutex
	snapshot *snapshot
	// childMu serialises the verdicts of children running at once on
	// their way to emit (see childEmit).
	childMu sync.Mutex
	// callID is the model's id of the tool call running (set by runTool),
	// for the provenance records.
	callID string
	// noWorkspaceSnapshots: the loop takes no workspace snapshot (chat:
	// its sessions share one sandbox, which chat suspends as a whole).
	noWorkspaceSnapshots bool
}

// childEmit is what a child loop emits through: its verdicts reach the
// run's events (a child's security stop is the run's), one at a time; its
// other events stay in its own transcript.
func (l *loop) childEmit() func(runtime.Event) {
	if l.emit == nil || l.depth > 0 {
		return l.emit // nil, or already the forwarder of the top loop
	}
	return func(e runtime.Event) {
		if e.Kind != runtime.EventVerdict {
			return
		}
		l.childMu.Lock()
		defer l.childMu.Unlock()
		l.emit(e)
	}
}

// result is what a loop returns.
type result struct {
	stop  string
	final string // last assistant text
	err   error
}

func (l *loop) event(e runtime.Event) {
	if l.emit != nil {
		e.Text = runtime.Truncate(l.redact(e.Text))
		if e.Time.IsZero() {
			e.Time = time.Now()
		}
		l.emit(e)
	}
}

// Delta is one streamed piece of a model answer, passed to
// Options.OnDelta as it arrives (the API key already redacted). The
// transcript and the events are the same whether a call streamed or not:
// the assembled answer is recorded when the call ends.
type Delta struct {
	model.Delta
	Turn  int `json:"turn"`  // the turn being produced, from 1
	Depth int `json:"depth"` // 0: the main loop; 1 and more: delegate_task children
}

// request builds the next model request; with Options.OnDelta it streams.
func (l *loop) request(maxTok int) *model.Request {
	req := &model.Request{Model: l.model.Model, System: l.st.System, Messages: l.st.Messages, Tools: l.toolSpecs(), MaxTokens: maxTok}
	if l.rt != nil && l.rt.o.OnDelta != nil {
		fn, turn, depth := l.rt.o.OnDelta, l.st.Turns+1, l.depth
		req.OnDelta = func(d model.Delta) { fn(Delta{Delta: d, Turn: turn, Depth: depth}) }
	}
	return req
}

func (l *loop) toolSpecs() []model.ToolSpec {
	out := make([]model.ToolSpec, len(l.tools))
	for i, t := range l.tools {
		out[i] = t.spec
	}
	return out
}

func (l *loop) tool(name string) *tool {
	for _, t := range l.tools {
		if t.spec.Name == name {
			return t
		}
	}
	return nil
}

func (l *loop) toolNames() []string {
	out := make([]string, len(l.tools))
	for i, t := range l.tools {
		out[i] = t.spec.Name
	}
	return out
}

func (l *loop) addMessage(m model.Message, rec Record) error {
	l.st.Messages = append(l.st.Messages, m)
	l.st.noteToolFile(m, rec)
	rec.Type = RecMessage
	rec.Message = &m
	return l.tr.write(rec)
}

// run drives the conversation until the model stops calling tools or a
// bound is hit. ctx carries the wall-time deadline.
func (l *loop) run(ctx context.Context) result {
	// A run killed during tool execution: answer the unanswered calls.
	for _, tc := range pendingToolCalls(l.st.Messages) {
		l.st.ToolCalls++
		msg := model.Message{Role: model.RoleTool, ToolCallID: tc.ID, IsError: true, Content: []model.Block{model.TextBlock(
			"error: this tool call was interrupted when the runner stopped; it may or may not have taken effect. Check the current state before retrying it.")}}
		if err := l.addMessage(msg, Record{Turn: l.st.Turns, Tool: &ToolRecord{N: l.st.ToolCalls, Name: tc.Name}}); err != nil {
			return result{stop: runtime.StopError, err: err}
		}
	}
	for {
		if last := lastMessage(l.st.Messages); last != nil && last.Role == model.RoleAssistant && len(last.ToolCalls) == 0 {
			return result{stop: runtime.StopCompleted, final: last.Text()}
		}
		if l.st.Turns >= l.limits.MaxTurns {
			return result{stop: runtime.StopMaxTurns, err: fmt.Errorf("turn limit %d reached", l.limits.MaxTurns)}
		}
		remaining := l.remainingTokens()
		if remaining <= 0 {
			return result{stop: StopMaxTokens, err: fmt.Errorf("output token budget %d used up", l.limits.MaxOutputTokens)}
		}
		maxTok := l.limits.MaxTokensPerCall
		if int64(maxTok) > remaining {
			maxTok = int(remaining)
		}
		if err := ctx.Err(); err != nil {
			return l.ctxResult(ctx)
		}
		if l.shouldCompact() {
			if res, done := l.compact(ctx, maxTok); done {
				return res
			}
			continue // the bounds again: the summary was a model call
		}
		resp, err := l.client.Complete(ctx, l.request(maxTok))
		if err != nil {
			if ctx.Err() != nil {
				return l.ctxResult(ctx)
			}
			l.event(runtime.Event{Kind: runtime.EventError, Text: err.Error(), IsError: true})
			return result{stop: runtime.StopError, err: err}
		}
		l.st.Turns++
		l.st.Usage.Add(resp.Usage)
		l.st.LastInputTokens = resp.Usage.InputTokens
		l.pool.charge(resp.Usage.OutputTokens)
		msg := resp.Message
		msg.Role = model.RoleAssistant
		// Give every call a unique id (some local servers send none).
		seen := map[string]bool{}
		for i := range msg.ToolCalls {
			if msg.ToolCalls[i].ID == "" || seen[msg.ToolCalls[i].ID] {
				msg.ToolCalls[i].ID = "call_" + strconv.Itoa(l.st.Turns) + "_" + strconv.Itoa(i+1)
			}
			seen[msg.ToolCalls[i].ID] = true
		}
		usage := resp.Usage
		if err := l.addMessage(msg, Record{Turn: l.st.Turns, Usage: &usage, Stop: string(resp.StopReason), RequestID: resp.RequestID}); err != nil {
			return result{stop: runtime.StopError, err: err}
		}
		l.event(runtime.Event{Kind: runtime.EventTurn, Turn: l.st.Turns, Name: l.model.Model})
		l.event(runtime.Event{Kind: runtime.EventUsage, Turn: l.st.Turns, InputTokens: usage.InputTokens, OutputTokens: usage.OutputTokens,
			CacheReadInputTokens: usage.CacheReadInputTokens, CacheCreationInputTokens: usage.CacheCreationInputTokens})
		if t := msg.Text(); t != "" {
			l.event(runtime.Event{Kind: runtime.EventText, Turn: l.st.Turns, Text: t})
		}
		if len(msg.ToolCalls) == 0 {
			switch resp.StopReason {
			case model.StopMaxTokens:
				return result{stop: StopMaxTokens, final: msg.Text(), err: fmt.Errorf("model output cut at %d tokens (max tokens per call)", maxTok)}
			case model.StopOther:
				return result{stop: runtime.StopError, final: msg.Text(), err: fmt.Errorf("model stopped: %s", resp.RawStop)}
			}
			return result{stop: runtime.StopCompleted, final: msg.Text()}
		}
		if err := l.executeCalls(ctx, msg.ToolCalls); err != nil {
			if ctx.Err() != nil {
				return l.ctxResult(ctx)
			}
			return result{stop: runtime.StopError, err: err}
		}
		// The turn is over: keep the workspace as the tools left it
		// (unless they only read).
		if mayWrite(msg.ToolCalls) {
			if err := l.saveWorkspace(ctx); err != nil {
				return result{stop: runtime.StopError, err: err}
			}
		}
	}
}

func (l *loop) ctxResult(ctx context.Context) result {
	if errors.Is(context.Cause(ctx), errWallTime) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return result{stop: runtime.StopTimeout, err: fmt.Errorf("wall time %s exceeded", l.limits.WallTime)}
	}
	return result{stop: runtime.StopCanceled, err: ctx.Err()}
}

var errWallTime = errors.New("native: wall time exceeded")

func lastMessage(ms []model.Message) *model.Message {
	if len(ms) == 0 {
		return nil
	}
	return &ms[len(ms)-1]
}

// execute runs one tool call and appends its result. It returns an error
// only when the loop cannot go on (transcript write failure, cancellation);
// tool failures become error results the model sees.
func (l *loop) execute(ctx context.Context, tc model.ToolCall) (err error) {
	l.st.ToolCalls++
	n := l.st.ToolCalls
	start := time.Now()
	ctx, span := startTool(ctx, tc)
	var out toolResult
	var blocked string
	var postRules []string
	defer func() { l.endTool(span, tc, out, blocked, postRules, err) }()
	l.event(runtime.Event{Kind: runtime.EventToolCall, Name: tc.Name, ID: tc.ID, Text: tc.Arguments, Turn: l.st.Turns})
	t := l.tool(tc.Name)
	switch {
	case t == nil:
		out = errorf("unknown tool %q; available tools: %s", tc.Name, strings.Join(l.toolNames(), ", "))
	default:
		// The key never reaches the sandbox, even if the model produced it.
		args, err := parseArgs(l.redact(tc.Arguments))
		if err != nil {
			out = errorf("arguments of %s are not a JSON object: %v. Call the tool again with valid JSON arguments matching its schema.", tc.Name, err)
			break
		}
		if v := l.guard.pre(ctx, tc.Name, args); v.Block {
			blocked = v.Rule
			out = errorf("blocked by fullsend security check (%s): %s", v.Rule, v.Reason)
			l.event(runtime.VerdictEvent(v.Check, hooks.PreToolUse, tc.Name, tc.ID, v.Rule, v.Reason, l.st.Turns))
			break
		}
		out = l.runTool(ctx, t, n, tc.ID, args)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		stops := out.stops
		var post []stop
		out, post = l.guard.post(ctx, tc.Name, args, out)
		for _, v := range append(stops, post...) {
			postRules = append(postRules, v.Rule)
			l.event(runtime.VerdictEvent(v.Check, hooks.PostToolUse, tc.Name, tc.ID, v.Rule, v.Reason, l.st.Turns))
		}
	}
	full := out.text
	file, werr := l.rd.writeToolOutput(n, full)
	if werr != nil {
		file = ""
	}
	shown, truncated := bound(l.redact(full), MaxToolOutput, file)
	content := []model.Block{model.TextBlock(shown)}
	content = append(content, out.images...)
	msg := model.Message{Role: model.RoleTool, ToolCallID: tc.ID, IsError: out.isError, Content: content}
	rec := Record{Turn: l.st.Turns, Tool: &ToolRecord{N: n, Name: tc.Name, OutputFile: file, Bytes: len(full), Truncated: truncated, DurationMS: msSince(start), Blocked: blocked}}
	l.event(runtime.Event{Kind: runtime.EventToolResult, Name: tc.Name, ID: tc.ID, Text: shown, IsError: out.isError, Turn: l.st.Turns})
	return l.addMessage(msg, rec)
}

// guard applies the sandbox hook rules host-side: PreToolUse checks before a
// tool runs (a block becomes an error result), PostToolUse checks on its
// output (a secret finding withholds the output from the model; other
// findings prepend a notice).
type guard struct {
	pre_, post_ []hooks.Hook
	env         *hooks.Env
}

// newGuard selects the hooks; web are the run's web_fetch settings (nil:
// none), whose private ranges the SSRF hook then admits for web_fetch;
// canary is the run's canary token, which the canary hooks look for.
func newGuard(disabled, allowlist []string, web *webState, canary string) (*guard, error) {
	var optIn []string
	if len(allowlist) > 0 {
		optIn = []string{"tool-allowlist-pretool"}
	}
	hs, err := hooks.Select(disabled, optIn)
	if err != nil {
		return nil, err
	}
	g := &guard{env: &hooks.Env{Getenv: func(k string) string {
		if k == hooks.EnvCanaryToken {
			return canary
		}
		return ""
	}}}
	if web != nil {
		g.env.WebFetchPrivateNetworks = web.private
	}
	if len(allowlist) > 0 {
		g.env.ToolAllowlists = allowlist // each must permit a call
	}
	for _, h := range hs {
		if h.Event == hooks.PreToolUse {
			g.pre_ = append(g.pre_, h)
		} else {
			g.post_ = append(g.post_, h)
		}
	}
	return g, nil
}

// stop is a blocking verdict and the hook (Check) that gave it: each
// becomes an EventVerdict (runtime.VerdictEvent).
type stop struct {
	hooks.Verdict
	Check string
}

func (g *guard) pre(ctx context.Context, tool string, args map[string]any) stop {
	if g == nil {
		return stop{}
	}
	in := hookInput(hooks.PreToolUse, tool, args, nil)
	for _, h := range g.pre_ {
		v, err := h.Check(ctx, in, g.env)
		if err != nil {
			return stop{hooks.Verdict{Block: true, Rule: h.Name, Reason: "check failed: " + err.Error()}, h.Name}
		}
		if v.Block {
			return stop{v, h.Name}
		}
	}
	return stop{}
}

func (g *guard) post(ctx context.Context, tool string, args map[string]any, out toolResult) (toolResult, []stop) {
	if g == nil || out.text == "" {
		return out, nil
	}
	var stops []stop
	in := hookInput(hooks.PostToolUse, tool, args, &out.text)
	var notices []string
	for _, h := range g.post_ {
		v, err := h.Check(ctx, in, g.env)
		if err != nil {
			v = hooks.Verdict{Block: true, Rule: h.Name, Reason: "check failed: " + err.Error()}
		}
		if !v.Block {
			continue
		}
		stops = append(stops, stop{v, h.Name})
		if strings.HasPrefix(v.Rule, "secret.") || strings.HasPrefix(v.Rule, "canary.") {
			out.text = fmt.Sprintf("[output withheld by fullsend (%s): %s]", v.Rule, v.Reason)
			out.images = nil
			return out, stops
		}
		notices = append(notices, fmt.Sprintf("[fullsend security notice (%s): %s]", v.Rule, v.Reason))
	}
	if len(notices) > 0 {
		out.text = strings.Join(notices, "\n") + "\n" + out.text
	}
	return out, stops
}
