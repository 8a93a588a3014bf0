// Package hooks implements the sandbox tool hooks behind `fullsend hook
// NAME`, speaking Claude Code's command-hook protocol: the hook reads one
// JSON payload on stdin (session_id, transcript_path, cwd, hook_event_name,
// tool_name, tool_input, tool_response for PostToolUse, tool_use_id) and
// answers on stdout.
//
// It owns the hook rules and the settings.json wiring (Settings); the claude
// runtime writes that file, the CLI (internal/cli/hook.go) runs Handle.
//
// # Hooks
//
//	bash-risk-pretool          PreToolUse  Bash|Write|Edit|…  dangerous command shapes; edits of hook config
//	ssrf-pretool               PreToolUse  Bash|WebFetch|mcp  internal / metadata addresses (internal/netguard)
//	tool-allowlist-pretool     PreToolUse  *                  FULLSEND_TOOL_ALLOWLIST (opt-in)
//	canary-pretool             PreToolUse  *                  canary token in a tool input (exfiltration)
//	canary-posttool            PostToolUse *                  canary token in tool output (secret read)
//	secret-redact-posttool     PostToolUse *                  secrets in tool output
//	unicode-posttool           PostToolUse *                  bidi, tag, zero-width characters in tool output
//	context-suppress-posttool  PostToolUse *                  prompt-injection text in tool output
//
// # Protocol and failure
//
// Allow: exit 0, no output. PreToolUse block: exit 0 with
// hookSpecificOutput.permissionDecision "deny" and a reason shown to the
// model. PostToolUse block: exit 0 with decision "block" and a reason. Claude
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
// addresses only through internal/netguard and never resolves names.
// Secret and injection detection use internal/scan when the CLI plugs it in
// through TextScanner, and a small built-in rule set otherwise.
package hooks
