package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"sort"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/limit"
)

// Hook events of the Claude Code hook protocol this package implements.
const (
	PreToolUse  = "PreToolUse"
	PostToolUse = "PostToolUse"
)

// MaxInput bounds the hook payload read from stdin (tool responses can be
// large; anything beyond is refused, never truncated).
const MaxInput = 32 << 20

// Input is the JSON payload Claude Code writes on a command hook's stdin.
type Input struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolResponse   json.RawMessage `json:"tool_response"`
	ToolUseID      string          `json:"tool_use_id"`
	// ToolAliases are further Claude Code tool names the same call may be
	// permitted under by a tool allowlist (the native runtime sets them,
	// e.g. list_dir is LS or Glob). Never read from a payload.
	ToolAliases []string `json:"-"`
}

// Verdict is a hook's decision. The zero Verdict allows the tool call (or,
// after the call, lets the output through without comment).
type Verdict struct {
	Block  bool
	Rule   string // stable identifier of what matched, e.g. "ssrf.metadata"
	Reason string // shown to the model; never contains the offending secret
}

// TextScanner finds problems in text. It is the port through which the
// hooks use detectors that live elsewhere (internal/scan); nil scanners fall
// back to the small built-in rule sets of this package.
type TextScanner interface {
	ScanText(ctx context.Context, text string) ([]Finding, error)
}

// Finding is one TextScanner result.
type Finding struct {
	Rule    string
	Message string
}

// Env is what a hook sees of the outside world.
type Env struct {
	// Getenv reads the hook process environment (FULLSEND_TOOL_ALLOWLIST,
	// FULLSEND_CANARY_TOKEN, FULLSEND_ALLOWED_SERVICES).
	Getenv func(string) string
	// ToolAllowlists, when non-nil, are the tool allowlists in force (each
	// must permit a call) and FULLSEND_TOOL_ALLOWLIST is not read. The CLI
	// fills it from the hook's --allow arguments, the native runtime from
	// the agent definition.
	ToolAllowlists []string
	// Secrets, Injection and Unicode override the built-in detectors when
	// non-nil (NewEnv plugs in internal/scan).
	Secrets   TextScanner
	Injection TextScanner
	Unicode   TextScanner
	// WebFetchPrivateNetworks are internal ranges a WebFetch URL may name:
	// the native runtime's web_fetch fetches on the host through a client
	// that admits them (the org's allowed_private_networks), so the SSRF
	// check does not refuse what that client would fetch. Metadata
	// addresses stay refused; other tools get no exemption.
	WebFetchPrivateNetworks []netip.Prefix
}

