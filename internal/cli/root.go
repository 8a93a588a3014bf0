package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/attribute"
	"golang.org/x/term"

	"github.com/fullsend-ai/fullsend/internal/ci"
	"github.com/fullsend-ai/fullsend/internal/progress"
	"github.com/fullsend-ai/fullsend/internal/termsafe"
	"github.com/fullsend-ai/fullsend/internal/trace"
)

// Exit codes shared by every command.
const (
	ExitOK      = 0 // success
	ExitFailure = 1 // the command ran and failed (or found something critical)
	ExitUsage   = 2 // bad flags or arguments
	// ExitInterrupted: the command was stopped by SIGINT (Ctrl-C) or
	// SIGTERM; stderr says "fullsend: interrupted" (128 + SIGINT, the code
	// a canceled run's report records too).
	ExitInterrupted = 130
)

// Env is what every command sees of the outside world. Tests build one with
// buffers and a fake Getenv; Main builds it from the process.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// FullsendDir and Workspace are the values of the global flags after
	// parsing, made absolute.
	FullsendDir string
	Workspace   string
	// WorkspaceGiven is set when --workspace was given (runs then live
	// in <workspace>/.fullsend/runs; see RunsDir).
	WorkspaceGiven bool
	Getenv         func(string) string
	// Quiet and Verbose are the global --quiet and --verbose flags.
	Quiet, Verbose bool

	progressMu sync.Mutex
	progress   *progress.Reporter

	// configMu guards configs: each fullsend dir's own config.yaml,
	// loaded once per command (config.go).
	configMu sync.Mutex
	configs  map[string]configResult

	// trustMu guards trustSt: the trust flags and decision (trust.go).
	trustMu sync.Mutex
	trustSt *trustState

	// tracing is set when the OTEL_* variables turned tracing on; span is
	// the command's root span (a no-op one when no provider is installed).
	tracing bool
	span    trace.Span

	// ciOutput is the command's CI-native output (package ci; the
	// detected CI unless --ci-output says otherwise); ciOut and ciErr
	// guard stdout and stderr in GitHub Actions (ci.go).
	ciOutput     ci.Platform
	ciOut, ciErr *ci.Guard
}

// Progress returns the command's progress reporter on stderr, made on
// first use: a live status line when stderr is a terminal (colour unless
// NO_COLOR is set or TERM is dumb), timestamped lines otherwise, nothing
// but warnings with --quiet; --verbose shows more events.
func (e *Env) Progress() *progress.Reporter {
	e.progressMu.Lock()
	defer e.progressMu.Unlock()
	if e.progress == nil {
		o := progress.Options{Mode: progress.Plain, Verbose: e.Verbose}
		switch {
		case e.Quiet:
			o.Mode = progress.Quiet
		case e.IsTerminal(e.Stderr):
			o.Mode = progress.Live
			o.Color = e.Getenv("NO_COLOR") == "" && e.Getenv("TERM") != "dumb"
		}
		e.progress = progress.New(e.Stderr, o)
	}
	return e.progress
}

// finishProgress erases the status line and prints the summary; commands
// call it before they write their result on stdout (the same terminal),
// and run calls it before the error line.
func (e *Env) finishProgress() {
	e.progressMu.Lock()
	r := e.progress
	e.progressMu.Unlock()
	if r != nil {
		r.Close()
	}
}

// interruptProgress erases the status line for good (progress.Reporter
// Interrupt), when there is one.
func (e *Env) interruptProgress() {
	e.progressMu.Lock()
	r := e.progress
	e.progressMu.Unlock()
	if r != nil {
		r.Interrupt()
	}
}

// notef prints "fullsend: note: …" on stderr (not with --quiet), above
// the status line.
func (e *Env) notef(format string, args ...any) {
	fmt.Fprintf(e.Progress().Writer(), "fullsend: note: "+format+"\n", args...)
}

// warnf prints "fullsend: warning: …" on stderr, above the status line.
func (e *Env) warnf(format string, args ...any) {
	fmt.Fprintf(e.Progress().Writer(), "fullsend: warning: "+format+"\n", args...)
}

// ExitError makes a command exit with a specific code. When Err is nil nothing
// is printed (the command has already said what it had to say).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// usageError marks errors caused by bad flags or arguments (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// commands lists the top-level commands, each built by its own file's
// constructor: adding a command is one line here.
var commands = []func(*Env) *cobra.Command{
	newValidateCmd,
	newResolveCmd,
	newLockCmd,
	newPinCmd,
	newVendorCmd,
	newGraphCmd,
	newDispatchCmd,
	newRunCmd,
	newChatCmd,
	newRunsCmd,
	newScanCmd,
	newCacheCmd,
	newSandboxCmd,
	newHookCmd,
	newFetchSkillCmd,
	newEgressGatewayCmd,
	newInitCmd,
	newDoctorCmd,
	newVersionCmd,
}

