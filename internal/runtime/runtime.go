package runtime

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// Sandbox layout shared by every runtime and by the runner (see doc.go).
const (
	// SandboxRoot is the read-write root every sandbox has.
	SandboxRoot = "/sandbox"
	// WorkspaceDir holds .env, .env.d/, .claude/ and the target repo.
	WorkspaceDir = "/sandbox/workspace"
	// ClaudeConfigDir is CLAUDE_CONFIG_DIR: the personal configuration level
	// (agents/, skills/, plugins/). Runtimes other than claude reuse the same
	// layout so skills are found at one place.
	ClaudeConfigDir = "/sandbox/claude-config"
	// FullsendBinary is where the fullsend binary is available in the sandbox.
	FullsendBinary = "/usr/local/bin/fullsend"
)

// Skill is one skill directory on the host, uploaded as
// <ConfigDir>/skills/<Name>/ (personal level: wins over a repo skill of the
// same name).
type Skill struct {
	Name    string // directory name inside skills/; must be a single path element
	HostDir string // host directory holding SKILL.md and its resources
}

// Plugin is one plugin directory on the host, uploaded as
// <ConfigDir>/plugins/<Name>/.
type Plugin struct {
	Name    string
	HostDir string
}

// BootstrapInput is what a runtime needs to lay out its configuration in the
// sandbox. Host paths have been resolved, verified and scanned by the runner.
type BootstrapInput struct {
	AgentName string   // agent name; the definition lands at agents/<AgentName>.md
	AgentFile string   // host path of the agent definition (markdown with frontmatter)
	Skills    []Skill  // in harness order; names are unique
	Plugins   []Plugin // in harness order; names are unique
	// RepoDir is the sandbox path of the target repository, e.g.
	// /sandbox/workspace/<repo>; the agent's working directory. May be ""
	// (no target repo): runtimes then use WorkspaceDir.
	RepoDir string
	// Env is the harness env.sandbox (already expanded).
	Env map[string]string
	// RunDir is the host run directory (.fullsend/runs/<run-id>/).
	RunDir string
	// ToolAllowlist restricts the tools the agent may call, in Claude Code
	// permission syntax ("Read", "Bash(gh,jq)"). Empty = no restriction.
	// Enforced by runtimes that support it (claude: tool-allowlist hook).
	ToolAllowlist []string
	// DisabledHooks names sandbox hooks not to install (see package hooks).
	DisabledHooks []string
	// TrustRepoSettings is the harness's opt-in to the target repository's
	// own agent CLI settings that start processes (claude: hooks, env,
	// helpers, plugins in .claude/settings*.json); without it the claude
	// runtime refuses them.
	TrustRepoSettings bool
}

// WorkDir is the agent's working directory: RepoDir, or WorkspaceDir.
func (in BootstrapInput) WorkDir() string {
	if in.RepoDir != "" {
		return in.RepoDir
	}
	return WorkspaceDir
}

// RunInput is one iteration of the agent.
type RunInput struct {
	AgentName string
	Prompt    string
	Model     string // "" = the agent definition's or the runtime's default
	// Iteration counts from 1; iteration N>1 follows a failed validation.
	Iteration int
	// Feedback holds the validation errors of the previous iteration ("" on
	// the first). Runtimes append it to the prompt.
	Feedback string
	// ResultPath is the sandbox path where the agent must write its JSON
	// result (validated by the runner after Run returns).
	ResultPath string
	// ResultSchema is the host path of the JSON Schema the result must
	// satisfy (harness validation_loop.schema, resolved); "" = none.
	// Runtimes show it to the model; the runner validates.
	ResultSchema string
	// WorkDir is the sandbox working directory (BootstrapInput.WorkDir()).
	WorkDir string
	// Env is the environment of the agent process: the harness env.sandbox
	// plus the runtime's Env exports, merged by the runner.
	Env map[string]string
	// RunDir is the host run directory; runtimes may write artifacts there.
	RunDir string
	// Options are runtime-specific settings (e.g. script: "script" = host path
	// of the script file; claude: "binary"). Unknown keys are errors.
	Options map[string]string
	// FetchedSkills are the skills the runtime-fetch service placed in
	// the config dir's skills/ during the run (verified host copies): a
	// runtime that empties its config dir before an iteration uploads them
	// again.
	FetchedSkills []Skill
	// Events, when non-nil, receives every normalised event in order, as it
	// happens. Calls never overlap but may come from a goroutine other than
	// the caller's; all calls happen before Run returns.
	Events func(Event)
	// Timeout bounds this iteration (0 = the context's deadline only).
	Timeout time.Duration
}