func (e *Env) getenv(k string) string {
	if e == nil || e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

// Environment variables read by the hooks.
const (
	EnvToolAllowlist   = "FULLSEND_TOOL_ALLOWLIST"   // comma list, e.g. "Read,Grep,Bash(gh,jq)"
	EnvCanaryToken     = "FULLSEND_CANARY_TOKEN"     // comma list of canary tokens
	EnvAllowedServices = "FULLSEND_ALLOWED_SERVICES" // comma list of internal host:port the agent may reach
)

// Hook is one named check.
type Hook struct {
	Name    string // `fullsend hook <Name>`
	Event   string // PreToolUse or PostToolUse
	Matcher string // Claude Code matcher (regex over tool names) used in settings.json
	Summary string
	// OptIn hooks are installed only when configured (tool-allowlist).
	OptIn bool
	check func(ctx context.Context, in *Input, env *Env) (Verdict, error)
}

// Check runs the hook on in.
func (h Hook) Check(ctx context.Context, in *Input, env *Env) (Verdict, error) {
	return h.check(ctx, in, env)
}

var all = []Hook{
	{Name: "bash-risk-pretool", Event: PreToolUse, Matcher: "Bash|Write|Edit|MultiEdit|NotebookEdit",
		Summary: "blocks dangerous shell commands and edits of the hook configuration", check: checkBashRisk},
	{Name: "ssrf-pretool", Event: PreToolUse, Matcher: "Bash|WebFetch|mcp__.*",
		Summary: "blocks URLs and addresses pointing at internal networks or cloud metadata", check: checkSSRF},
	{Name: "tool-allowlist-pretool", Event: PreToolUse, Matcher: "*", OptIn: true,
		Summary: "blocks tools outside " + EnvToolAllowlist, check: checkAllowlist},
	{Name: "canary-pretool", Event: PreToolUse, Matcher: "*",
		Summary: "blocks tool calls carrying the canary token (exfiltration attempt)", check: checkCanaryPre},
	{Name: "canary-posttool", Event: PostToolUse, Matcher: "*",
		Summary: "flags tool output containing the canary token", check: checkCanaryPost},
	{Name: "secret-redact-posttool", Event: PostToolUse, Matcher: "*",
		Summary: "flags secrets in tool output", check: checkSecrets},
	{Name: "unicode-posttool", Event: PostToolUse, Matcher: "*",
		Summary: "flags bidi, tag and zero-width characters in tool output", check: checkUnicode},
	{Name: "context-suppress-posttool", Event: PostToolUse, Matcher: "*",
		Summary: "flags prompt-injection text in tool output", check: checkInjection},
}

// All returns every hook, in installation order.
func All() []Hook { return append([]Hook(nil), all...) }

// Names lists the hook names, sorted.
func Names() []string {
	n := make([]string, len(all))
	for i, h := range all {
		n[i] = h.Name
	}
	sort.Strings(n)
	return n
}

// Lookup finds a hook by name.
func Lookup(name string) (Hook, bool) {
	for _, h := range all {
		if h.Name == name {
			return h, true
		}
	}
	return Hook{}, false
}

// ErrUnknownHook is returned (wrapped) by Handle for an unknown hook name.
var ErrUnknownHook = errors.New("unknown hook")

// Handle reads one Claude Code hook payload from r, runs the named hook and
// writes the protocol response to w:
//
//   - allow: nothing is written (exit 0, Claude Code proceeds as usual);
//   - PreToolUse block: {"hookSpecificOutput":{"hookEventName":"PreToolUse",
//     "permissionDecision":"deny","permissionDecisionReason":…}} (exit 0);
//   - PostToolUse block: {"decision":"block","reason":…,"hookSpecificOutput":
//     {"hookEventName":"PostToolUse","additionalContext":…}} (exit 0). The tool
//     has already run; the model is told, the output cannot be rewritten.
//
// A returned error means the hook could not decide (unreadable payload,
// wrong event, unknown hook, scanner failure): the caller must exit 2 with
// the error on stderr, which Claude Code treats as a block (fail closed).
func Handle(ctx context.Context, name string, r io.Reader, w io.Writer, env *Env) (Verdict, error) {
	h, ok := Lookup(name)
	if !ok {
		return Verdict{}, fmt.Errorf("hook %q: %w (known: %s)", name, ErrUnknownHook, strings.Join(Names(), ", "))
	}
	in, err := ReadInput(r)
	if err != nil {
		return Verdict{}, fmt.Errorf("hook %s: %w", name, err)
	}
	if in.HookEventName != h.Event {
		return Verdict{}, fmt.Errorf("hook %s: payload is for event %q, hook handles %s", name, in.HookEventName, h.Event)
	}
	v, err := h.check(ctx, in, env)
	if err != nil {
		return Verdict{}, fmt.Errorf("hook %s: %w", name, err)
	}
	return respond(h, in, v, w)
}

// respond writes h's answer for a blocking verdict (nothing for an allow).
func respond(h Hook, in *Input, v Verdict, w io.Writer) (Verdict, error) {
	if !v.Block {
		return v, nil
	}
	out, err := TaggedResponse(h.Event, v, Tag{Hook: h.Name, Rule: v.Rule, Tool: in.ToolName, ToolUseID: in.ToolUseID})
	if err != nil {
		return Verdict{}, fmt.Errorf("hook %s: %w", h.Name, err)
	}
	if _, err := w.Write(out); err != nil {
		return Verdict{}, fmt.Errorf("hook %s: writing response: %w", h.Name, err)
	}
	return v, nil
}

// EachCommand is the `fullsend hook` subcommand that runs several hooks of
// one event in one process: `fullsend hook each NAME...`. Settings wires
// one such command per event, so a tool call costs one process per event
// instead of one per hook.
const EachCommand = "each"

// Matches reports whether the hook's matcher selects tool, as Claude Code
// reads a matcher: "*" (or empty) selects every tool, anything else is a
// regular expression that must match the whole tool name.
func (h Hook) Matches(tool string) (bool, error) {
	if h.Matcher == "" || h.Matcher == "*" {
		return true, nil
	}
	ok, err := regexp.MatchString("^(?:"+h.Matcher+")$", tool)
	if err != nil {
		return false, fmt.Errorf("hook %s: matcher %q: %w", h.Name, h.Matcher, err)
	}
	return ok, nil
}

// HandleEach reads one payload from r and runs every named hook whose
// matcher selects the payload's tool, in installation order, answering as
// Handle does. The first hook that blocks answers (tagged with its name) and
// the rest are not run; a hook that cannot decide makes the whole call fail
// (the caller exits 2, Claude Code blocks). All named hooks must handle the
// payload's event; unknown, repeated or mixed-event names are an error.
func HandleEach(ctx context.Context, names []string, r io.Reader, w io.Writer, env *Env) (Verdict, error) {
	if len(names) == 0 {
		return Verdict{}, errors.New("hook each: no hook named")
	}
	want := map[string]bool{}
	var event string
	for _, n := range names {
		h, ok := Lookup(n)
		if !ok {
			return Verdict{}, fmt.Errorf("hook %q: %w (known: %s)", n, ErrUnknownHook, strings.Join(Names(), ", "))
		}
		if want[n] {
			return Verdict{}, fmt.Errorf("hook each: %s named twice", n)
		}
		if event != "" && h.Event != event {
			return Verdict{}, fmt.Errorf("hook each: %s handles %s, %s handles %s: one event per process", names[0], event, n, h.Event)
		}
		event, want[n] = h.Event, true
	}
	in, err := ReadInput(r)
	if err != nil {
		return Verdict{}, fmt.Errorf("hook each: %w", err)
	}
	if in.HookEventName != event {
		return Verdict{}, fmt.Errorf("hook each: payload is for event %q, hooks %s handle %s", in.HookEventName, strings.Join(names, ", "), event)
	}
	for _, h := range all {
		if !want[h.Name] {
			continue
		}
		ok, err := h.Matches(in.ToolName)
		if err != nil {
			return Verdict{}, err
		}
		if !ok {
			continue
		}
		v, err := h.check(ctx, in, env)
		if err != nil {
			return Verdict{}, fmt.Errorf("hook %s: %w", h.Name, err)
		}
		if v.Block {
			return respond(h, in, v, w)
		}
	}
	return Verdict{}, nil
}

// ReadInput decodes a hook payload (at most MaxInput bytes).
func ReadInput(r io.Reader) (*Input, error) {
	data, err := limit.ReadAll(r, MaxInput)
	if tl := (*limit.TooLargeError)(nil); errors.As(err, &tl) {
		return nil, fmt.Errorf("payload %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("reading payload: %w", err)
	}
	var in Input
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("decoding payload: %w", err)
	}
	if in.HookEventName == "" || in.ToolName == "" {
		return nil, errors.New("payload lacks hook_event_name or tool_name")
	}
	return &in, nil
}

// Response renders the protocol JSON for a blocking verdict of event.
func Response(event string, v Verdict) ([]byte, error) { return TaggedResponse(event, v, Tag{}) }

// Tag identifies a verdict in a hook's answer: Claude Code ignores the
// extra "fullsend" object, and reports the whole answer in its
// stream-json hook_response events (--include-hook-events), from which
// the claude runtime records the verdict (ParseTag).
type Tag struct {
	Hook      string `json:"hook"`
	Rule      string `json:"rule,omitempty"`
	Tool      string `json:"tool,omitempty"`
	ToolUseID string `json:"tool_use_id,omitempty"`
}

// TaggedResponse is Response with t added as the answer's "fullsend"
// object (omitted when t is zero).
func TaggedResponse(event string, v Verdict, t Tag) ([]byte, error) {
	var out map[string]any
	switch event {
	case PreToolUse:
		out = map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName":            PreToolUse,
			"permissionDecision":       "deny",
			"permissionDecisionReason": v.Reason,
		}}
	case PostToolUse:
		out = map[string]any{
			"decision": "block",
			"reason":   v.Reason,
			"hookSpecificOutput": map[string]any{
				"hookEventName":     PostToolUse,
				"additionalContext": "fullsend security hook (" + v.Rule + "): " + v.Reason,
			},
		}
	default:
		return nil, fmt.Errorf("event %q not supported", event)
	}
	if t != (Tag{}) {
		out["fullsend"] = t
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// toolInput decodes the tool input object (nil when absent or not an object).
func (in *Input) toolInput() map[string]any {
	var m map[string]any
	if len(in.ToolInput) == 0 || json.Unmarshal(in.ToolInput, &m) != nil {
		return nil
	}
	return m
}

// inputString returns tool_input[key] when it is a string.
func (in *Input) inputString(key string) string {
	s, _ := in.toolInput()[key].(string)
	return s
}

// strings collects every string leaf of a JSON value (object keys excluded),
// in document order; a JSON string value yields itself.
func jsonStrings(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return []string{string(raw)}
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k])
			}
		}
	}
	walk(v)
	return out
}

