package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/hooks"
	"github.com/fullsend-ai/fullsend/internal/limit"
	"github.com/fullsend-ai/fullsend/internal/rundir"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// Name is the registry name of this runtime.
const Name = "claude"

// Sandbox paths used by the runtime.
const (
	SettingsPath  = runtime.WorkspaceDir + "/.claude/settings.json"
	HooksDir      = runtime.WorkspaceDir + "/.claude/hooks"
	UserSettings  = runtime.ClaudeConfigDir + "/settings.json"
	LogDir        = runtime.ClaudeConfigDir + "/fullsend-logs"
	DecoyPath     = runtime.DecoyPath // canary decoy, written when absent
	ProjectsDir   = runtime.ClaudeConfigDir + "/projects"
	envFile       = runtime.WorkspaceDir + "/.env"
	envDir        = runtime.WorkspaceDir + "/.env.d"
	transcriptOut = "transcript.jsonl"
)

// Run options (RunInput.Options).
const (
	OptBinary         = "binary"          // claude executable in the sandbox (default "claude", via PATH)
	OptNode           = "node"            // node running OptBinary (a script install); "" = run OptBinary itself
	OptMaxTurns       = "max_turns"       // --max-turns
	OptPermissionMode = "permission_mode" // --permission-mode (default bypassPermissions; hooks still apply)
	OptEffort         = "effort"          // --effort
	OptDebug          = "debug"           // "false" disables --debug-file
)

// options lists every option Run accepts.
var options = []string{OptBinary, OptNode, OptMaxTurns, OptPermissionMode, OptEffort, OptDebug}

// Runtime runs Claude Code. Create one per run with New.
type Runtime struct {
	canary     string
	agent      string
	workDir    string
	lastResult string
	iterations int
	hooksOn    bool   // BootstrapHooks wrote SettingsPath
	trustRepo  bool   // BootstrapInput.TrustRepoSettings
	settings   []byte // what BootstrapHooks wrote; restored before every Run
	boot       runtime.BootstrapInput
	booted     bool         // Bootstrap uploaded the config dir; restored before every Run
	transcript bytes.Buffer // raw stream-json of every iteration
	debugLogs  []string     // sandbox paths
}

var (
	_ runtime.Runtime           = (*Runtime)(nil)
	_ runtime.HooksBootstrap    = (*Runtime)(nil)
	_ runtime.TranscriptHandler = (*Runtime)(nil)
)

// New returns a claude runtime with a fresh random canary token.
func New() *Runtime {
	return &Runtime{canary: runtime.NewCanary()}
}

// Name implements runtime.Runtime.
func (*Runtime) Name() string { return Name }

// ConfigDir implements runtime.Runtime: CLAUDE_CONFIG_DIR.
func (*Runtime) ConfigDir() string { return runtime.ClaudeConfigDir }

// Canary returns the run's canary token (for tests and the run report; it
// is not a secret, only a tripwire).
func (r *Runtime) Canary() string { return r.canary }

// Env implements runtime.Runtime.
func (r *Runtime) Env(in runtime.BootstrapInput) map[string]string {
	env := map[string]string{
		"CLAUDE_CONFIG_DIR":                        runtime.ClaudeConfigDir,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"DISABLE_AUTOUPDATER":                      "1",
		"IS_SANDBOX":                               "1", // lets --permission-mode bypassPermissions run as root
		hooks.EnvCanaryToken:                       r.canary,
	}
	// The tool allowlist is deliberately not exported: it travels on the
	// hook's command line in settings.json (see BootstrapHooks).
	return env
}

// runAllowlists returns the tool allowlists of the run: the agent
// definition's `tools:` and BootstrapInput.ToolAllowlist, unless the
// harness disabled the tool allowlist hook (hooks.RunAllowlists). The
// definition is read from the host copy the runner verified, not from the
// sandbox copy the agent could edit.
func runAllowlists(in runtime.BootstrapInput) ([]string, error) {
	var data []byte
	if in.AgentFile != "" {
		b, err := os.ReadFile(in.AgentFile)
		if err != nil {
			return nil, fmt.Errorf("agent definition: %w", err)
		}
		data = b
	}
	return hooks.RunAllowlists(in.AgentFile, data, in.ToolAllowlist, in.DisabledHooks)
}