// Emit sends e to in.Events when set, stamping the time if unset.
func (in RunInput) Emit(e Event) {
	if in.Events == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	in.Events(e)
}

// FullPrompt is Prompt followed by the previous iteration's validation
// feedback, when there is any.
func (in RunInput) FullPrompt() string {
	if in.Feedback == "" {
		return in.Prompt
	}
	return fmt.Sprintf("%s\n\nYour previous result (iteration %d) failed validation:\n%s\nFix it and write the corrected result to %s.",
		in.Prompt, in.Iteration-1, strings.TrimRight(in.Feedback, "\n"), in.ResultPath)
}

// EventKind classifies an Event.
type EventKind string

const (
	EventTurn       EventKind = "turn"        // the model produced a turn (Turn set)
	EventToolCall   EventKind = "tool_call"   // Name = tool, Text = input (JSON or command), ID = call id
	EventToolResult EventKind = "tool_result" // ID = call id, Text = output (truncated), IsError
	EventText       EventKind = "text"        // assistant text
	EventError      EventKind = "error"       // Text = message
	EventUsage      EventKind = "usage"       // token counts of one turn
	EventResult     EventKind = "result"      // final outcome of the iteration
	EventInfo       EventKind = "info"        // runtime notices (init, model, session id)
	// EventVerdict: a security check stopped a tool call or flagged its
	// output (Name = the hook, ID = call id, Rule, Text = reason).
	EventVerdict EventKind = "verdict"
	// EventRetry: a failed call is tried again (Name = what, Text = why,
	// Attempt = the attempt that comes next, WaitMS = the wait before it).
	EventRetry EventKind = "retry"
)

// MaxEventText bounds Event.Text; longer text is cut and marked.
const MaxEventText = 4096

// Event is one normalised runtime event.
type Event struct {
	Time         time.Time `json:"time"`
	Kind         EventKind `json:"kind"`
	Name         string    `json:"name,omitempty"` // tool name, op name, model, ...
	ID           string    `json:"id,omitempty"`   // tool call id
	Text         string    `json:"text,omitempty"` // at most MaxEventText bytes
	IsError      bool      `json:"is_error,omitempty"`
	Turn         int       `json:"turn,omitempty"`
	InputTokens  int64     `json:"input_tokens,omitempty"`
	OutputTokens int64     `json:"output_tokens,omitempty"`
	CostUSD      float64   `json:"cost_usd,omitempty"`
	Rule         string    `json:"rule,omitempty"`    // EventVerdict: what matched
	Attempt      int       `json:"attempt,omitempty"` // EventRetry
	WaitMS       int64     `json:"wait_ms,omitempty"` // EventRetry

	// Prompt-cache counts, part of InputTokens (EventUsage, EventResult).
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens,omitempty"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens,omitempty"`
}

// Truncate cuts s to MaxEventText bytes (on a rune boundary), marking the cut.
func Truncate(s string) string {
	if len(s) <= MaxEventText {
		return s
	}
	cut := MaxEventText
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("…[%d bytes cut]", len(s)-cut)
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// LastLine returns the last line of the first buffer that is not blank
// (white space around the buffer removed first), or "" when every buffer is
// blank: the line of a command's stderr (or stdout) error messages quote.
func LastLine(bufs ...[]byte) string {
	for _, b := range bufs {
		s := strings.TrimSpace(string(b))
		if s == "" {
			continue
		}
		if i := strings.LastIndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
		return s
	}
	return ""
}

// Stop reasons reported in Outcome.StopReason.
const (
	StopCompleted = "completed"  // the agent finished normally
	StopError     = "error"      // the agent or runtime reported an error
	StopMaxTurns  = "max_turns"  // the turn budget ran out
	StopMaxTokens = "max_tokens" // the token budget ran out
	StopTimeout   = "timeout"    // the iteration timed out
	StopCanceled  = "canceled"   // the context was canceled
)

// Outcome summarises one iteration. Run returns a non-nil Outcome whenever
// the agent was started, even together with an error.
type Outcome struct {
	ExitCode     int      `json:"exit_code"`
	StopReason   string   `json:"stop_reason"`
	Turns        int      `json:"turns"`
	ToolCalls    int      `json:"tool_calls"`
	InputTokens  int64    `json:"input_tokens"`
	OutputTokens int64    `json:"output_tokens"`
	CostUSD      float64  `json:"cost_usd"`
	Errors       []string `json:"errors,omitempty"`
	SessionID    string   `json:"session_id,omitempty"`

	// Prompt-cache counts, part of InputTokens, when the model server
	// reports them.
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens,omitempty"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens,omitempty"`
}

