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
// # Invocation
//
// Run executes, with the prompt on stdin and the target repo as working
// directory, after sourcing /sandbox/workspace/.env and .env.d/* (exported):
//
//	claude --print --agent <name> --output-format stream-json --verbose
//	       --settings /sandbox/workspace/.claude/settings.json
//	       --permission-mode bypassPermissions [--model M] [--max-turns N]
//	       [--debug-file …]
//
// Permission prompts are bypassed (nobody can answer them in a sandbox); the
// PreToolUse hooks still run and can deny any call. The environment carries
// CLAUDE_CONFIG_DIR, IS_SANDBOX=1, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1,
// DISABLE_AUTOUPDATER=1, the run's canary token (FULLSEND_CANARY_TOKEN, a
// tripwire the canary hooks look for) and FULLSEND_TOOL_ALLOWLIST when the
// harness restricts tools. Options (RunInput.Options): binary, max_turns,
// permission_mode, debug.
//
// # Hooks
//
// BootstrapHooks writes settings.json wiring every hook of internal/hooks
// (minus BootstrapInput.DisabledHooks; tool-allowlist-pretool only with an
// allowlist) to `/usr/local/bin/fullsend hook <name>`. It refuses to run
// when the target repo's own .claude/settings.json or settings.local.json
// sets disableAllHooks: true or is not valid JSON. Hooks the repo adds run
// too (inside the same sandbox). It also plants the run's canary token in a
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
// StopError). SaveTranscript writes the raw stream of every iteration to
// <runDir>/transcript.jsonl and downloads the debug logs and session files.
package claude