func (r *Runtime) fail(op string, err error) error {
	return &runtime.Error{Runtime: Name, Op: op, Err: err}
}

// Bootstrap implements runtime.Runtime: agent definition, skills (personal
// level) and plugins under CLAUDE_CONFIG_DIR.
func (r *Runtime) Bootstrap(ctx context.Context, s sandbox.Session, in runtime.BootstrapInput) error {
	// A tools: line that does not parse fails the run before anything is
	// uploaded (BootstrapHooks reads it again to wire the hook).
	if _, err := runAllowlists(in); err != nil {
		return r.fail("bootstrap", err)
	}
	if err := runtime.UploadConfig(ctx, s, r.ConfigDir(), in); err != nil {
		return r.fail("bootstrap", err)
	}
	r.agent = in.AgentName
	r.workDir = in.WorkDir()
	r.trustRepo = in.TrustRepoSettings
	r.boot = in
	r.booted = true
	return nil
}

// BootstrapHooks implements runtime.HooksBootstrap: writes the hook wiring
// to /sandbox/workspace/.claude/settings.json (passed with --settings) and
// to CLAUDE_CONFIG_DIR/settings.json (user level, so the hooks apply
// whatever the working directory), and a manifest in .claude/hooks/. It
// refuses a target repo whose own Claude settings disable hooks.
//
// When the agent restricts its tools (frontmatter `tools:`, or
// BootstrapInput.ToolAllowlist) and the harness does not disable the
// tool_allowlist hook, tool-allowlist-pretool is wired with the lists on
// its command line.
func (r *Runtime) BootstrapHooks(ctx context.Context, s sandbox.Session, in runtime.BootstrapInput) error {
	allow, err := runAllowlists(in)
	if err != nil {
		return r.fail("hooks", err)
	}
	var optIn []string
	if len(allow) > 0 {
		optIn = append(optIn, hooks.ToolAllowlistHook)
	}
	hs, err := hooks.Select(in.DisabledHooks, optIn)
	if err != nil {
		return r.fail("hooks", err)
	}
	settings, err := hooks.Settings(runtime.FullsendBinary, hs, allow...)
	if err != nil {
		return r.fail("hooks", err)
	}
	if err := r.checkRepoSettings(ctx, s, in.WorkDir()); err != nil {
		return r.fail("hooks", err)
	}
	for _, p := range []string{SettingsPath, UserSettings} {
		if err := runtime.WriteFile(ctx, s, p, settings); err != nil {
			return r.fail("hooks", err)
		}
	}
	type entry struct {
		Name, Event, Matcher, Summary string
	}
	man := struct {
		Binary         string   `json:"binary"`
		Hooks          []entry  `json:"hooks"`
		ToolAllowlists []string `json:"tool_allowlists,omitempty"`
	}{Binary: runtime.FullsendBinary, ToolAllowlists: allow}
	for _, h := range hs {
		man.Hooks = append(man.Hooks, entry{h.Name, h.Event, h.Matcher, h.Summary})
	}
	b, _ := json.MarshalIndent(man, "", "  ")
	if err := runtime.WriteFile(ctx, s, HooksDir+"/manifest.json", append(b, '\n')); err != nil {
		return r.fail("hooks", err)
	}
	if err := runtime.PlantDecoy(ctx, s, r.canary); err != nil {
		return r.fail("hooks", err)
	}
	r.hooksOn, r.settings = true, settings
	return nil
}

// restoreHooks puts CLAUDE_CONFIG_DIR back as Bootstrap and
// BootstrapHooks left it (restoreConfigDir), rewrites the workspace
// settings file and checks the repo's own settings again, before every
// iteration: the agent of an earlier iteration may have edited them, and
// Claude Code reads its configuration at start.
func (r *Runtime) restoreHooks(ctx context.Context, s sandbox.Session, workDir string, fetched []runtime.Skill) error {
	if err := r.restoreConfigDir(ctx, s, fetched); err != nil {
		return err
	}
	if !r.hooksOn {
		return nil
	}
	if err := r.checkRepoSettings(ctx, s, workDir); err != nil {
		return err
	}
	for _, p := range []string{SettingsPath, UserSettings} {
		if err := runtime.WriteFile(ctx, s, p, r.settings); err != nil {
			return err
		}
	}
	return nil
}

