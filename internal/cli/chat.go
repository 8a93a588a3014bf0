package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/chat"
	"github.com/fullsend-ai/fullsend/internal/resolve"
	runpkg "github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

type chatFlags struct {
	runtime, sandbox, targetRepo, sessionDB string
	maxMemoryEvents                         int
	idleTimeout                             time.Duration
	rtFlags                                 runtime.Flags // the chat runtime's flags
}

func newChatCmd(env *Env) *cobra.Command {
	var f ResolveFlags
	var cf chatFlags
	cmd := &cobra.Command{
		Use:   "chat [flags] HARNESS",
		Short: "Chat with a harness's agent (native runtime) over NDJSON on stdin/stdout",
		Long: `chat resolves, scans and provisions HARNESS as 'run' does, once, with the
native runtime, then reads one JSON request per line on standard input and
writes one JSON envelope per line on standard output until end of input.

Requests:
  {"type":"user_message","session":"ID","text":"...","images":["img.png"]}
  {"type":"history","session":"ID"}
  {"type":"cancel","session":"ID"}

A user_message continues the session's conversation with that message until
the model stops calling tools; each such turn has its own --max-turns and
--max-output-tokens budget and the harness's timeout_minutes. Envelopes:
turn_start, event (loop events and streamed "delta" pieces), turn_end
(stop_reason, usage), history_end and error (a bad line is answered with an
error envelope and the stream goes on). Turns run one at a time; a second
user_message for a session with a turn in flight is refused. The protocol's
JSON Schema is internal/chat/protocol.schema.json.

After --idle-timeout (config sandbox.idle_timeout, default 15m) without a
turn, the sandbox is suspended: its files are kept in a snapshot in the run
directory and it is torn down; the next user_message provisions a new one and
restores them first (local and docker backends; elsewhere it stays up). The
session database records each session running, suspended or terminated.

--session-db FILE keeps sessions, turns and events in SQLite (created 0600,
WAL) and each session's transcript in FILE.sessions/<session>/, so a later
process continues a session where the last one stopped. Without it
everything lives in this process (events in memory, at most
--max-memory-events; the transcripts in the run directory's chat/). Progress
goes to standard error; the run directory is <runs dir>/<id>/ (see
fullsend run --help).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := chatHarness(cmd, env, args[0], f, cf)
			env.finishProgress()
			return runExit(rep, err)
		},
	}
	f.add(cmd, true)
	fl := cmd.Flags()
	fl.StringVar(&cf.runtime, "runtime", chat.RuntimeName, "agent runtime `NAME`: only native chats")
	fl.StringVar(&cf.sandbox, "sandbox", "", "sandbox backend `NAME`: "+sandbox.BackendChoices("or")+" (default: config sandbox.backend, local)")
	fl.StringVar(&cf.targetRepo, "target-repo", "", "the repository `DIR` the agent works on (default: git repository of the current directory; none = empty directory)")
	fl.StringVar(&cf.sessionDB, "session-db", "", "keep sessions, turns and events in the SQLite database `FILE` (and transcripts in FILE.sessions/), so they survive the process")
	fl.IntVar(&cf.maxMemoryEvents, "max-memory-events", chat.DefaultMaxMemoryEvents, "without --session-db: keep at most `N` events in memory (the oldest are dropped)")
	fl.DurationVar(&cf.idleTimeout, "idle-timeout", 0, "suspend the sandbox (snapshot its files, tear it down) after `DURATION` without a turn; the next user_message restores it (default: config sandbox.idle_timeout, 15m)")
	cf.rtFlags = chat.NewFlags()
	cf.rtFlags.Add(fl)
	_ = fl.MarkHidden("image")
	return cmd
}

// chatHarness checks the flags, opens the session store and runs the
// harness with chat serving the provisioned sandbox.
func chatHarness(cmd *cobra.Command, env *Env, arg string, f ResolveFlags, cf chatFlags) (*runpkg.Report, error) {
	fl := cmd.Flags()
	if cf.runtime != chat.RuntimeName {
		return nil, usageError{fmt.Errorf("--runtime %q: chat runs only the native runtime", cf.runtime)}
	}
	if fl.Changed("image") {
		return nil, usageError{errors.New("--image: send images in a user_message request's images")}
	}
	if cf.sandbox != "" && !sandbox.IsBackend(cf.sandbox) {
		return nil, usageError{fmt.Errorf("--sandbox %q: want %s", cf.sandbox, sandbox.BackendChoices("or"))}
	}
	if cf.maxMemoryEvents <= 0 {
		return nil, usageError{fmt.Errorf("--max-memory-events %d: want a positive number", cf.maxMemoryEvents)}
	}
	if fl.Changed("idle-timeout") && cf.idleTimeout < time.Second {
		return nil, usageError{fmt.Errorf("--idle-timeout %s: want at least 1s", cf.idleTimeout)}
	}
	if cf.sessionDB != "" && fl.Changed("max-memory-events") {
		return nil, usageError{errors.New("--max-memory-events: only without --session-db (the database keeps every event)")}
	}
	settings, _, err := cf.rtFlags.Parse(fl)
	if err != nil {
		return nil, usageError{err}
	}
	nc := chat.Settings(settings)
	store, sessionsDir, err := openChatStore(cf)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	td, err := env.runTrust(cmd, cf.targetRepo)
	if err != nil {
		return nil, err
	}
	redact := chat.Redactor(env.Getenv, nc)
	var srv *chat.Server
	rt := chat.NewRuntime(&srv)
	pr := env.Progress()
	runsDir, err := env.RunsDir()
	if err != nil {
		return nil, err
	}
	return runpkg.Run(cmd.Context(), runpkg.Request{
		Options: runpkg.Options{
			Runtime: chat.RuntimeName, Sandbox: cf.sandbox, TargetRepo: cf.targetRepo,
			Workspace: env.Workspace, RunsDir: runsDir, FullsendDir: env.FullsendDir, CacheDir: cas.DefaultDir(env.Workspace, env.Getenv),
			RuntimeFlags: map[string]runtime.Config{chat.RuntimeName: nc}, Getenv: env.Getenv, Trust: td,
		},
		Resolve: func(ctx context.Context) (*resolve.Result, error) {
			return env.ResolveHarness(ctx, cmd, arg, f, true)
		},
		LoadConfig:     env.loadConfigFrom,
		FetchOptions:   env.fetchOptions(f),
		PrepareRunsDir: prepareRunsDir,
		SandboxOptions: env.sandboxOptions,
		Exec: runpkg.ExecOptions{Runtime: rt, Progress: pr, Warn: pr.Writer(), Interactive: func(ctx context.Context, a *runpkg.Agent) error {
			dir := sessionsDir
			if dir == "" {
				dir = filepath.Join(a.RunDir, "chat")
			}
			idle := cf.idleTimeout
			if idle == 0 {
				idle = a.IdleTimeout()
			}
			srv = chat.NewServer(chat.Options{Store: store, CheckImage: a.CheckImage, Redact: redact,
				Run:         func(ctx context.Context, t chat.TurnInput) (*runtime.Outcome, error) { return chatTurn(ctx, a, dir, t) },
				IdleTimeout: idle, Suspend: a.Suspend, Wake: a.Wake,
				Notify: func(line string) { fmt.Fprintln(pr.Writer(), "fullsend: "+line) }})
			if !env.Quiet {
				fmt.Fprintln(pr.Writer(), chatReady)
			}
			// Each envelope is written with the status line off, so on a
			// terminal the spinner never shares a line with JSON.
			return srv.Serve(ctx, env.Stdin, heldWriter{w: env.Stdout, hold: pr.Hold})
		}},
	})
}

// openChatStore opens the session database (and names the transcripts'
// directory beside it), or an in-memory store.
func openChatStore(cf chatFlags) (chat.Store, string, error) {
	if cf.sessionDB == "" {
		return chat.NewMemoryStore(cf.maxMemoryEvents), "", nil
	}
	db, err := filepath.Abs(cf.sessionDB)
	if err != nil {
		return nil, "", fmt.Errorf("--session-db %s: %w", cf.sessionDB, err)
	}
	store, err := chat.OpenSQLite(db)
	if err != nil {
		return nil, "", err
	}
	return store, db + ".sessions", nil
}

// chatTurn runs one user message: the native loop continues the session's
// transcript in dir/<session> with it.
func chatTurn(ctx context.Context, a *runpkg.Agent, dir string, t chat.TurnInput) (*runtime.Outcome, error) {
	in := a.Input
	in.Options = chat.TurnOptions(a.Input.Options, t.Images)
	in.Prompt = t.Text
	in.RunDir = filepath.Join(dir, t.Session)
	if err := os.MkdirAll(in.RunDir, 0o700); err != nil {
		return nil, fmt.Errorf("session %s: %w", t.Session, err)
	}
	runEvents := a.Input.Events
	in.Events = func(e runtime.Event) {
		if runEvents != nil {
			runEvents(e)
		}
		t.Emit(e)
	}
	out, err := a.Runtime.Run(ctx, a.Session, in)
	a.Count(out)
	return out, err
}

// chatReady is the line chat prints on stderr once the sandbox is up and
// requests are read.
const chatReady = `fullsend: chat: ready: send one JSON request per line on stdin, e.g. {"type":"user_message","session":"s1","text":"hello"}`

// heldWriter writes to w with the progress status line erased (hold
// returns its release).
type heldWriter struct {
	w    io.Writer
	hold func() (release func())
}

func (h heldWriter) Write(p []byte) (int, error) {
	release := h.hold()
	defer release()
	return h.w.Write(p)
}
