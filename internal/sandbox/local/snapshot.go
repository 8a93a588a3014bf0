//go:build linux

package local

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/internal/snapshot"
)

var _ sandbox.Snapshotter = (*session)(nil)

// Snapshot implements sandbox.Snapshotter: the archive helper writes
// /sandbox inside the sandbox with the agent's permissions, and the
// stream is filtered on the host (package snapshot).
func (s *session) Snapshot(ctx context.Context, w io.Writer, skip []string) error {
	if _, err := snapshot.Rel(skip); err != nil {
		return fmt.Errorf("local sandbox %s: %w", s.id, err)
	}
	pr, ch, err := s.pipeRequest("tar", sandbox.Root, false)
	if err != nil {
		return err
	}
	ferr := snapshot.Copy(pr, w, skip, s.limits, nil)
	pr.Close() // a refused stream stops the writer (EPIPE)
	m, ok := waitReply(ctx, ch)
	switch {
	case ferr != nil:
		return fmt.Errorf("local sandbox %s: %w", s.id, ferr)
	case !ok:
		return s.diedErr("snapshot")
	case m.Err != "":
		return fmt.Errorf("local sandbox %s: snapshot: %s", s.id, m.Err)
	}
	return ctx.Err()
}

// Restore implements sandbox.Snapshotter: /sandbox is emptied but skip by
// an agent command, then the filtered stream is extracted by the archive
// helper with the agent's permissions.
func (s *session) Restore(ctx context.Context, r io.Reader, skip []string) error {
	if _, err := snapshot.Rel(skip); err != nil {
		return fmt.Errorf("local sandbox %s: %w", s.id, err)
	}
	res, err := s.Exec(ctx, sandbox.ExecRequest{Args: snapshot.CleanArgs(skip), Cwd: "/"})
	if err != nil {
		return fmt.Errorf("local sandbox %s: restore: %w", s.id, err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("local sandbox %s: restore: emptying %s: exit %d: %s", s.id, sandbox.Root, res.ExitCode, strings.TrimSpace(string(res.Stderr)))
	}
	pw, ch, err := s.pipeRequest("untar", sandbox.Root, true)
	if err != nil {
		return err
	}
	var locked []string
	ferr := snapshot.Copy(r, pw, skip, s.limits, &locked)
	pw.Close()
	m, ok := waitReply(ctx, ch)
	switch {
	case ferr != nil:
		return fmt.Errorf("local sandbox %s: restore: %w", s.id, ferr)
	case !ok:
		return s.diedErr("restore")
	case m.Err != "":
		return fmt.Errorf("local sandbox %s: restore: %s", s.id, m.Err)
	}
	if args := snapshot.LockArgs(locked); args != nil {
		res, err := s.Exec(ctx, sandbox.ExecRequest{Args: args, Cwd: "/"})
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("exit %d: %s", res.ExitCode, strings.TrimSpace(string(res.Stderr)))
		}
		if err != nil {
			return fmt.Errorf("local sandbox %s: restore: directory modes: %w", s.id, err)
		}
	}
	return ctx.Err()
}
