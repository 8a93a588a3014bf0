// Package run orchestrates one run of a harness (seed 002, DESIGN.md
// "Runtimes" and "Sandbox"): it turns a resolved harness into a Plan and
// executes it in a sandbox with an agent runtime, leaving a run directory
// with report.json behind. It owns the plan, the sandbox workspace layout
// the runner writes, the AGENTS.md / CLAUDE.md injection, both context
// scans' wiring and fail modes, the validation loop, the host scripts and
// the run directory format. It does not resolve (package resolve), scan
// (package scan), isolate (package sandbox) or talk to models (package
// runtime and its runtimes); it calls them.
//
// # Run, Plan and Execute
//
// Run is the one entry point of a caller (the CLI): from a Request (the
// plan's Options, and the services only the caller has: resolving the
// harness, loading the config, its own check of the plan, the fetch
// service's store and network, the runs directory, backend settings) it
// resolves, checks, plans and executes, in a fixed order: the resumed
// run's runtime, resolve, config, runtime names (CheckHarnessRuntime),
// NewPlan, the scan acceptances, Request.CheckPlan, Plan.CheckRuntime and
// the native model settings, all before any host script or sandbox. An
// error of the caller's settings found there is a *UsageError (exit 2).
//
// NewPlan is pure apart from reading files: from the resolve.Result (every
// reference already a local path), the org config and Options it computes
// the runtime (--runtime > harness runtime: > config runtime: > claude; the
// script runtime's file is --script or <harness>.script.yaml beside the
// harness), the backend (--sandbox > config sandbox.backend > local), the
// sandbox.Spec, the agent name (frontmatter name, else file basename), the
// skill and plugin list, host files after ${VAR} expansion, env.runner and
// env.sandbox (values ${VAR}-expanded from the runner's environment; unset
// variables become empty, with a note), scripts, validation settings, the
// target repository and the scan options. It writes nothing and starts
// nothing. Execute then runs the phases, each timed in the report:
//
//	preflight_check
//	             validation_loop.preflight_check, `sh` on the host like a host
//	             script (hostsvc.go), log preflight_check.log; before it, a runtime
//	             that cannot run here (the claude CLI not found) fails the run
//	             (Plan.CheckRuntime)
//	pre_script   host, env.runner + FULLSEND_RUN_DIR/OUTPUT_DIR, log pre_script.log;
//	             every host script runs in a fresh empty private directory, never
//	             the run dir (whose output/ the agent wrote)
//	stage        the local agent file, skills and plugins copied into <run dir>/staged
//	             through an os.Root (a path swapped for a symlink out of the fullsend
//	             dir fails); the scan and the upload then read only the copies
//	host_scan    repo CLAUDE.md, CLAUDE.local.md, AGENTS.md, .claude/CLAUDE.md,
//	             .claude/skills/**/SKILL.md, .claude/{rules,commands,agents,
//	             output-styles}/** and what they @import (scan.FollowImports; an
//	             import leaving the repo is critical); the org AGENTS.md when it
//	             will be injected; the agent definition and every skill and plugin
//	             file (origin remote for cached remote skills); a runtime.RepoChecker's
//	             findings on the repo's settings for its agent CLI (claude:
//	             .claude/settings*.json, agents, .mcp.json; reposettings.go)
//	fetch_service
//	             allow_runtime_fetch only: package fetchsvc on loopback; its
//	             address joins Spec.Network.Services, FULLSEND_FETCH_URL/TOKEN
//	             the agent's environment (never .env), log fetch.log
//	provision    sandbox.Backend.Provision(plan.Spec), bounded by the harness's
//	             sandbox_timeout_seconds
//	layout       /sandbox/workspace (.env, .env.d/, host files, the repo copy,
//	             injections, .git/info/exclude), /sandbox/output, other host files
//	bootstrap    Runtime.Bootstrap (claude-config: agents/<name>.md, skills/, plugins/)
//	             and HooksBootstrap when implemented
//	host_services
//	             when the run has host services: the in-sandbox forwarder of
//	             package hostsvc (the org's sandbox.host_services, plus for the
//	             claude runtime a loopback endpoint of the runner's
//	             FULLSEND_MODEL_BASE_URL / ANTHROPIC_BASE_URL; all in
//	             Spec.Network.Services)
//	scan_context /usr/local/bin/fullsend scan context --json --fail-mode M
//	             --config-dir /sandbox/claude-config [--remote] <repo dir>
//	agent[i]     Runtime.Run (CleanupIteration before i > 1), events to events.jsonl;
//	             verdict events (a hook denied a call or blocked its output, a
//	             permission denial) are findings of phase agent[i]. At
//	             timeout_minutes the run stops with status timeout (ErrTimeout):
//	             no download, a bounded transcript save, teardown
//	download[i]  /sandbox/output -> <run dir>/output
//	validate[i]  schema (package schemacheck, no external $ref loaded)
//	             and validation_loop.script (non-zero exit = invalid)
//	post_script  only after a valid result; + FULLSEND_RESULT_FILE
//	teardown     fetch service and host services closed, Session.Terminate on a
//	             fresh context, on every path (the egress proxy cuts open
//	             connections, so a slow model server never holds it)
//
// The in-sandbox scan runs after bootstrap, so it sees everything the
// agent will load ("after all files are assembled", seed 002 step 9b).
//
// # Workspace layout
//
//	/sandbox/claude-config/agents/<agent>.md    runtime bootstrap
//	/sandbox/claude-config/skills/<name>/       personal level: wins over the repo's
//	/sandbox/claude-config/plugins/<name>/
//	/sandbox/workspace/.env                     export NAME='value' for env.sandbox + FULLSEND_OUTPUT_DIR
//	/sandbox/workspace/.env.d/                  host_files with such dests (expand: true = ${VAR} from the runner env)
//	/sandbox/workspace/<repo>/                  copy of the target repository (never the host files)
//	/sandbox/output/agent-result.json           the agent's result (FULLSEND_OUTPUT_DIR)
//
// Host files whose dest is elsewhere (e.g. /tmp/.gcp-credentials.json) are
// uploaded to that path. A missing optional source (unset variable or no
// file) is skipped with a note; a missing required one is an error naming
// host_files[i]. The target repository is --target-repo, else the git
// repository containing the working directory; outside a git repository
// without --target-repo, NewPlan fails with ErrNoTargetRepo (never a silent
// empty directory); with "none" the agent works in an empty
// /sandbox/workspace/repo. The run directories and
// the cache are left out of the copy when they live inside the repository
// (the README's case). readonly_repo makes the copy read-only (chmod a-w):
// the host repository is never written in any case.
//
// Skills: the harness's skills in order, then skills reached through the
// graph (dependencies, agent references), overlay references not applied
// left out. Each is named by its SKILL.md frontmatter name, else its
// basename; a taken name becomes <parent>-<basename>, then <name>-N: two
// skills are never merged silently (the corpus's retro github overlay has
// two skills in directories named "github"). Repository skills of the same
// name are shadowed (personal over project) and listed in the report.
//
// # The target repository on the host
//
// The host repository is only read (nothing is ever written into it), and
// every read inside it — the context files of the host scan and of the
// injection decision, .claude/skills, .git/info/exclude — goes through an
// os.Root on the repository with no symlink followed at any path
// component (repoFS: Lstat, open, os.SameFile, so a swap in between is
// caught). A symlink there is treated as the copy treats it: left out. An
// AGENTS.md or CLAUDE.md that is a symlink (wherever it points) counts as
// absent, with a note, so the org default or the bridge is injected; a
// symlinked .claude or .claude/skills is neither scanned nor counted as
// repository skills; a symlinked .git, .git/info or .git/info/exclude is
// not read, and the copy's exclude lists fullsend's entries only (a note).
// The host scan reads each repository context file once, when it lists
// it. Symlinks met while the copy is walked down to an excluded runs dir
// are left out too.
//
// # AGENTS.md injection (seed 002, step 8a, read as a sequence)
//
//  1. The repository has no AGENTS.md: the org default is injected — the
//     fullsend dir's AGENTS.md when present, else an embedded default.
//  2. The runtime is claude and the repository now has AGENTS.md but no
//     CLAUDE.md: a bridge CLAUDE.md importing @AGENTS.md is injected.
//  3. Both exist: nothing changes.
//
// Injected files are appended to the copy's .git/info/exclude ("/AGENTS.md",
// "/CLAUDE.md"); without a .git directory a note says so.
//
// # Policy mapping
//
// filesystem_policy (OpenShell) on the local backend: a path at or below
// what the backend provides itself (/sandbox, /usr, /bin, /sbin, /lib*,
// /etc — a curated read-only subset of the host's —, /proc, /dev, /sys,
// /tmp and /var/tmp — private tmpfs —, /run) is what the agent gets; any
// other path is skipped with a note and never bound from the host: policy
// paths name the sandbox's file system (in OpenShell, the image's), and a
// policy may be a remote resource, so honouring them on the host would let
// it expose host files (~/.ssh, /var/log, …) to the agent. The only host
// directories in the sandbox are the ones fullsend itself places there (the
// repository copy, skills, host_files).
// include_workdir is implied (the repository copy is the working
// directory). Image-based backends (docker) get no host mounts: the image
// provides the file system, and Spec.Image is the harness image (or the
// config's sandbox.docker.image). Network: every endpoint of the policy's
// network_policies and of each openshell profile becomes an allowlist entry
// "host:port" (or "host" = ports 80 and 443), checked with
// sandbox.ParseAllow; per-binary restrictions and providers are not
// enforced (downgrade.go: a note in report.json and a warning printed
// before anything runs; so are env.sandbox and env.runner variables unset
// on the runner, and each sandbox limit the backend's Capabilities grade
// below Enforced, printed before the sandbox is provisioned). timeout_minutes is the sandbox's per-exec wall
// time and bounds the whole agent loop (default DefaultWallTime) and each
// host script (default DefaultScriptTimeout).
//
// # Fail modes
//
// The fail mode comes from the org config and the harness (a harness can
// only make it stricter; scan.OptionsFromConfig). closed: a critical finding
// of the host scan blocks before a sandbox exists; a critical finding of
// the in-sandbox scan, or an in-sandbox scan that cannot run, blocks before
// the agent starts (BlockedError wrapping scan.ErrBlocked, status
// "blocked"). open: the same findings are recorded in report.json and
// printed as warnings, and the run goes on. security.host_scanners: false
// is ignored (with a note): host scans always run.
// Plan.Scan.Accept (the fullsend dir's scan-accept.yaml, set by Run)
// applies to the host scan and, uploaded to the sandbox (accept.go), to
// the in-sandbox scan: an accepted finding is recorded (Accepted) and never
// blocks.
//
// # Progress
//
// ExecOptions.Progress (package progress) receives each phase's start and
// end and, from the runtime's events, each agent turn, tool call, model
// retry and notice; the CLI renders them on stderr.
//
// # Run directory
//
// <runs dir>/<run-id>/ (Options.RunsDir, else <workspace>/.fullsend/runs;
// package rundir says where and how it is accessed; run id: UTC time to the millisecond
// + 6 random hex digits, so ids sort by time) holds report.json (Report,
// written atomically on every path), events.jsonl (normalised runtime
// events as they happen), transcript.jsonl (the runtime's TranscriptHandler
// output, else a copy of events.jsonl), pre_script.log, post_script.log,
// validation_script.N.log, fetch.log (runtime fetch) and output/ (the sandbox's /sandbox/output after
// the last iteration).
//
// # Runtime boundary
//
// run knows a runtime only through package runtime: runtime.Runtime and
// the optional capabilities declared there, each asserted once here. The
// runtime's settings are its own typed runtime.Config: the CLI registers
// and parses every runtime's flags (runtime.Flags, package builtin), the
// plan's runtime turns its command-line settings and its harness fields
// into the run's Config (runtime.Planner; runtime.TargetPlanner once the
// target repository is known: the native runtime's --image files), and
// the plan carries that value untouched (Plan.Settings, serialised as the
// runtime_options it hands the runtime as RunInput.Options). The planner
// also names what the run must do for the runtime: mounts and host
// services (the claude CLI bound into a local sandbox), key secrets, the
// env.sandbox entries it keeps out (the native model key), notes, and
// whether it can run here at all (Plan.CheckRuntime). Before anything runs
// a runtime.Preflighter may refuse the run (the native model settings and
// endpoint); at bootstrap a runtime.ChildSessioner gets the backend's
// Provision for child sessions, a runtime.WebFetcher the sandbox's egress
// policy and the scan pipeline; a runtime.OfferReporter fills the report's
// capabilities; a runtime.RepoChecker judges the repository's own settings
// for its agent CLI; --resume needs a runtime.Resumer. A missing or invalid
// result (an error wrapping runtime.ErrResult) is not fatal: it is judged
// by the validation step and retried with the errors as feedback, in the
// same conversation.
// Each Outcome counts one iteration; the report sums them. web_fetch gets
// the sandbox's egress policy (plan network allowlist, SandboxOptions'
// private networks and resolver) and the run's scan pipeline: fetched text
// is scanned as remote context, its findings recorded with phase
// "web_fetch". report.json's capabilities (capabilities.go) records what
// the agent was given: backend, limits and skill digests for every
// runtime, and the tools, profiles, loop limits and model endpoint (never
// the key) the native loop reports.
//
// `--resume RUN_ID` re-runs the plan in the existing run directory: it must
// hold a native transcript.jsonl, and its report (if any) must be a native
// run that did not succeed; that report is kept as report.attempt-N.json
// and the new one counts Resumes. Only the first iteration resumes; later
// ones continue with feedback. Every run holds an exclusive flock on its
// run directory for its life, so a run still executing elsewhere cannot be
// resumed (ErrRunInProgress). The sandbox is provisioned afresh.
//
// # Errors and cancellation
//
// Planning errors are *PlanError naming the harness field. Execute returns
// nil only when the agent succeeded and its result validated (or nothing
// needed validating); otherwise *ScriptError, *BlockedError, *AgentError,
// *InvalidResultError, a sandbox or runtime error, or the context's error.
// The report's status is succeeded, failed, blocked, invalid or canceled
// (exit code 130). Cancellation (Ctrl-C: cli.Main's signal context) stops
// the current phase; host scripts are killed with their process group; the
// sandbox is terminated on a fresh context bounded by TeardownTimeout; the
// staging directory is removed.
//
// Tracing (package trace): the run is one span (the CLI's root span, or its
// own), each phase a child span ("invoke_agent AGENT" for an agent
// iteration, with token usage), each sandbox command a "sandbox.exec" span,
// egress decisions events on the run span; the agent's environment gets
// TRACEPARENT of its invoke_agent span when the run is traced.
package run
