package native

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/rundir"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/workspace"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// SnapshotsDir, SnapshotRef, ErrSnapshot and ErrNoSnapshots are package
// workspace's, named here for the transcript's records.
const SnapshotsDir = workspace.Dir

// SnapshotRef is the transcript's record of one workspace snapshot.
type SnapshotRef = workspace.Ref

var (
	ErrSnapshot    = workspace.ErrRefused
	ErrNoSnapshots = workspace.ErrNoSnapshots
)

// InfoWorkspace is the Name of the info events about workspace snapshots
// the runner makes report notes of: a snapshot that could not be taken,
// a resume that could not restore one.
const InfoWorkspace = runtime.InfoWorkspace

// saveWorkspace takes a snapshot of the sandbox's writable state into
// the run directory and records it in the transcript (top loop only, on
// backends with sandbox.Snapshotter). The previous snapshot file is
// removed once the new one is on record. A snapshot that fails (over
// snapshot_size, the sandbox gone) is an info event and leaves the
// previous one on record: a resume restores the newest state kept, and
// the conversation after it tells the model what happened since. Only a
// failure to write the transcript is returned.
func (l *loop) saveWorkspace(ctx context.Context) error {
	if l.depth > 0 || l.noWorkspaceSnapshots {
		return nil
	}
	sn, ok := sandbox.SnapshotterOf(l.sess)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), workspace.Timeout)
	defer cancel()
	ref, err := workspace.SaveTo(ctx, l.rd.d, sn)
	if err != nil {
		l.event(runtime.Event{Kind: runtime.EventInfo, Name: InfoWorkspace, Text: fmt.Sprintf("workspace snapshot at turn %d not taken (a resume restores the previous one, if any): %v", l.st.Turns, err)})
		return nil
	}
	if err := l.tr.write(Record{Type: RecSnapshot, Turn: l.st.Turns, Snapshot: ref}); err != nil {
		return err
	}
	prev := l.st.Snapshot
	l.st.Snapshot = ref
	if prev != nil && prev.File != ref.File {
		_ = l.rd.d.Remove(prev.File)
	}
	return nil
}

// readOnlyTools cannot change the sandbox's files: a turn that called
// only these needs no new snapshot.
var readOnlyTools = []string{ToolReadFile, ToolListDir, ToolViewImage, ToolReadSkillResource, ToolWebFetch}

// mayWrite reports whether one of calls may have changed the sandbox.
func mayWrite(calls []model.ToolCall) bool {
	for _, c := range calls {
		if !slices.Contains(readOnlyTools, c.Name) {
			return true
		}
	}
	return false
}

// VerifySnapshot checks the last workspace snapshot that st (loaded from
// runDir by LoadState) records: its file must be a regular file of the
// user in runDir (no symlink) whose size and sha256 are those on record
// (the transcript is under the MAC chain; the file is not). A run without
// a snapshot passes.
func VerifySnapshot(runDir string, st *State) error {
	if st.Snapshot == nil {
		return nil
	}
	d, err := rundir.Open(runDir)
	if err != nil {
		return err
	}
	defer d.Close()
	f, err := workspace.Open(d, st.Snapshot)
	if err != nil {
		return err
	}
	f.Close()
	return nil
}

// restoreWorkspace puts the last snapshot on record back into the
// session before a resumed loop's first turn. Without a snapshot, or on a
// backend without sandbox.Snapshotter, the resumed run works on the fresh
// workspace and an info event says so. The file is verified (see
// VerifySnapshot) and hashed again as it streams: a file changed while it
// is read fails the restore. The stream is untrusted input for the
// backend (sandbox.Snapshotter.Restore filters it).
func (l *loop) restoreWorkspace(ctx context.Context) error {
	ref := l.st.Snapshot
	note := func(text string) {
		l.event(runtime.Event{Kind: runtime.EventInfo, Name: InfoWorkspace, Text: text})
	}
	if ref == nil {
		return nil // a run from before snapshots, or killed before its first one
	}
	err := workspace.Restore(ctx, l.rd.d, l.sess, ref)
	if errors.Is(err, ErrNoSnapshots) {
		note("workspace not restored: this sandbox backend keeps no snapshots; the resumed run starts from a fresh workspace")
		return nil
	}
	if err != nil {
		return err
	}
	note(fmt.Sprintf("workspace restored from %s (%d bytes)", ref.File, ref.Size))
	return nil
}