// cleanConfigScript empties the config dir ($1) but for the entries that
// survive from one iteration to the next: Claude Code's session
// transcripts (projects/, what --resume and SaveTranscript read; their
// memory/ directories are removed, Claude Code loads them as
// instructions) and fullsend's debug logs (fullsend-logs/), each only as
// a real directory. Everything else goes and what fullsend put there is
// uploaded again from the host copy: besides fullsend's agents, skills,
// plugins and settings, Claude Code 2.1.332 writes .claude.json (and its
// backups/), sessions/, session-env/, shell-snapshots/ (sourced before
// every Bash command) and plugins/store/, and reads commands/,
// output-styles/, CLAUDE.md and the transcripts' memory/ as instructions;
// none of it is needed by a fresh --print session, and only the
// transcript (projects/<cwd>/<session>.jsonl) by --resume.
const cleanConfigScript = `set -e
cd -P -- "$1"
for k in projects fullsend-logs; do [ -L "$k" ] && rm -f -- "$k"; done
find . -mindepth 1 -maxdepth 1 ! -name projects ! -name fullsend-logs -exec rm -rf -- {} +
if [ -d projects ]; then find projects -mindepth 2 -maxdepth 2 -name memory -exec rm -rf -- {} +; fi
[ -z "$(find . -mindepth 1 -maxdepth 1 ! -name projects ! -name fullsend-logs)" ]`

// restoreConfigDir empties CLAUDE_CONFIG_DIR (see cleanConfigScript) and
// uploads the agent, skills, plugins and the skills fetched at run time
// again from their host copies.
func (r *Runtime) restoreConfigDir(ctx context.Context, s sandbox.Session, fetched []runtime.Skill) error {
	if !r.booted {
		return nil
	}
	res, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"sh", "-c", cleanConfigScript, "sh", r.ConfigDir()}})
	if err != nil {
		return fmt.Errorf("restoring %s: %w", r.ConfigDir(), err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("restoring %s: exit status %d: %s", r.ConfigDir(), res.ExitCode, lastLine(res.Stderr))
	}
	if err := runtime.UploadConfig(ctx, s, r.ConfigDir(), r.boot); err != nil {
		return fmt.Errorf("restoring %s: %w", r.ConfigDir(), err)
	}
	for _, sk := range fetched {
		if err := runtime.CheckName("skill", sk.Name); err != nil {
			return err
		}
		dst := path.Join(r.ConfigDir(), "skills", sk.Name)
		if err := s.Upload(ctx, sk.HostDir, dst); err != nil {
			return fmt.Errorf("restoring fetched skill %q to %s: %w", sk.Name, dst, err)
		}
	}
	return nil
}

// checkRepoSettings refuses repo-level Claude settings that switch hooks
// off or, unless the harness trusts them (TrustRepoSettings), start
// processes or trust the repository's MCP servers (CheckProjectSettings).
// It runs at bootstrap and again before every iteration: the agent may
// have written them.
func (r *Runtime) checkRepoSettings(ctx context.Context, s sandbox.Session, workDir string) error {
	if workDir == runtime.WorkspaceDir {
		return nil
	}
	for _, name := range RepoSettingsFiles {
		p := path.Join(workDir, name)
		data, ok, err := runtime.ReadFile(ctx, s, p)
		if err != nil || !ok {
			if err != nil {
				return err
			}
			continue
		}
		issues, err := CheckProjectSettings(p, data)
		if err != nil {
			return err
		}
		for _, is := range issues {
			if is.Always || !r.trustRepo {
				return fmt.Errorf("target repo %s; refused%s", is, trustHint(is))
			}
		}
	}
	return r.checkRepoAgents(ctx, s, workDir)
}

