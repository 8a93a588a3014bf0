package kubernetes

import (
	"bytes"
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
	"github.com/fullsend-ai/fullsend/internal/sandbox/local/guest"
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

// pidDir holds each exec's session file (the memory-backed /tmp).
const pidDir = "/tmp/.fullsend-exec"

// wrapper runs as `sh -c wrapper fullsend-exec CWD NAME=VALUE... BINARY PIDFILE FSIZE CMD ARG...`:
// it enters CWD and, with the extra variables, becomes the fullsend binary
// of the image in its confine role (package guest, as docker's execs):
// that creates PIDFILE.SID (SID: the exec's session, which the container
// runtime starts each exec in), sets RLIMIT_FSIZE, installs fullsend's
// seccomp filter (socket families, denied system calls, no setsid: all
// the command starts stays in the session) and becomes CMD.
const wrapper = `mkdir -p ` + pidDir + ` 2>/dev/null; cd "$1" || exit 127; shift; exec env "$@"`

// killSession runs as `sh -c killSession fullsend-kill PIDFILE SCRIPT`:
// SCRIPT (execops.KillSessionScript) kills every process of the exec's
// session, then the session file goes.
const killSession = `f=$1; sh -c "$2" kill "$f"; rm -f "$f".*`

// oomCount prints the oom_kill counter of the container's memory cgroup
// (cgroup v2 memory.events, v1 memory.oom_control), -1 when neither is
// readable.
const oomCount = `for f in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; do
  [ -r "$f" ] || continue
  while read -r k v; do [ "$k" = oom_kill ] && { echo "$v"; exit 0; }; done < "$f"
done
echo -1`

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
	cmd := []string{"/bin/sh", "-c", wrapper, "fullsend-exec", cwd}
	cmd = append(cmd, sandbox.MergeEnv(nil, env)...)
	cmd = append(cmd, guest.EnvRole+"=confine", sandbox.BinaryPath, pidFile, strconv.FormatInt(s.limits.WorkspaceBytes, 10))
	cmd = append(cmd, args...)
	ectx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		ectx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	err := s.b.exec(ectx, s.b.cfg.Namespace, s.name, cmd, stdin, stdout, stderr)
	// However the exec ended (the stream ends with the command's first
	// process, at a timeout or when the output budget is spent), what the
	// command started is still in its session: kill it.
	s.kill(ctx, pidFile)
	if err == nil {
		return 0, false, nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Code == 128+9 {
			s.refreshOOM(ctx)
		}
		return ee.Code, false, nil
	}
	if ectx.Err() != nil {
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

// kill kills every process left in the session of the exec whose session
// file is pidFile, from a second exec (the API has no signal call).
func (s *session) kill(ctx context.Context, pidFile string) {
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	s.b.exec(kctx, s.b.cfg.Namespace, s.name, []string{"/bin/sh", "-c", killSession, "fullsend-kill", pidFile, execops.KillSessionScript}, nil, io.Discard, io.Discard)
}

// readOOM reads the container's OOM kill counter (-1: not readable).
func (s *session) readOOM(ctx context.Context) (int64, error) {
	var out bytes.Buffer
	if err := s.b.exec(ctx, s.b.cfg.Namespace, s.name, []string{"/bin/sh", "-c", oomCount}, nil, &out, io.Discard); err != nil {
		return -1, err
	}
	return strconv.ParseInt(strings.TrimSpace(out.String()), 10, 64)
}

// refreshOOM updates the session's OOM kill count after a command died of
// SIGKILL (the kernel's OOM killer sends it).
func (s *session) refreshOOM(ctx context.Context) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if n, err := s.readOOM(rctx); err == nil && n >= 0 {
		s.oom.Store(n)
	}
}

// oomKills is the OOM kill count last read (execops compares it before
// and after each command).
func (s *session) oomKills() int64 { return s.oom.Load() }

// Exec implements sandbox.Session.
func (s *session) Exec(ctx context.Context, r sandbox.ExecRequest) (sandbox.ExecResult, error) {
	return s.ops().Exec(ctx, r)
}

// ops is the session's view for package execops: commands go through run.
func (s *session) ops() execops.Ops {
	return execops.Ops{Name: "kubernetes sandbox " + s.id, Run: s.run, Limits: s.limits, OOMKills: s.oomKills, Extract: extractCmd}
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
