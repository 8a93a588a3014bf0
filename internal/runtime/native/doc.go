// Package native is fullsend's built-in agent runtime ("native"): a bounded
// tool loop that runs on the host against an OpenAI-compatible or Anthropic
// model API (package model) and executes every tool inside the sandbox
// session. No agent CLI is installed in the sandbox and the API key never
// enters it: the key lives in the host process, is sent only to the model
// endpoint, and is redacted from every artifact, event and error.
//
// # Tools
//
//	bash                 bash -c in the working directory; the workspace .env files are sourced first
//	read_file            text file, optional line offset/limit (binary refused)
//	write_file           create/replace (parents created)
//	edit_file            exact-string replace; 0 or >1 matches is an error the model sees
//	list_dir             ls -1Ap
//	view_image           png/jpeg/gif/webp ≤ 5 MiB inside /sandbox/workspace (symlinks resolved)
//	read_skill_resource  a file of a listed skill: must be in the run-start registry and still match its sha256
//	run_skill_script     an exact "skill:scripts/x" allowlist entry; the sandbox copy must match the registry sha256
//	fetch_skill          only with allow_runtime_fetch: `fullsend fetch-skill URL` in the sandbox
//	delegate_task        one child loop: fresh context, profile default|read_only|web_fetch, sanitized summary,
//	                     optional returnSchema (JSON Schema) validated, with up to 2 correction requests
//	web_fetch            only with Options["web_fetch"]="true" and SetWeb: runs on the host through
//	                     fetch.WebClient (http/https, the run's egress allowlist, internal addresses
//	                     refused outside allowed_private_networks, redirects re-vetted, ≤ 5 hops,
//	                     2 MiB, 30 s); HTML reduced to text plus links, binary refused; the text is
//	                     scanned as remote context (WebConfig.Scan) and a blocking finding withholds it
//
// Options["images"] (newline list of host files; `fullsend run --image`)
// attaches png/jpeg/gif/webp images (≤ 5 MiB, sniffed) to the first user
// message; a copy is kept in images/prompt-<k>.<ext> and the transcript
// keeps the path, media type, size and sha256, never the pixels.
//
// Tool outputs reach the model cut to MaxToolOutput (head and tail kept,
// with a marker); the whole output is kept in the run directory. Malformed
// calls (bad JSON, unknown tool, missing or mistyped argument) become error
// results the model can recover from. Before a tool runs, the PreToolUse
// rules of package hooks (bash risk, SSRF, canary, tool allowlist) are
// applied host-side; a block is an error result and nothing reaches the
// sandbox. The tool allowlist is the agent definition's frontmatter tools:
// (hooks.RunAllowlists; off with sandbox_hooks.tool_allowlist: false),
// matched through the one native-to-Claude-Code name table, claudeNames in
// tools.go; Bash(a,b) limits bash commands to those programs. After it
// runs, the PostToolUse rules apply: a secret or canary finding withholds
// the output from the model (unlike Claude Code hooks, the loop can
// actually remove it); other findings prepend a notice. Every block, of
// the loop or of a delegated child, is also an EventVerdict
// (runtime.VerdictEvent), which the runner records as a report finding.
// The canary rules look for the run's canary token (runtime.NewCanary),
// planted at runtime.DecoyPath at bootstrap as the claude runtime does (the
// hooks run host-side, so the token is not exported to the sandbox).
//
// # Delegation
//
// delegate_task starts a child loop (one level: children cannot delegate)
// whose tool table is exactly its profile's (profiles in tools.go):
// default, read_only (read and list only) or web_fetch (the web_fetch tool
// alone; "web_fetch tool unavailable" where it is not built in). The
// subagent_profiles option (the harness's native.subagent_profiles,
// default "default"; "none" offers no delegate_task) lists the allowed
// ones; the offered tool schema enumerates them and any other is refused
// as an error result. A child's structured return (returnSchema) is kept
// raw in children/<k>/return.json; the parent sees opaqueView's copy, in
// which strings and objects the schema does not pin down are opaque
// {"@link":"opaque:#/pointer"} references (opaque.go).
//
// With max_parallel_children N > 1 (1-8, default 1) the delegate_task calls
// of one turn run ahead of the others, at most N at once, each in a
// sandbox session of its own (SetChildSessions: the runner's Provision;
// a copy of the parent's workspace, downloaded once per turn; terminated
// after). Results are recorded in call order and children are numbered by
// call order. The children of a turn share the parent's remaining
// output-token budget (a mutex-guarded pool, checked before and charged
// after each call); a child's failure is its call's error result, and the
// context stops them all. N > 1 without SetChildSessions is an options
// error. With N = 1 children run one after another in the parent's session.
//
// # Bounds and stop reasons
//
// Limits: turns (model calls), total output tokens (each call asks for at
// most what is left), wall time (RunInput.Timeout or the wall_time option).
// Stop reasons: completed, max_turns, max_tokens, timeout, canceled, error.
// Only completed exits 0; a structured result (RunInput.ResultPath) that is
// missing, not JSON or not valid against the result_schema option is an
// error wrapping ErrResult (exit code 1).
//
// # Run directory
//
//	transcript.jsonl       start record, every message (tool results with their tool record), resume, stop,
//	                       snapshot and compaction records
//	calls.jsonl            one line per model HTTP attempt: status, request id, bytes, timings, retry wait, token and prompt-cache counts
//	tool-outputs/<n>.txt   whole output of tool call n
//	images/<n>.<ext>       images returned by view_image (the transcript keeps file + sha256, not pixels)
//	images/prompt-<k>.<ext> prompt images (--image)
//	web/<n>.body, .headers raw response of web_fetch call n (hops, status, headers)
//	skill-registry.json    skills (name, description, files with sha256, allowlisted scripts, source)
//	skill-reads.jsonl      one line per read_skill_resource read: skill, path, sha256 and size of the bytes read, time, turn, tool call
//	skill-scripts.jsonl    one line per run_skill_script run or refusal: skill, path, sha256, args, exit code, duration, time, turn, tool call
//	children/<k>/          the same layout for the k-th delegate_task child, and return.json (its raw structured return)
//	snapshots/<sha256>.tar the last workspace snapshot (workspace.go), named in a snapshot record of the transcript
//
// Every line of transcript.jsonl is written with one write call. Resume
// (Options["resume"]="true" on Run, i.e. `fullsend run --resume RUN_ID`)
// rebuilds the State from it (LoadState): a torn last line is dropped, tool
// calls left without result by a kill are answered with an "interrupted"
// error result, and the next request carries exactly the system prompt,
// tools and messages the killed process would have sent. The resumed run
// keeps its recorded endpoint and model unless a flag or the environment
// names another. Turn and token budgets count the whole run, resumed or not.
// On a backend with sandbox.Snapshotter the loop keeps the sandbox's
// writable state after each turn's tools and when it ends; a resume
// verifies the last snapshot against its transcript record and restores
// it before the first turn (workspace.go; docs/long-runs.md).
// With Limits.CompactTokens (option compact_tokens), a call whose input
// reached it makes the loop summarise the older turns with the model and
// drop them (a compaction record, which LoadState replays; compact.go).
//
// Chat (Options["chat"]="true", `fullsend chat`): RunDir holds one
// conversation across calls; the first call starts it with Prompt, each
// later one (in this process or another) rebuilds it as a resume does and
// adds Prompt (and Options["images"], numbered after the kept ones) as the
// next user message, with a fresh turn and token budget (chat.go).
//
// # Skills
//
// Bootstrap uploads skills to the shared layout and builds the registry from
// the resolved host copies: name and description from the SKILL.md
// frontmatter (internal/frontmatter; an unreadable block is a note in the
// registry, not a failure), every regular file with its sha256, scripts/ as
// the script allowlist. The model sees only names and descriptions in the system
// prompt and reads the rest on demand (progressive disclosure).
//
// # Capability snapshot
//
// After each Run, Snapshot returns what the loop offered: tools, subagent
// profiles, limits and the model endpoint (dialect, base URL redacted,
// model, auth mode, the key's variable name; never the key). The runner
// puts it in report.json.
//
// # Failure
//
// Run returns a nil Outcome only when the loop never started (bad options,
// model configuration, run directory); otherwise an Outcome with the stop
// reason, and a *runtime.Error naming the step.
package native
