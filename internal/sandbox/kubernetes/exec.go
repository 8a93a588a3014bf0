package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/internal/capture"
	"github.com/fullsend-ai/fullsend/internal/sandbox/internal/execops"
)

// Executor runs cmd in the sandbox container of Pod ns/pod through the
// pods/exec subresource. A command that ran and exited non-zero returns
// an *ExitError.
type Executor func(ctx context.Context, ns, pod string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) error

// ExitError is a command's non-zero exit status, as the API server
// reports it on the exec stream's error channel.
type ExitError struct{ Code int }

func (e *ExitError) Error() string {
	return "command terminated with non-zero exit code: exit status " + strconv.Itoa(e.Code)
}

// ExitStatus is the command's exit code.
func (e *ExitError) ExitStatus() int { return e.Code }

// ExecURL is the pods/exec URL for cmd in the sandbox container.
func ExecURL(server, ns, pod string, cmd []string, stdin bool) (*url.URL, error) {
	u, err := serverURL(server)
	if err != nil {
		return nil, err
	}
	u.Path += nsPath("", ns, "pods", pod) + "/exec"
	q := url.Values{"container": {ContainerName}, "stdout": {"true"}, "stderr": {"true"}}
	if stdin {
		q.Set("stdin", "true")
	}
	q["command"] = cmd
	u.RawQuery = q.Encode()
	return u, nil
}

// pidDir holds each exec's pid file (the memory-backed /tmp).
const pidDir = "/tmp/.fullsend-exec"

// wrapper runs as `sh -c wrapper fullsend-exec PIDFILE CWD NAME=VALUE... -- CMD ARG...`:
// it records its pid (the command's, after exec) for a timeout's kill,
// enters CWD and becomes CMD with the extra variables.
const wrapper = `mkdir -p ` + pidDir + ` 2>/dev/null; echo $$ > "$1"; cd "$2" || exit 127; shift 2; exec env "$@"`

func (s *session) check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return fmt.Errorf("kubernetes sandbox %s: terminated", s.id)
	}
	return nil
}

// run executes args and returns its exit code.
func (s *session) run(ctx context.Context, args []string, env map[string]string, cwd string, timeout time.Duration, stdin io.Reader, stdout, stderr io.Writer) (int, bool, error) {
	if err := s.check(); err != nil {
		return 0, false, err
	}
	if len(args) == 0 {
		return 0, false, fmt.Errorf("kubernetes sandbox %s: exec: no command", s.id)
	}
	if strings.Contains(args[0], "=") {
		return 0, false, fmt.Errorf("kubernetes sandbox %s: exec %q: a command name may not contain '='", s.id, args[0])
	}
	for k := range env {
		if err := sandbox.CheckEnvName(k); err != nil {
			return 0, false, err
		}
	}
	if cwd == "" {
		cwd = s.spec.WorkDir
	}
	if cwd == "" {
		cwd = sandbox.Root
	}
	if err := sandbox.CheckPath(cwd); err != nil {
		return 0, false, err
	}
	pidFile := pidDir + "/" + newID()
	cmd := []string{"/bin/sh", "-c", wrapper, "fullsend-exec", pidFile, cwd}
	cmd = append(cmd, sandbox.MergeEnv(nil, env)...)
	cmd = append(cmd, args...)
	ectx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		ectx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	err := s.b.exec(ectx, s.b.cfg.Namespace, s.name, cmd, stdin, stdout, stderr)
	if err == nil {
		return 0, false, nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code, false, nil
	}
	if ectx.Err() != nil {
		// The stream ended, the process may not have: kill it.
		kctx, kcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		s.b.exec(kctx, s.b.cfg.Namespace, s.name, []string{"/bin/sh", "-c", `kill -KILL "$(cat "$1")"; rm -f "$1"`, "fullsend-kill", pidFile}, nil, io.Discard, io.Discard)
		kcancel()
		if ctx.Err() == nil {
			return -1, true, nil
		}
		return 0, false, ctx.Err()
	}
	if errors.Is(err, capture.ErrExceeded) {
		return 0, false, err
	}
	return 0, false, fmt.Errorf("kubernetes sandbox %s: exec %s: %w", s.id, args[0], err)
}

// Exec implements sandbox.Session.
func (s *session) Exec(ctx context.Context, r sandbox.ExecRequest) (sandbox.ExecResult, error) {
	return s.ops().Exec(ctx, r)
}

// ops is the session's view for package execops: commands go through run.
func (s *session) ops() execops.Ops {
	return execops.Ops{Name: "kubernetes sandbox " + s.id, Run: s.run, Limits: s.limits, Extract: extractCmd}
}

// extractCmd extracts an upload's tar stream under parent, replacing
// parent/base.
func extractCmd(parent, base string) []string {
	return []string{"sh", "-c", `mkdir -p "$1" && rm -rf "$1/$2" && tar -x -f - -C "$1"`, "upload", parent, base}
}

// Upload implements sandbox.Session: a tar stream (regular files and
// directories only, package archive) into `tar -x` in the Pod.
func (s *session) Upload(ctx context.Context, hostPath, sandboxPath string) error {
	return s.ops().Upload(ctx, hostPath, sandboxPath)
}

// Download implements sandbox.Session: `tar -c` in the Pod, extracted on
// the host by package archive (staged, symlinks and special files skipped,
// refused past OutputBytes).
func (s *session) Download(ctx context.Context, sandboxPath, hostPath string) error {
	return s.ops().Download(ctx, sandboxPath, hostPath)
}
