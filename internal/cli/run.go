package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/resolve"
	runpkg "github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/runtime/builtin"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/termsafe"
)

type runFlags struct {
	runtime, sandbox, targetRepo, prompt, resume string
	// runtimes are every runtime's own flags (package builtin).
	runtimes *builtin.Flags
	ci       *runpkg.CIInfo // report.json "ci" (ci.go)
}

func newRunCmd(env *Env) *cobra.Command {
	var f ResolveFlags
	var rf runFlags
	var asJSON bool
	var ciOutput string
	cmd := &cobra.Command{
		Use:   "run [flags] HARNESS",
		Short: "Resolve, scan and run a harness's agent in a sandbox",
		Long: `run resolves HARNESS (path, https URL pinned with #sha256=, or an agent name
from config.yaml) and everything it references, runs its pre_script on this
host, scans the target repository's context files and the agent's
configuration, provisions a sandbox (--sandbox local|docker), lays out
/sandbox/claude-config and /sandbox/workspace, scans the assembled context
again inside the sandbox, runs the agent with its runtime (--runtime; default:
the harness's runtime:, then config.yaml's, then claude), validates its result
against validation_loop.schema (retrying with the errors fed back up to
max_iterations), downloads the output, runs post_script and tears the sandbox
down — also on failure and on Ctrl-C.

The target repository (--target-repo DIR; default: the git repository of the
current directory; "none" for an empty working directory) is copied into the
sandbox, never modified on the host. Outside a git repository --target-repo is
required (exit 2). Flags, runtime names, the --script file and the native
model settings are checked before anything runs (bad usage: exit 2).

--json prints one JSON object on stdout instead of the summary: run_id,
status, exit_code, error, stop_reason, result (host path of the result file),
valid, findings, duration_ms, phases, run_dir, harness, agent, runtime,
sandbox, target_repo, events. Progress and notes stay on stderr.

Every run leaves a run directory <runs dir>/<run-id>/ with report.json,
transcript.jsonl, the script logs and the agent's output; see 'fullsend runs'.
The runs dir is $FULLSEND_RUNS_DIR, else <workspace>/.fullsend/runs when
--workspace is given, else one per workspace in the user's state directory
($XDG_STATE_HOME/fullsend/runs, else ~/.local/state/fullsend/runs). A runs
directory in the workspace and the cache hold a .gitignore, so they never
show up in git status.
Exit status 0 only when the agent succeeded and its result validated, or
when the pre_script asked to skip the run (FULLSEND_PRESCRIPT_OUTPUT
skipped=true, or exit status 78: status skipped, nothing provisioned).
In CI (GITHUB_ACTIONS=true, GITLAB_CI=true) the CI's forge overlay is
applied when the harness has one and --forge is not given, and
--ci-output (default: the CI detected) writes annotations, the job
summary and step outputs, or GitLab's code-quality report (docs/ci.md).

--runtime native runs fullsend's own tool loop on this host against an
OpenAI-compatible or Anthropic API (llama.cpp llama-server, vLLM, Ollama /v1,
LM Studio, hosted APIs); every tool call runs in the sandbox and the API key
never enters it. It is configured by FULLSEND_MODEL_API, FULLSEND_MODEL_BASE_URL,
FULLSEND_MODEL, FULLSEND_MODEL_AUTH, FULLSEND_MODEL_KEY_ENV and FULLSEND_API_KEY,
overridden by the --model-* flags; the harness model: is the last fallback.
Its run directory also holds calls.jsonl (one line per model HTTP call) and
tool-outputs/. --image FILE (repeatable) attaches an image inside the target
repository to the prompt. A harness with native: {tools: [web_fetch]} lets the
agent fetch web pages within the sandbox policy's network allowlist. --resume RUN_ID continues a killed or failed native run in its
run directory from its transcript (the sandbox itself is provisioned afresh).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			choice, forge, optional, err := env.decideCI(f.Forge, ciOutput)
			if err != nil {
				return err
			}
			f.Forge, f.forgeOptional, rf.ci = forge, optional, ciInfo(choice)
			rep, err := runHarness(cmd, env, args[0], f, rf)
			env.finishProgress()
			if cerr := env.ciRunOutput(rep, err); cerr != nil && err == nil {
				err = cerr
			}
			if asJSON {
				return writeRunJSON(env, rep, err)
			}
			if rep != nil {
				cwd, _ := os.Getwd()
				writeRunSummary(env.Stdout, rep, cwd)
			}
			return runExit(rep, err)
		},
	}
	f.add(cmd, true)
	fl := cmd.Flags()
	fl.StringVar(&rf.runtime, "runtime", "", "agent runtime `NAME` (script, claude, native); default: harness runtime:, config runtime:, claude")
	fl.StringVar(&rf.sandbox, "sandbox", "", "sandbox backend `NAME`: "+sandbox.BackendChoices("or")+" (default: config sandbox.backend, local)")
	fl.StringVar(&rf.targetRepo, "target-repo", "", "the repository `DIR` the agent works on (default: git repository of the current directory; none = empty directory)")
	fl.StringVar(&rf.prompt, "prompt", "", "the task `TEXT` given to the agent (default: run the agent on the target repository)")
	fl.StringVar(&rf.resume, "resume", "", "continue the native run `RUN_ID` (killed, failed or invalid; a unique prefix or latest) in its run directory; HARNESS is still required")
	fl.BoolVar(&asJSON, "json", false, "print one JSON object on stdout instead of the summary (progress and notes stay on stderr)")
	rf.runtimes = builtin.AddFlags(fl)
	addCIOutputFlag(fl, &ciOutput)
	env.addTrustFlags(cmd)
	return cmd
}

// runHarness checks what the flags alone decide, before anything is
// resolved, then hands the run to package run with the services of env.
func runHarness(cmd *cobra.Command, env *Env, arg string, f ResolveFlags, rf runFlags) (*runpkg.Report, error) {
	if err := thisSystemNeedsLinux("run"); err != nil {
		return nil, err
	}
	if sel := rf.runtimes.Selected(cmd.Flags()); sel != "" && rf.runtime == "" {
		rf.runtime = sel // --script implies --runtime script
	}
	if rf.sandbox != "" && !sandbox.IsBackend(rf.sandbox) {
		return nil, usageError{fmt.Errorf("--sandbox %q: want %s", rf.sandbox, sandbox.BackendChoices("or"))}
	}
	if rf.runtime != "" {
		if err := runpkg.CheckRuntimeName(rf.runtime); err != nil {
			return nil, usageError{fmt.Errorf("--runtime: %w", err)}
		}
	}
	flags, err := rf.runtimes.Parse(cmd.Flags())
	if err != nil {
		return nil, usageError{err}
	}
	if rf.runtime != "" {
		if err := flags.Check(rf.runtime); err != nil {
			return nil, usageError{err}
		}
	}
	runsDir, err := env.RunsDir()
	if err != nil {
		return nil, err
	}
	if rf.resume != "" {
		if rf.resume, err = findRun(runsDir, rf.resume); err != nil {
			return nil, fmt.Errorf("--resume: %w", err)
		}
	}
	td, err := env.runTrust(cmd, rf.targetRepo)
	if err != nil {
		return nil, err
	}
	pr := env.Progress()
	rep, err := runpkg.Run(cmd.Context(), runpkg.Request{
		Options: runpkg.Options{
			Runtime: rf.runtime, Sandbox: rf.sandbox, TargetRepo: rf.targetRepo,
			Workspace: env.Workspace, RunsDir: runsDir, FullsendDir: env.FullsendDir, CacheDir: cas.DefaultDir(env.Workspace, env.Getenv),
			Prompt: rf.prompt, Resume: rf.resume, RuntimeFlags: flags.Settings, Getenv: env.Getenv,
			Trust: td,
		},
		Resolve: func(ctx context.Context) (*resolve.Result, error) {
			return env.ResolveHarness(ctx, cmd, arg, f, true)
		},
		LoadConfig: env.loadConfigFrom,
		// The runtime flags against the plan's runtime.
		CheckPlan: func(p *runpkg.Plan) error {
			if err := flags.Check(p.Runtime); err != nil {
				return usageError{err}
			}
			return nil
		},
		FetchOptions:   env.fetchOptions(f),
		PrepareRunsDir: prepareRunsDir,
		SandboxOptions: env.sandboxOptions,
		Exec:           runpkg.ExecOptions{Progress: pr, Warn: pr.Writer(), CI: rf.ci},
		Frozen:         f.Frozen,
	})
	var ue *runpkg.UsageError
	if rep == nil && errors.As(err, &ue) {
		return nil, usageError{err}
	}
	return rep, err
}

// runExit turns the outcome of a run into the command's error: nil on
// success, else an *ExitError with the report's exit code (1 when there
// is no report or it says 0).
func runExit(rep *runpkg.Report, err error) error {
	if err == nil {
		return nil
	}
	var ue usageError
	if rep == nil && errors.As(err, &ue) {
		return err
	}
	code := ExitFailure
	if rep != nil && rep.ExitCode != 0 {
		code = rep.ExitCode
	}
	return &ExitError{Code: code, Err: err}
}

// writeRunSummary prints the short human summary of a run.
func writeRunSummary(w io.Writer, r *runpkg.Report, cwd string) {
	// Names, errors and notes come from the run: termsafe.Fprintf
	// sanitizes them.
	sha := r.Harness.SHA256
	if len(sha) > 12 {
		sha = sha[:12]
	}
	termsafe.Fprintf(w, "run       %s  %s\n", r.RunID, r.Status)
	termsafe.Fprintf(w, "harness   %s (sha256 %s)\n", r.Harness.Source, sha)
	termsafe.Fprintf(w, "agent     %s\n", r.Agent)
	termsafe.Fprintf(w, "runtime   %s\n", r.Runtime)
	termsafe.Fprintf(w, "sandbox   %s\n", r.Sandbox.Backend)
	termsafe.Fprintf(w, "repo      %s\n", repoLine(r.Target.Repo))
	termsafe.Fprintf(w, "result    %s\n", resultLine(r))
	if r.Status == runpkg.StatusSkipped {
		termsafe.Fprintf(w, "skipped   %s\n", oneLine(r.SkipReason))
	}
	if e := r.Events; e.Turns > 0 {
		termsafe.Fprintf(w, "usage     %d turn(s), %d tool call(s), %d input / %d output tokens, stop %s\n", e.Turns, e.ToolCalls, e.InputTokens, e.OutputTokens, e.StopReason)
	}
	if len(r.Findings) > 0 {
		termsafe.Fprintf(w, "findings  %d%s (see report.json)\n", len(r.Findings), verdictSummary(r))
	}
	termsafe.Fprintf(w, "duration  %s\n", (time.Duration(r.DurationMS) * time.Millisecond).String())
	dir := r.Dir()
	if rel, err := filepath.Rel(cwd, dir); err == nil && !strings.HasPrefix(rel, "..") {
		dir = rel
	}
	termsafe.Fprintf(w, "run dir   %s\n", dir)
	if r.Error != "" {
		termsafe.Fprintf(w, "error     %s\n", runError(r))
	}
}

// runError is the error of a run as shown to people and scripts: a
// canceled run says it was interrupted rather than "context canceled".
func runError(r *runpkg.Report) string {
	if r.Status == runpkg.StatusCanceled {
		return "interrupted"
	}
	return oneLine(r.Error)
}

// repoLine names the target repository of a run: its host path and
// whether it is a git repository, or none.
func repoLine(repo string) string {
	if repo == "" {
		return "none (empty working directory)"
	}
	if _, err := os.Lstat(filepath.Join(repo, ".git")); err == nil {
		return repo + " (git)"
	}
	return repo + " (directory)"
}

// runJSON is the one object `run --json` prints on stdout. Status is the
// run's status, or "error" when the command failed before a run existed
// (RunID and RunDir are then empty). ExitCode is the command's exit status.
type runJSON struct {
	RunID      string              `json:"run_id"`
	Status     string              `json:"status"`
	ExitCode   int                 `json:"exit_code"`
	Error      string              `json:"error,omitempty"`
	StopReason string              `json:"stop_reason"`
	Result     string              `json:"result"` // host path of the agent's result file; "" when there is none
	Valid      *bool               `json:"valid"`  // the result validated; null = nothing was validated
	Findings   int                 `json:"findings"`
	DurationMS int64               `json:"duration_ms"`
	Phases     []runJSONPhase      `json:"phases"`
	RunDir     string              `json:"run_dir"`
	Harness    string              `json:"harness"`
	Agent      string              `json:"agent"`
	Runtime    string              `json:"runtime"`
	Sandbox    string              `json:"sandbox"`
	TargetRepo string              `json:"target_repo"` // "" = none
	Events     runpkg.EventSummary `json:"events"`
}

type runJSONPhase struct {
	Name       string  `json:"name"`
	Status     string  `json:"status"`
	DurationMS float64 `json:"duration_ms"`
}

// writeRunJSON prints the outcome of a run as one JSON object on stdout and
// returns the command's error unchanged, so the exit status and the one
// stderr line are those of a run without --json.
func writeRunJSON(env *Env, rep *runpkg.Report, err error) error {
	exit := runExit(rep, err)
	code := ExitOK
	if exit != nil {
		code = ExitFailure
		var ee *ExitError
		var ue usageError
		switch {
		case errors.As(exit, &ee):
			code = ee.Code
		case errors.As(exit, &ue):
			code = ExitUsage
		}
	}
	out := runJSON{Status: "error", ExitCode: code, Phases: []runJSONPhase{}}
	if err != nil {
		out.Error = oneLine(err.Error())
	}
	if rep != nil {
		out.RunID, out.Status, out.StopReason = rep.RunID, rep.Status, rep.Events.StopReason
		out.Valid, out.Findings, out.DurationMS = rep.Validation.Valid, len(rep.Findings), rep.DurationMS
		out.RunDir, out.Harness, out.Agent, out.Runtime = rep.Dir(), rep.Harness.Source, rep.Agent, rep.Runtime
		out.Sandbox, out.TargetRepo, out.Events = rep.Sandbox.Backend, rep.Target.Repo, rep.Events
		if rep.Error != "" {
			out.Error = runError(rep)
		}
		for _, p := range rep.Phases {
			out.Phases = append(out.Phases, runJSONPhase{p.Name, p.Status, p.DurationMS})
		}
		res := filepath.Join(rep.Dir(), runpkg.OutputSubdir, runpkg.ResultName)
		if st, serr := os.Stat(res); serr == nil && st.Mode().IsRegular() {
			out.Result = res
		}
	}
	data, jerr := json.Marshal(out)
	if jerr != nil {
		return jerr
	}
	if _, werr := fmt.Fprintf(env.Stdout, "%s\n", data); werr != nil {
		return werr
	}
	return exit
}

func resultLine(r *runpkg.Report) string {
	v := r.Validation
	n := len(v.Iterations)
	switch {
	case v.Valid == nil && r.Status == runpkg.StatusSucceeded:
		return "not validated (no validation_loop)"
	case v.Valid == nil:
		return "none (" + r.Status + ")"
	case *v.Valid:
		return fmt.Sprintf("valid (iteration %d of %d)", n, v.MaxIterations)
	default:
		return fmt.Sprintf("invalid after %d iteration(s)", n)
	}
}

// errRunsUsage is returned for a bad runs subcommand argument.
var errRunsUsage = errors.New("runs: want ls or show RUN_ID")
