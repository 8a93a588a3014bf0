//go:build linux

package docker

import (
	"context"
	"io"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

var _ sandbox.Snapshotter = (*session)(nil)

// Snapshot implements sandbox.Snapshotter (`tar -c` in the container,
// filtered on the host; see execops).
func (s *session) Snapshot(ctx context.Context, w io.Writer, skip []string) error {
	return s.ops().Snapshot(ctx, w, skip)
}

// Restore implements sandbox.Snapshotter (/sandbox emptied but skip, then
// `tar -x` as the exec user of the filtered stream; see execops).
func (s *session) Restore(ctx context.Context, r io.Reader, skip []string) error {
	return s.ops().Restore(ctx, r, skip)
}
