// Package runtime defines the contract between the runner (internal/run) and
// the agent runtimes that execute an agent inside a provisioned sandbox
// session (selected by --runtime flag, harness or config default).
//
// It owns the sandbox layout constants, the Runtime interface and its
// optional capabilities, the normalised Event and Outcome types, and the
// Factory type. The runtimes themselves (internal/runtime/script,
// internal/runtime/claude, internal/runtime/native) are listed once, in
// internal/runtime/builtin, where the runner and the CLI look them up by
// name; they know a runtime only through this package.
//
// # Settings and capabilities
//
// A runtime's settings are its own typed Config. It registers its
// command-line flags (FlagOwner → Flags; flags several runtimes share:
// AddSharedFlags), decodes them and its harness and config.yaml fields
// into the run's Config (Planner; TargetPlanner once the target
// repository is known), and gets that Config back, in its own encoding,
// as RunInput.Options. What a runtime needs from the runner beyond Run is
// an optional capability the runner asserts once: TranscriptHandler,
// HooksBootstrap, ChildSessioner (child sandbox sessions), WebFetcher
// (the sandbox's egress policy and the scan pipeline), OfferReporter
// (report capabilities), Preflighter (refuse a run that cannot succeed
// before anything is provisioned), ImageChecker (prompt images),
// Resumer (--resume), RepoChecker (the repository's own settings for its
// agent CLI), TranscriptPrinter (runs show --transcript), HostChecker
// (fullsend doctor), and Unguarded (no tool-call checks, so no verdicts).
// Runtimes state each capability they implement with a compile-time
// assertion. Adding a runtime is one package and one entry in builtin.
//
// # Lifecycle
//
// For one run the runner calls, in order: Get(name) → Env(in) →
// Bootstrap(in) → BootstrapHooks(in) when the runtime implements
// HooksBootstrap → for each validation iteration: CleanupIteration (from
// the second on), Run → SaveTranscript when the runtime implements
// TranscriptHandler (also after a failed iteration). Every sandbox access goes
// through the sandbox.Session given to each call; runtimes never touch the
// host except to read the bootstrap inputs and to write into the run
// directory.
//
// # Sandbox layout
//
//	/sandbox/claude-config/            ClaudeConfigDir (CLAUDE_CONFIG_DIR, personal level)
//	    agents/<name>.md               agent definition (from BootstrapInput.AgentFile)
//	    skills/<skill>/SKILL.md …      harness skills (personal level: win on name collision)
//	    plugins/<plugin>/ …            harness plugins
//	/sandbox/workspace/                WorkspaceDir
//	    .env, .env.d/                  written by the runner (host_files, env.sandbox)
//	    .claude/settings.json          hook wiring (claude runtime)
//	    .claude/hooks/                 hook configuration (claude runtime)
//	    <repo>/                        target repository = the agent's working directory
//
// # Security matrix
//
// What each runtime adds on top of what the runner does for every runtime
// (host-side scan of repo context files, of the agent definition, skills and
// plugins before upload, `fullsend scan context` inside the sandbox, sandbox
// isolation and network allowlist, fail_mode):
//
//	feature                       claude                    script          native
//	bash command risk check       PreToolUse hook           n/a (no model)  host-side loop check
//	SSRF pre-tool                 PreToolUse hook           n/a             host-side loop check
//	tool allowlist                PreToolUse hook (opt-in)  n/a             fixed tool set + allowlist
//	canary token                  Pre/PostToolUse hooks     n/a             host-side loop check
//	secret redaction              PostToolUse hook: flag*   n/a             redacts tool output
//	unicode normalisation         PostToolUse hook: flag*   n/a             normalises tool output
//	context suppression           PostToolUse hook: flag*   n/a             host-side loop check
//	transcript / debug log        stream-json + debug log   op event log    host-side event log
//
// (*) Claude Code PostToolUse hooks cannot rewrite tool output: the hook
// blocks the turn with guidance the model sees, it cannot remove the
// offending bytes from the context. Redaction proper needs the native loop
// or the egress proxy.
//
// The script runtime runs no model: it executes a fixed list of operations
// from a YAML file (behaviour tests, demos), so model-facing checks do not
// apply; its operations still run inside the sandbox with the same isolation.
// The native runtime runs the tool loop on the host and applies its checks
// before executing a tool call and before returning its output to the model;
// it therefore needs no in-sandbox hooks.
//
// A runtime that implements Runtime but not HooksBootstrap installs no
// sandbox tool hooks; it must document here what it provides instead.
//
// # Errors
//
// Runtime failures are *Error values naming the runtime and the operation
// ("runtime claude: run: agent exited with status 1"); Get returns
// *UnknownError listing the registered names. Run returns a non-nil Outcome
// whenever the agent started, even when it also returns an error.
package runtime
