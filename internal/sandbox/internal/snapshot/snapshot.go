// Package snapshot is the host side of sandbox.Snapshotter shared by the
// backends that implement it (local, docker): the checks of the skip
// list, the filtering of the streams in both directions (package archive's
// Filter, with the session's limits) and the command that empties the
// sandbox tree before a restore.
//
// # Rules enforced here
//
//   - Skip paths are absolute, clean, without "..", strictly below
//     sandbox.Root.
//   - Both directions pass archive.Filter: directories and regular files
//     only, names checked, permission bits only, skipped paths left out,
//     Limits.SnapshotBytes in total, Limits.OutputBytes below
//     /sandbox/output and sandbox.SnapshotEntries entries; past a bound
//     the error wraps sandbox.ErrSnapshotLimit.
package snapshot

import (
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/internal/archive"
)

// Rel checks skip and returns its paths relative to sandbox.Root.
func Rel(skip []string) ([]string, error) {
	out := make([]string, 0, len(skip))
	for _, p := range skip {
		if err := sandbox.CheckPath(p); err != nil {
			return nil, fmt.Errorf("snapshot: skip: %w", err)
		}
		c := path.Clean(p)
		if c != p || !strings.HasPrefix(c, sandbox.Root+"/") {
			return nil, fmt.Errorf("snapshot: skip path %q: must be clean and below %s", p, sandbox.Root)
		}
		out = append(out, strings.TrimPrefix(c, sandbox.Root+"/"))
	}
	return out, nil
}

// Copy filters the tar stream r of sandbox.Root (root entry ".") into w
// with the rules and limits of the package; skip is absolute (see Rel).
// For a restore (restore true) directories come out owner-writable.
func Copy(r io.Reader, w io.Writer, skip []string, l sandbox.Limits, restore bool) error {
	rel, err := Rel(skip)
	if err != nil {
		return err
	}
	l = l.Resolved()
	out := strings.TrimPrefix(path.Join(sandbox.Root, "output"), sandbox.Root+"/")
	_, err = archive.Filter(r, w, rel, archive.StateOptions{WritableDirs: restore, Bytes: l.SnapshotBytes, Entries: sandbox.SnapshotEntries, Under: out, UnderBytes: l.OutputBytes})
	switch {
	case errors.Is(err, archive.ErrUnderTooLarge):
		return sandbox.SnapshotLimitError("output_size", l.OutputBytes)
	case errors.Is(err, archive.ErrTooLarge):
		return sandbox.SnapshotLimitError("snapshot_size", l.SnapshotBytes)
	case errors.Is(err, archive.ErrTooMany):
		return fmt.Errorf("snapshot: more than %d files and directories: %w", sandbox.SnapshotEntries, sandbox.ErrSnapshotLimit)
	case err != nil:
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// CleanArgs is the command that empties sandbox.Root but skip (see
// archive.CleanScript), run before a restore's extraction.
func CleanArgs(skip []string) []string {
	return append([]string{"sh", "-c", archive.CleanScript, "clean", sandbox.Root}, skip...)
}