// checkRepoAgents refuses a repository agent definition that would
// replace the run's agent (DefinesAgent): the agent of an earlier
// iteration may have written one.
func (r *Runtime) checkRepoAgents(ctx context.Context, s sandbox.Session, workDir string) error {
	dir := path.Join(workDir, RepoAgentsDir)
	res, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"sh", "-c", `[ -d "$1" ] || exit 0; find "$1" -type f -name '*.md' -print0`, "sh", dir}})
	if err != nil {
		return fmt.Errorf("listing %s: %w", dir, err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("listing %s: exit status %d: %s", dir, res.ExitCode, lastLine(res.Stderr))
	}
	for _, p := range strings.Split(string(res.Stdout), "\x00") {
		if p == "" {
			continue
		}
		data, ok, err := runtime.ReadFile(ctx, s, p)
		if err != nil {
			return err
		}
		if ok && DefinesAgent(p, data, r.agent) {
			return fmt.Errorf("target repo %s defines agent %q, which Claude Code would run instead of the harness's agent definition; refused", p, r.agent)
		}
	}
	return nil
}

// trustHint says how to accept a refused key (nothing for disableAllHooks).
func trustHint(is SettingsIssue) string {
	if is.Always {
		return ""
	}
	return " (remove the key, or set security.trust_repo_settings: true in a local harness to let the repository run it)"
}

// envPrelude sources /sandbox/workspace/.env and .env.d/* (exported) before
// exec'ing the command given as arguments.
const envPrelude = `set -a
[ -f ` + envFile + ` ] && . ` + envFile + `
for f in ` + envDir + `/*; do [ -f "$f" ] && . "$f"; done
set +a
exec "$@"`

// Args returns the claude command line for in (without the env prelude).
func (r *Runtime) Args(in runtime.RunInput, debugFile string) ([]string, error) {
	bin := in.Options[OptBinary]
	if bin == "" {
		bin = DefaultBinary
	}
	var argv0 []string
	if node := in.Options[OptNode]; node != "" {
		argv0 = append(argv0, node)
	}
	argv0 = append(argv0, bin)
	agent := in.AgentName
	if agent == "" {
		agent = r.agent
	}
	if err := runtime.CheckName("agent", agent); err != nil {
		return nil, err
	}
	mode := in.Options[OptPermissionMode]
	if mode == "" {
		mode = "bypassPermissions"
	}
	if err := config.CheckPermissionMode(mode); err != nil {
		return nil, fmt.Errorf("option %s: %w", OptPermissionMode, err)
	}
	// Partial messages carry each turn's final usage (message_delta); hook
	// events carry every hook answer, from which verdicts are recorded.
	// --strict-mcp-config: MCP servers come from --mcp-config only, and
	// fullsend passes none, so neither the repository's .mcp.json nor a
	// .claude.json the agent wrote can start a server.
	args := append(argv0, "--print", "--agent", agent, "--output-format", "stream-json", "--verbose",
		"--include-partial-messages", "--include-hook-events", "--strict-mcp-config")
	if r.hooksOn {
		args = append(args, "--settings", SettingsPath)
	}
	args = append(args, "--permission-mode", mode)
	if in.Model != "" {
		args = append(args, "--model", in.Model)
	}
	if mt := in.Options[OptMaxTurns]; mt != "" {
		if n, err := strconv.Atoi(mt); err != nil || n <= 0 {
			return nil, fmt.Errorf("option %s: %q is not a positive integer", OptMaxTurns, mt)
		}
		args = append(args, "--max-turns", mt)
	}
	if e := in.Options[OptEffort]; e != "" {
		if err := config.CheckEffort(e); err != nil {
			return nil, fmt.Errorf("option %s: %w", OptEffort, err)
		}
		args = append(args, "--effort", e)
	}
	if debugFile != "" {
		args = append(args, "--debug-file", debugFile)
	}
	return args, nil
}

