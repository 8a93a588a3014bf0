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
// For a restore (locked not nil) directories come out owner-writable, and
// those that were not are appended to *locked as LockArgs wants them.
func Copy(r io.Reader, w io.Writer, skip []string, l sandbox.Limits, locked *[]string) error {
	rel, err := Rel(skip)
	if err != nil {
		return err
	}
	l = l.Resolved()
	out := strings.TrimPrefix(path.Join(sandbox.Root, "output"), sandbox.Root+"/")
	opts := archive.StateOptions{WritableDirs: locked != nil}
	if locked != nil {
		opts.Locked = func(name string, mode int64) { *locked = append(*locked, fmt.Sprintf("%o", mode), name) }
	}
	opts.Bytes, opts.Entries, opts.Under, opts.UnderBytes = l.SnapshotBytes, sandbox.SnapshotEntries, out, l.OutputBytes
	_, err = archive.Filter(r, w, rel, opts)
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

// lockScript gives directories back their modes: its arguments are
// (octal mode, "./rel") pairs, relative to sandbox.Root.
const lockScript = `cd "$0" || exit 1
while [ $# -ge 2 ]; do chmod "$1" -- "$2" || exit 1; shift 2; done`

// LockArgs is the command that gives the directories a restore made
// writable their recorded modes back (nil when there are none).
func LockArgs(locked []string) []string {
	if len(locked) == 0 {
		return nil
	}
	return append([]string{"sh", "-c", lockScript, sandbox.Root}, locked...)
}

// CleanArgs is the command that empties sandbox.Root but skip (see
// archive.CleanScript), run before a restore's extraction.
func CleanArgs(skip []string) []string {
	return append([]string{"sh", "-c", archive.CleanScript, "clean", sandbox.Root}, skip...)
}
