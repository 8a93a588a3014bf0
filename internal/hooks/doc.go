// Package hooks implements the sandbox tool hooks behind `fullsend hook
// NAME`, speaking Claude Code's command-hook protocol: the hook reads one
// JSON payload on stdin (session_id, transcript_path, cwd, hook_event_name,
// tool_name, tool_input, tool_response for PostToolUse, tool_use_id) and
// answers on stdout.
//
// It owns the hook rules and the settings.json wiring (Settings); the claude
// runtime writes that file, the CLI (internal/cli/hook.go) runs Handle and
// HandleEach.
//
// One process per event: settings.json wires a single command per event,
// `fullsend hook each NAME...` under the matcher "*", which reads the
// payload once and runs every named hook of that event whose own matcher
// (the column below, a regular expression over the whole tool name) selects
// the tool, in installation order; the first hook that blocks answers,
// tagged with its name. A tool call thus starts two fullsend processes, not
// eight. The hook patterns compile on first use (package lazyre), not at package
// initialisation, so commands that run no hook do not pay for them.
//
// # Hooks
//
//	bash-risk-pretool          PreToolUse  Bash|Write|Edit|…  dangerous command shapes; edits of hook config
//	ssrf-pretool               PreToolUse  Bash|WebFetch|mcp  internal / metadata addresses (internal/netguard)
//	tool-allowlist-pretool     PreToolUse  *                  tools outside the agent's allowlist (opt-in)
//	canary-pretool             PreToolUse  *                  canary token in a tool input (exfiltration)
//	canary-posttool            PostToolUse *                  canary token in tool output (secret read)
//	secret-redact-posttool     PostToolUse *                  secrets in tool output
//	unicode-posttool           PostToolUse *                  bidi, tag, zero-width characters in tool output
//	context-suppress-posttool  PostToolUse *                  prompt-injection text in tool output
//
// # Tool allowlist
//
// An agent definition restricts its tools with a frontmatter `tools:` in
// Claude Code permission syntax ("Bash(gh,curl,jq), Skill", or a YAML
// list); AgentAllowlist reads it and RunAllowlists adds the runner's list
// (each list must permit a call). Both runtimes enforce it unless the
// harness sets security.sandbox_hooks.tool_allowlist: false: claude wires
// tool-allowlist-pretool, native runs the same check host-side. A tool is
// permitted when a rule names it (or a prefix ending in '*'); a Bash call
// under Bash(a,b) rules must be simple commands whose programs (basename
// of the first word after VAR=value assignments, in every pipeline
// segment, list element, subshell and group) are all listed; command and
// process substitution are refused. Redirection targets are not programs.
//
// Where the list lives, and what the agent can touch: Settings puts it on
// the PreToolUse command line (`fullsend hook each … tool-allowlist-pretool
// … --allow 'LIST'`) inside the settings files, never in the environment, because
// /sandbox/workspace/.env and .env.d/ are in the writable workspace and
// are sourced before every iteration. The settings files are writable by
// the agent too; Claude Code reads hooks once at start, the bash risk hook
// refuses edits of them, and the claude runtime rewrites them (and checks
// the repo's own settings again) before every iteration, so an edit never
// reaches a later hook run. The fullsend binary is a read-only mount. With
// --allow given, FULLSEND_TOOL_ALLOWLIST is ignored; the variable remains
// only for running the hook by hand.
//
// The allowlist decides which programs a command starts, not what an
// allowed program then does (gh aliases and extensions, curl -o, a git
// hook): it is a tripwire like the other hooks, and the sandbox's mounts
// and network allowlist stay the boundary.
//
// # Protocol and failure
//
// Allow: exit 0, no output. PreToolUse block: exit 0 with
// hookSpecificOutput.permissionDecision "deny" and a reason shown to the
// model. PostToolUse block: exit 0 with decision "block" and a reason.
// Handle adds a "fullsend" object (Tag: hook, rule, tool, tool_use_id) to a
// blocking answer; Claude Code ignores it and reports the whole answer in
// its stream-json hook events, where the claude runtime reads the verdict
// back (ParseAnswer). Claude
// Code PostToolUse hooks cannot rewrite tool output (MCP tools excepted): the
// "redaction" and "suppression" hooks can only tell the model what it must
// not use or repeat; real redaction belongs to the native runtime's loop or
// the egress proxy.
//
// When a hook cannot decide (unreadable payload, payload for the wrong
// event, broken allowlist, scanner error) Handle returns an error and the
// CLI exits 2 with a one-line reason on stderr, which Claude Code treats as
// a block: the hooks fail closed. Reasons never echo a matched secret.
//
// The hooks are tripwires in front of the sandbox; the enforcing boundaries
// are the sandbox's mounts and network allowlist. SSRF detection classifies
// addresses only through internal/netguard and never resolves names; its
// only exemptions are exact host:port entries of FULLSEND_ALLOWED_SERVICES
// and, for WebFetch, Env.WebFetchPrivateNetworks (the native runtime's
// host-side web_fetch admits the org's allowed_private_networks).
// Secret and injection detection use internal/scan when the CLI plugs it in
// through TextScanner, and a small built-in rule set otherwise.
package hooks