// Run implements runtime.Runtime: runs `claude --print --agent NAME
// --output-format stream-json --verbose …` with the prompt on stdin,
// parsing the stream live into events.
func (r *Runtime) Run(ctx context.Context, s sandbox.Session, in runtime.RunInput) (*runtime.Outcome, error) {
	if err := runtime.CheckOptions(Name, in.Options, options...); err != nil {
		return nil, err
	}
	r.iterations++
	debugFile, err := r.debugFile(in)
	if err != nil {
		return nil, r.fail("run", err)
	}
	args, err := r.Args(in, debugFile)
	if err != nil {
		return nil, r.fail("run", err)
	}
	if debugFile != "" {
		if res, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"mkdir", "-p", LogDir}}); err != nil || res.ExitCode != 0 {
			return nil, r.fail("run", fmt.Errorf("creating %s: %v %s", LogDir, err, res.Stderr))
		}
		r.debugLogs = append(r.debugLogs, debugFile)
	}
	env := map[string]string{}
	for k, v := range in.Env {
		env[k] = v
	}
	for k, v := range r.Env(runtime.BootstrapInput{}) {
		env[k] = v
	}
	workDir := in.WorkDir
	if workDir == "" {
		workDir = r.workDir
	}
	if workDir == "" {
		workDir = runtime.WorkspaceDir
	}
	if err := r.restoreHooks(ctx, s, workDir, in.FetchedSkills); err != nil {
		return nil, r.fail("hooks", err)
	}
	r.lastResult = in.ResultPath
	prompt, err := fullPrompt(in)
	if err != nil {
		return nil, r.fail("run", err)
	}

	events, endSpans := traceEvents(ctx, in.Events)
	defer endSpans()
	parser := NewParser(events)
	var raw bytes.Buffer
	lw := &lineWriter{p: parser, raw: &raw}
	var stderr bytes.Buffer
	res, execErr := s.Exec(ctx, sandbox.ExecRequest{
		Args:    append([]string{"sh", "-c", envPrelude, "sh"}, args...),
		Stdin:   []byte(prompt),
		Env:     env,
		Cwd:     workDir,
		Timeout: in.Timeout,
		Stdout:  lw,
		Stderr:  &stderr,
	})
	lw.Flush()
	r.transcript.Write(raw.Bytes())
	if raw.Len() > 0 && raw.Bytes()[raw.Len()-1] != '\n' {
		r.transcript.WriteByte('\n')
	}
	if execErr != nil && raw.Len() == 0 {
		return nil, r.fail("run", execErr)
	}
	out, sawResult := parser.Outcome()
	out.ExitCode = res.ExitCode
	problem := judge(ctx, in, &out, sawResult, exitOf{res: res, err: execErr, cli: args[0], stderr: stderr.Bytes()})
	if problem == nil {
		return &out, nil
	}
	if out.StopReason == "" || out.StopReason == runtime.StopCompleted {
		out.StopReason = runtime.StopError
	}
	if out.ExitCode == 0 {
		out.ExitCode = 1
	}
	msg := problem.Error()
	if len(out.Errors) == 0 || out.Errors[len(out.Errors)-1] != msg {
		out.Errors = append(out.Errors, msg)
	}
	return &out, r.fail("run", problem)
}

// debugFile is this iteration's Claude Code debug log in the sandbox
// ("" when the debug option is false).
func (r *Runtime) debugFile(in runtime.RunInput) (string, error) {
	d := in.Options[OptDebug]
	if d == "false" {
		return "", nil
	}
	if d != "" && d != "true" {
		return "", fmt.Errorf("option %s: %q is not true or false", OptDebug, d)
	}
	return fmt.Sprintf("%s/claude-debug-%d.log", LogDir, r.iterations), nil
}

// fullPrompt is the prompt on claude's stdin: the task, where to write the
// result and the schema it must validate against.
func fullPrompt(in runtime.RunInput) (string, error) {
	prompt := in.FullPrompt()
	if in.ResultPath != "" && !strings.Contains(prompt, in.ResultPath) {
		prompt += "\n\nWrite your final result as JSON to " + in.ResultPath + "."
	}
	if in.ResultSchema != "" {
		schema, err := readSchema(in.ResultSchema)
		if err != nil {
			return "", err
		}
		prompt += "\n\nThe result must validate against this JSON Schema:\n" + schema
	}
	return prompt, nil
}

