package execops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/internal/archive"
	"github.com/fullsend-ai/fullsend/internal/sandbox/internal/capture"
)

// Run runs args in the sandbox with env added, in cwd (empty: the
// session's working directory), with stdin and the two output writers
// attached, and kills it after timeout (zero: never). It returns the exit
// status and whether the timeout fired; an error means the command could
// not be run or awaited, or an output writer refused more.
type Run func(ctx context.Context, args []string, env map[string]string, cwd string, timeout time.Duration, stdin io.Reader, stdout, stderr io.Writer) (exit int, timedOut bool, err error)

// Ops is one session's view for the helpers.
type Ops struct {
	Name string // "docker sandbox ID": the prefix of every error
	Run  Run    // runs a command in the session
	// Limits are the session's limits, resolved: WallTime is an Exec's
	// timeout when the request has none, OutputBytes bounds Exec's output
	// and Download.
	Limits sandbox.Limits
	// OOMKills, if set, counts the sandbox's OOM kills so far; Exec sets
	// ExecResult.OOMKilled when it grew during the command.
	OOMKills func() int64
	// Extract is the command that reads a tar stream on stdin and extracts
	// it under the directory parent (the stream's root entry is named base).
	Extract func(parent, base string) []string
}

// Exec implements sandbox.Session.Exec on o.Run.
func (o Ops) Exec(ctx context.Context, r sandbox.ExecRequest) (sandbox.ExecResult, error) {
	var stdout, stderr bytes.Buffer
	var in io.Reader
	if len(r.Stdin) > 0 {
		in = bytes.NewReader(r.Stdin)
	} else if r.StdinReader != nil {
		in = r.StdinReader
	}
	timeout := r.Timeout
	if timeout == 0 {
		timeout = o.Limits.WallTime
	}
	// stdout and stderr share the output budget; past it the command dies
	// (the copy stops, which Run treats as a reason to kill the command).
	budget := capture.New(o.Limits.OutputBytes, nil)
	var oomBefore int64
	if o.OOMKills != nil {
		oomBefore = o.OOMKills()
	}
	code, timedOut, err := o.Run(ctx, r.Args, r.Env, r.Cwd, timeout, in, budget.Writer(&stdout, r.Stdout), budget.Writer(&stderr, r.Stderr))
	res := sandbox.ExecResult{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: code, TimedOut: timedOut}
	if len(r.Args) > 0 && budget.Exceeded() && ctx.Err() == nil {
		return res, fmt.Errorf("%s: %w", o.Name, sandbox.OutputLimitError("exec "+r.Args[0], o.Limits.OutputBytes))
	}
	if o.OOMKills != nil {
		res.OOMKilled = o.OOMKills() > oomBefore
	}
	return res, err
}

// Upload implements sandbox.Session.Upload: hostPath travels as a tar
// stream (package archive) into o.Extract, run in "/".
func (o Ops) Upload(ctx context.Context, hostPath, sandboxPath string) error {
	if err := sandbox.CheckPath(sandboxPath); err != nil {
		return err
	}
	sandboxPath = path.Clean(sandboxPath)
	parent, base := path.Split(sandboxPath)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(archive.WriteNamed(pw, hostPath, base)) }()
	var stderr bytes.Buffer
	code, _, err := o.Run(ctx, o.Extract(parent, base), nil, "/", 0, pr, io.Discard, &stderr)
	pr.Close()
	if err == nil && code != 0 {
		err = fmt.Errorf("tar exit %d: %s", code, strings.TrimSpace(stderr.String()))
	}
	if err != nil {
		return fmt.Errorf("%s: upload to %s: %w", o.Name, sandboxPath, err)
	}
	return nil
}

// Download implements sandbox.Session.Download: `tar -c` in the sandbox,
// extracted on the host by archive.ReceiveTar (staged, symlinks and
// special files skipped, refused past o.Limits.OutputBytes or
// o.Limits.OutputFiles).
func (o Ops) Download(ctx context.Context, sandboxPath, hostPath string) error {
	if err := sandbox.CheckPath(sandboxPath); err != nil {
		return err
	}
	sandboxPath = path.Clean(sandboxPath)
	parent, base := path.Split(sandboxPath)
	err := archive.ReceiveTar(hostPath, o.Limits.OutputBytes, o.Limits.OutputFiles, func(w io.Writer) (int, string, error) {
		var stderr bytes.Buffer
		code, _, err := o.Run(ctx, []string{"tar", "-c", "-f", "-", "-C", parent, base}, nil, "/", 0, nil, w, &stderr)
		return code, strings.TrimSpace(stderr.String()), err
	})
	what := "download " + sandboxPath
	if errors.Is(err, archive.ErrTooLarge) {
		return fmt.Errorf("%s: %w", o.Name, sandbox.OutputLimitError(what, o.Limits.OutputBytes))
	}
	if errors.Is(err, archive.ErrTooMany) {
		return fmt.Errorf("%s: %w", o.Name, sandbox.OutputFilesLimitError(what, o.Limits.OutputFiles))
	}
	if err != nil {
		return fmt.Errorf("%s: %s: %w", o.Name, what, err)
	}
	return nil
}

// KillSessionScript is the shell script (run as `sh -c SCRIPT kill PIDFILE`)
// that kills, from inside a container, every process of an exec's session:
// the confine role (package guest) of the exec's session leader created
// the empty file PIDFILE.SID, SID being its pid, and installed a seccomp
// filter refusing setsid, so all the exec started is still in session SID.
// It uses shell builtins only (it works when the pids limit is reached),
// repeats while it finds processes (a forking loop) and never kills itself.
const KillSessionScript = `sid=
for f in "$1".*; do [ -e "$f" ] && sid=${f##*.}; done
[ -n "$sid" ] || exit 0
for pass in 1 2 3 4 5; do found=
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" = "$$" ] && continue
    read -r line < "$p/stat" 2>/dev/null || continue
    set -- ${line##*) }
    case "$1" in Z|X) continue;; esac
    [ "$4" = "$sid" ] && kill -9 "${p#/proc/}" 2>/dev/null && found=1
  done
  [ -z "$found" ] && break
done`