// Runtime executes an agent inside a provisioned sandbox session. A Runtime
// value serves one run: the runner calls Bootstrap once, then Run and
// CleanupIteration per iteration. Methods are not safe for concurrent use.
type Runtime interface {
	// Name is the registry name ("claude", "script", "native").
	Name() string
	// ConfigDir is the sandbox directory holding the agent configuration.
	ConfigDir() string
	// Env returns the environment exports the runtime needs in the sandbox
	// (e.g. CLAUDE_CONFIG_DIR). The runner merges them over in.Env.
	Env(in BootstrapInput) map[string]string
	// Bootstrap uploads the agent definition, skills and plugins into
	// ConfigDir and writes any runtime configuration. It fails on the first
	// upload or write error, leaving partial files in the sandbox.
	Bootstrap(ctx context.Context, s sandbox.Session, in BootstrapInput) error
	// Run executes one iteration. A non-zero agent exit is reported in
	// Outcome (ExitCode, StopReason, Errors) together with an error naming
	// the runtime; an error with a nil Outcome means the agent never started.
	Run(ctx context.Context, s sandbox.Session, in RunInput) (*Outcome, error)
	// CleanupIteration removes per-iteration artifacts before the next
	// iteration: the result file of the previous Run (its
	// RunInput.ResultPath) and runtime scratch files. It never touches the
	// target repo. Calling it before any Run is a no-op.
	CleanupIteration(ctx context.Context, s sandbox.Session) error
}

// TranscriptHandler is implemented by runtimes that produce a transcript
// and debug logs; SaveTranscript copies them into runDir (host), typically
// as transcript.jsonl. It is called after the last iteration, also after a
// failed one.
type TranscriptHandler interface {
	SaveTranscript(ctx context.Context, s sandbox.Session, runDir string) error
}

// HooksBootstrap is implemented by runtimes that install sandbox tool hooks
// (claude: `fullsend hook …` wired in .claude/settings.json). The runner
// calls it after Bootstrap. A runtime without it installs no tool hooks; see
// the security matrix in doc.go.
type HooksBootstrap interface {
	BootstrapHooks(ctx context.Context, s sandbox.Session, in BootstrapInput) error
}

// Factory builds a fresh Runtime for one run.
type Factory func() Runtime

// UnknownError is returned by builtin.Get for a name that is not a runtime.
type UnknownError struct {
	Name  string
	Known []string
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("runtime %q: not registered (known: %s)", e.Name, strings.Join(e.Known, ", "))
}

// Error is a runtime failure naming the runtime and what it was doing.
type Error struct {
	Runtime string // "claude", "script", ...
	Op      string // "bootstrap", "run", "cleanup", "transcript", or a step
	Err     error
}

func (e *Error) Error() string { return fmt.Sprintf("runtime %s: %s: %v", e.Runtime, e.Op, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// CheckOptions rejects option keys of opts that are not in known, naming the
// runtime and the key.
func CheckOptions(runtime string, opts map[string]string, known ...string) error {
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(known, k) {
			return &Error{Runtime: runtime, Op: "options", Err: fmt.Errorf("unknown option %q (known: %s)", k, strings.Join(known, ", "))}
		}
	}
	return nil
}

// CheckName accepts a name usable as one path element in the sandbox layout
// (agent, skill and plugin names): 1-128 bytes of [A-Za-z0-9._-], not "." or
// "..", not starting with '-'.
func CheckName(kind, name string) error {
	if name == "" || len(name) > 128 || name == "." || name == ".." || name[0] == '-' {
		return fmt.Errorf("%s name %q: must be 1-128 characters of A-Z a-z 0-9 . _ - (not \".\", \"..\" or a leading '-')", kind, name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%s name %q: character %q not allowed (A-Z a-z 0-9 . _ - only)", kind, name, c)
		}
	}
	return nil
}