// IsTerminal reports whether w is a terminal (progress output and prompts are
// only shown on terminals).
func (e *Env) IsTerminal(w any) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// NewRoot builds the command tree for env.
func NewRoot(env *Env) *cobra.Command {
	var fullsendDir, workspace string
	root := &cobra.Command{
		Use:   "fullsend",
		Short: "Run AI agents from verified, sandboxed harnesses",
		Long: `fullsend runs AI agents from a harness: a YAML file naming an agent
definition, skills, policies, schemas and scripts. Resources may be local paths
or https URLs pinned by sha256. fullsend fetches the whole transitive closure
safely, verifies every byte, scans it for prompt injection and secrets,
provisions a sandbox, lays out the workspace and runs the agent inside it.

Exit status: 0 on success, 1 on failure, 2 on bad usage, 130 when
interrupted (Ctrl-C, SIGTERM).`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: false},
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if env.Quiet && env.Verbose {
				return usageError{errors.New("--quiet and --verbose: choose one")}
			}
			var err error
			if env.FullsendDir, err = filepath.Abs(fullsendDir); err != nil {
				return usageError{fmt.Errorf("--fullsend-dir %q: %w", fullsendDir, err)}
			}
			env.WorkspaceGiven = workspace != ""
			if workspace == "" {
				workspace = "."
			}
			if env.Workspace, err = filepath.Abs(workspace); err != nil {
				return usageError{fmt.Errorf("--workspace %q: %w", workspace, err)}
			}
			// The command's root span (a no-op unless tracing is on; a child
			// of the caller's trace when fullsend itself was given a
			// TRACEPARENT).
			ctx := cmd.Context()
			if env.tracing {
				ctx = trace.WithParent(ctx, env.Getenv("TRACEPARENT"))
			}
			ctx, env.span = trace.Start(ctx, cmd.Name(), attribute.String("fullsend.command", cmd.CommandPath()))
			cmd.SetContext(ctx)
			return nil
		},
	}
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&fullsendDir, "fullsend-dir", "./.fullsend", "the `DIR` holding config.yaml, harnesses, agents, skills and policies")
	pf.StringVar(&workspace, "workspace", "", "the workspace `DIR` (cache root; run directories in DIR/.fullsend/runs when given; default: current directory, runs in the user's state directory)")
	pf.BoolVarP(&env.Quiet, "quiet", "q", false, "no progress output and no notes on stderr; warnings and errors still show")
	pf.BoolVarP(&env.Verbose, "verbose", "v", false, "more progress output: every fetch started, cache hit, agent turn, tool call and runtime notice")

	for _, ctor := range commands {
		root.AddCommand(ctor(env))
	}
	polishUsage(root)
	return root
}

// Main runs the CLI and returns the process exit code. Errors are printed as
// one line on stderr: "fullsend: <message>".
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, env, args)
}

func run(ctx context.Context, env *Env, args []string) int {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	env.guardCI()
	defer env.flushCI()
	shutdown, terr := trace.Setup(ctx, env.Getenv, buildInfo().Version, func(err error) {
		fmt.Fprintf(env.Stderr, "fullsend: warning: tracing: %s\n", oneLine(err.Error()))
	})
	if terr != nil {
		fmt.Fprintf(env.Stderr, "fullsend: warning: tracing off: %s\n", oneLine(terr.Error()))
	}
	env.tracing = shutdown != nil
	root := NewRoot(env)
	root.SetArgs(args)
	done := make(chan struct{})
	go func() {
		// Ctrl-C: the terminal echoed "^C" at the end of the status
		// line; erase it now, before teardown prints anything.
		select {
		case <-ctx.Done():
			env.interruptProgress()
		case <-done:
		}
	}()
	err := root.ExecuteContext(ctx)
	close(done)
	env.closeTrust()
	if env.span != nil {
		trace.End(env.span, err)
	}
	if shutdown != nil {
		if serr := shutdown(context.WithoutCancel(ctx)); serr != nil {
			fmt.Fprintf(env.Stderr, "fullsend: warning: tracing: flushing spans: %s\n", oneLine(serr.Error()))
		}
	}
	env.finishProgress()
	if err == nil {
		return ExitOK
	}
	env.annotateError(err)
	if ctx.Err() != nil {
		// The only canceller is Main's signal context: whatever error the
		// interruption surfaced as ("context canceled", a killed child…),
		// the user pressed Ctrl-C or the process was told to stop.
		fmt.Fprintln(env.Stderr, "fullsend: interrupted")
		return ExitInterrupted
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintf(env.Stderr, "fullsend: %s\n", oneLine(ee.Err.Error()))
		}
		return ee.Code
	}
	fmt.Fprintf(env.Stderr, "fullsend: %s\n", oneLine(err.Error()))
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return ExitUsage
	}
	return ExitFailure
}

// isCobraUsage recognises the argument errors cobra builds itself.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "received ", "unknown flag", "unknown shorthand flag", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// oneLine folds a multi-line message onto one line so stderr stays one line
// per error.
func oneLine(s string) string {
	return strings.Join(strings.Fields(termsafe.Sanitize(s)), " ")
}