// exitOf is how the claude command ended: its result, the Exec error, the
// command (args[0]) and its stderr as captured.
type exitOf struct {
	res    sandbox.ExecResult
	err    error
	cli    string
	stderr []byte
}

// judge says what went wrong with an iteration (nil: nothing), setting
// the stop reason of an Exec that failed or timed out.
func judge(ctx context.Context, in runtime.RunInput, out *runtime.Outcome, sawResult bool, e exitOf) error {
	res := e.res
	switch {
	case e.err != nil:
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			out.StopReason = runtime.StopTimeout
		case ctx.Err() != nil:
			out.StopReason = runtime.StopCanceled
		default:
			out.StopReason = runtime.StopError
		}
		return e.err
	case res.TimedOut:
		out.StopReason = runtime.StopTimeout
		return fmt.Errorf("timed out after %s", in.Timeout)
	case res.ExitCode == 127:
		return fmt.Errorf("%s not found in the sandbox (exit 127): %s; the local backend binds the runner's CLI (config.yaml runtimes.claude.binary, --claude-binary), the docker backend runs the one installed in the image", e.cli, lastLine(e.stderr, res.Stderr))
	case !sawResult:
		return fmt.Errorf("claude exited %d without a result message: %s", res.ExitCode, lastLine(e.stderr, res.Stderr))
	case out.StopReason != runtime.StopCompleted:
		return errors.New(strings.Join(out.Errors, "; "))
	case res.ExitCode != 0:
		return fmt.Errorf("claude exited %d: %s", res.ExitCode, lastLine(e.stderr, res.Stderr))
	}
	return nil
}

// MaxSchemaSize bounds the result schema shown in the prompt.
const MaxSchemaSize = 256 << 10

func readSchema(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("result schema: %w", err)
	}
	defer f.Close()
	b, err := limit.ReadAll(f, MaxSchemaSize)
	if err != nil {
		return "", fmt.Errorf("result schema %s: %w", p, err)
	}
	return strings.TrimSpace(string(b)), nil
}

func lastLine(bufs ...[]byte) string {
	if s := runtime.LastLine(bufs...); s != "" {
		return runtime.Truncate(s)
	}
	return "(no stderr)"
}

// CleanupIteration implements runtime.Runtime: removes the previous result
// file. Claude's own session files stay (they are the transcript).
func (r *Runtime) CleanupIteration(ctx context.Context, s sandbox.Session) error {
	if err := runtime.RemoveFile(ctx, s, r.lastResult); err != nil {
		return r.fail("cleanup", err)
	}
	return nil
}

// SaveTranscript implements runtime.TranscriptHandler: writes the raw
// stream-json of every iteration to <runDir>/transcript.jsonl, downloads the
// debug logs to <runDir>/claude-debug-N.log and Claude's session files
// (CLAUDE_CONFIG_DIR/projects) to <runDir>/claude-projects/. Missing debug
// logs and session files are not errors (the CLI may have died early).
func (r *Runtime) SaveTranscript(ctx context.Context, s sandbox.Session, runDir string) error {
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return r.fail("transcript", err)
	}
	// The run directory is written through package rundir (never through
	// a symlink).
	d, err := rundir.Open(runDir)
	if err != nil {
		return r.fail("transcript", err)
	}
	err = d.WriteAtomic(transcriptOut, r.transcript.Bytes(), 0o600)
	d.Close()
	if err != nil {
		return r.fail("transcript", err)
	}
	for _, p := range r.debugLogs {
		if _, ok, _ := runtime.ReadFile(ctx, s, p); !ok {
			continue
		}
		if err := s.Download(ctx, p, filepath.Join(runDir, path.Base(p))); err != nil {
			return r.fail("transcript", err)
		}
	}
	if res, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"test", "-d", ProjectsDir}}); err == nil && res.ExitCode == 0 {
		if err := s.Download(ctx, ProjectsDir, filepath.Join(runDir, "claude-projects")); err != nil {
			return r.fail("transcript", err)
		}
	}
	return nil
}
