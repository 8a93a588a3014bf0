// Package claude implements the "claude" runtime: the Claude Code CLI run
// inside the sandbox, with fullsend's security hooks wired in.
//
// It owns the Claude-specific layout and invocation, and the parser of
// Claude Code's stream-json output.
//
// # Layout
//
//	/sandbox/claude-config/               CLAUDE_CONFIG_DIR
//	    agents/<name>.md                  agent definition (loaded with --agent <name>)
//	    skills/<skill>/, plugins/<name>/  personal level: wins over repo skills
//	    settings.json                     hook wiring (user level)
//	    fullsend-logs/claude-debug-N.log  --debug-file of the N-th Run
//	    projects/                         Claude's own session files
//	/sandbox/workspace/.claude/settings.json   hook wiring, passed with --settings
//	/sandbox/workspace/.claude/hooks/manifest.json  which hooks are wired
//
// # The CLI
//
// fullsend does not ship Claude Code. Locate finds the runner's CLI (a
// configured path, else `claude` on PATH), follows symlinks to the real
// file and returns an Install: a native executable is bound read-only at
// SandboxBinary (/usr/local/bin/claude); npm's placeholder (an
// install whose postinstall did not run) is replaced by the platform
// package's native build installed beside it; a node-script install binds
// its package directory and its node. The runner (internal/run) adds the
// mounts to the sandbox spec for the local backend; the docker backend runs
// the CLI of its image. A CLI that cannot be found is an error wrapping
// ErrNotFound that names where it looked.
//
// # Invocation
//
// Run executes, with the prompt on stdin and the target repo as working
// directory, after sourcing /sandbox/workspace/.env and .env.d/* (exported):
//
//	[node] claude --print --agent <name> --output-format stream-json --verbose
//	       --include-partial-messages --include-hook-events --strict-mcp-config
//	       --settings /sandbox/workspace/.claude/settings.json
//	       --permission-mode bypassPermissions [--model M] [--max-turns N]
//	       [--effort E] [--debug-file …]
//
// Partial messages carry each turn's final token usage; hook events carry
// every hook's answer, from which verdicts are recorded (see Parser).
// Permission prompts are bypassed (nobody can answer them in a sandbox); the
// PreToolUse hooks still run and can deny any call. The environment carries
// CLAUDE_CONFIG_DIR, IS_SANDBOX=1, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1,
// DISABLE_AUTOUPDATER=1 and the run's canary token (FULLSEND_CANARY_TOKEN, a
// tripwire the canary hooks look for). Options (RunInput.Options): binary,
// node, max_turns, permission_mode, effort, debug.
//
// # Verdicts
//
// Every answer of a hook that denies a call (PreToolUse) or blocks its
// output (PostToolUse), or of a hook that exits 2, becomes an
// EventVerdict: fullsend's hooks tag their answers with the hook, rule,
// tool and call id (hooks.Tag), which Claude Code passes through in its
// hook_response events; hooks of the target repository are named by
// Claude Code's "Event:Tool". The result's permission_denials not already
// reported add a verdict each. The stream is the CLI's own output: a tool
// the agent runs cannot remove lines from it.
//
// # Hooks
//
// BootstrapHooks writes settings.json wiring every hook of internal/hooks
// (minus BootstrapInput.DisabledHooks, hook names or harness
// sandbox_hooks keys) to one command per event, `/usr/local/bin/fullsend
// hook each <name>...` (one process runs every hook of the event, each under
// its own tool matcher; see internal/hooks). It refuses
// to run when the target repo's own .claude/settings.json or
// settings.local.json is not one JSON object, sets disableAllHooks: true,
// or sets a key that starts a process, sets the environment, loads
// plugins or trusts the repository's MCP servers (CheckProjectSettings,
// projectsettings.go), unless BootstrapInput.TrustRepoSettings (harness
// security.trust_repo_settings) accepts the latter; then hooks the repo
// adds run too (inside the same sandbox). --strict-mcp-config with no
// --mcp-config: no MCP server starts, from the repo's .mcp.json or
// anywhere else.
//
// Tool allowlist: when the agent definition restricts its tools
// (frontmatter `tools:`, e.g. "Bash(gh,curl,jq), Skill"; read from the
// runner's verified host copy) or the runner passes
// BootstrapInput.ToolAllowlist, tool-allowlist-pretool is wired with each
// list as `--allow 'LIST'` on the PreToolUse command line, unless the harness sets
// sandbox_hooks.tool_allowlist: false. A tools: line that does not parse
// fails Bootstrap. The list is never exported in the environment: .env
// and .env.d/ are in the writable workspace and sourced before every
// iteration, so the agent could change it for the next one. The settings
// files are writable too, so before every iteration Run empties
// CLAUDE_CONFIG_DIR but for projects/ (transcripts, without memory/) and
// fullsend-logs/, uploads the agent, skills, plugins and skills fetched at
// run time again from their host copies, rewrites both settings files
// from memory and checks the repo's settings again (Claude Code reads its
// configuration at start; the bash risk hook refuses edits of it
// meanwhile). What an
// allowed program does is not confined: see package hooks. It also plants the run's canary token in a
// decoy /sandbox/.aws/credentials (only when no such file exists), next to
// the FULLSEND_CANARY_TOKEN variable, so secret harvesting trips the canary
// hooks.
//
// # Failure
//
// Run reads the stream live (events arrive as the CLI produces them) and
// returns the parsed Outcome with a *runtime.Error when the CLI is missing
// (exit 127), times out, exits without a result message, exits non-zero,
// or reports an error result (error_max_turns → StopMaxTurns, others →
// StopError; a model API error is worded "model API error (HTTP 500): …"). SaveTranscript writes the raw stream of every iteration to
// <runDir>/transcript.jsonl and downloads the debug logs and session files.
package claude