// splitList splits a comma list, trimming blanks and dropping empty entries.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Answer is what a hook's answer (stdout) says, decoded by ParseAnswer.
type Answer struct {
	Block  bool   // a PreToolUse deny or a PostToolUse block
	Event  string // PreToolUse | PostToolUse ("" when the answer names none)
	Reason string
	Tag    Tag // zero when the answer carries no "fullsend" object
}

// ParseAnswer decodes a command hook's answer as Claude Code reads it:
// hookSpecificOutput.permissionDecision "deny" (PreToolUse) or decision
// "block" is a block. Anything else (empty output, allow, not JSON) is not.
func ParseAnswer(stdout string) Answer {
	var doc struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
		Specific struct {
			Event          string `json:"hookEventName"`
			Permission     string `json:"permissionDecision"`
			PermissionWhy  string `json:"permissionDecisionReason"`
			AdditionalText string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
		Tag Tag `json:"fullsend"`
	}
	if json.Unmarshal([]byte(strings.TrimSpace(stdout)), &doc) != nil {
		return Answer{}
	}
	a := Answer{Event: doc.Specific.Event, Tag: doc.Tag}
	switch {
	case doc.Specific.Permission == "deny":
		a.Block, a.Reason = true, doc.Specific.PermissionWhy
	case doc.Decision == "block":
		a.Block, a.Reason = true, doc.Reason
	}
	return a
}
