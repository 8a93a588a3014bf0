//go:build linux

package local

import (
	"fmt"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/internal/watch"
)

// watchMounts starts the workspace watch (package watch) over the spec's
// read-write host mounts: once they have grown by more than
// Limits.WorkspaceBytes the session's processes are killed and every later
// call fails with an error wrapping sandbox.ErrWorkspaceLimit.
func (s *session) watchMounts() {
	var dirs []string
	for _, m := range s.spec.Mounts {
		if !m.ReadOnly {
			dirs = append(dirs, m.Source)
		}
	}
	s.stopWatch = watch.Start(dirs, s.limits.WorkspaceBytes, func(grown int64) {
		s.kill(fmt.Errorf("local sandbox %s: read-write mounts grew by %d bytes, more than workspace_size (%s): session ended: %w",
			s.id, grown, sandbox.FormatBytes(s.limits.WorkspaceBytes), sandbox.ErrWorkspaceLimit))
	})
}

// kill ends the session's processes for reason; Terminate still releases
// everything else.
func (s *session) kill(reason error) {
	s.mu.Lock()
	if s.killedBy == nil {
		s.killedBy = reason
	}
	s.mu.Unlock()
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
	}
}
