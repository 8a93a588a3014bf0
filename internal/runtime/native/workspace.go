package native

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"regexp"
	"slices"
	"time"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/rundir"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// SnapshotsDir holds the workspace snapshots of a run directory, each
// named by the sha256 of its content (snapshots/<sha256>.tar).
const SnapshotsDir = "snapshots"

// InfoWorkspace is the Name of the info events about workspace snapshots
// the runner makes report notes of: a snapshot that could not be taken,
// a resume that could not restore one.
const InfoWorkspace = runtime.InfoWorkspace

// snapshotTimeout bounds one snapshot or restore.
const snapshotTimeout = 5 * time.Minute

// snapshotSkip are the paths under /sandbox a snapshot neither keeps nor
// restores: what the runner and the runtime lay out afresh for every
// process (the runtime configuration with the skills, the CA bundle, the
// canary decoy, the .env files holding the run's environment), so that a
// snapshot never carries them into the run directory and a restore never
// replaces them.
var snapshotSkip = []string{
	runtime.ClaudeConfigDir,
	path.Join(sandbox.Root, ".fullsend"),
	runtime.DecoyPath,
	path.Join(runtime.WorkspaceDir, ".env"),
	path.Join(runtime.WorkspaceDir, ".env.d"),
}

// SnapshotRef is the transcript's record of one workspace snapshot: the
// file, its sha256 and size.
type SnapshotRef struct {
	File   string `json:"file"` // snapshots/<sha256>.tar, relative to the run directory
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

var snapshotName = regexp.MustCompile(`^snapshots/([0-9a-f]{64})\.tar$`)

// check refuses a reference whose file is not snapshots/<sha256>.tar for
// its own sha256.
func (s *SnapshotRef) check() error {
	m := snapshotName.FindStringSubmatch(s.File)
	if m == nil || m[1] != s.SHA256 || s.Size < 0 {
		return fmt.Errorf("snapshot record %q: not %s/<sha256>.tar of its sha256", s.File, SnapshotsDir)
	}
	return nil
}

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
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), snapshotTimeout)
	defer cancel()
	ref, err := saveSnapshot(ctx, l.rd.d, sn)
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

// ErrNoSnapshots is returned by SaveWorkspace and RestoreWorkspace for a
// session whose backend keeps no snapshots.
var ErrNoSnapshots = errors.New("this sandbox backend keeps no workspace snapshots")

// SaveWorkspace takes a snapshot of s's writable state (the paths the
// runtime owns left out) into d's snapshots/<sha256>.tar and returns its
// reference; see RestoreWorkspace.
func SaveWorkspace(ctx context.Context, d *rundir.Dir, s sandbox.Session) (*SnapshotRef, error) {
	sn, ok := sandbox.SnapshotterOf(s)
	if !ok {
		return nil, ErrNoSnapshots
	}
	return saveSnapshot(ctx, d, sn)
}

// RestoreWorkspace verifies the snapshot ref of d (see VerifySnapshot)
// and restores it into s, checking the bytes again as they stream.
func RestoreWorkspace(ctx context.Context, d *rundir.Dir, s sandbox.Session, ref *SnapshotRef) error {
	sn, ok := sandbox.SnapshotterOf(s)
	if !ok {
		return ErrNoSnapshots
	}
	f, err := openSnapshot(d, ref)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	ctx, cancel := context.WithTimeout(ctx, snapshotTimeout)
	defer cancel()
	if err := sn.Restore(ctx, io.TeeReader(io.LimitReader(f, ref.Size), h), snapshotSkip); err != nil {
		return fmt.Errorf("workspace snapshot %s: %w", ref.File, err)
	}
	return drainHash(f, h, ref)
}

// saveSnapshot streams sn's snapshot into a new file of d, hashing it,
// and moves it to its content address.
func saveSnapshot(ctx context.Context, d *rundir.Dir, sn sandbox.Snapshotter) (*SnapshotRef, error) {
	if err := d.MkdirAll(SnapshotsDir, 0o700); err != nil {
		return nil, err
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	tmp := path.Join(SnapshotsDir, ".tmp-"+hex.EncodeToString(b[:]))
	f, err := d.Create(tmp, 0o600)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(f, h)}
	err = sn.Snapshot(ctx, cw, snapshotSkip)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = d.Remove(tmp)
		return nil, err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	ref := &SnapshotRef{File: path.Join(SnapshotsDir, sum+".tar"), SHA256: sum, Size: cw.n}
	if err := d.Rename(tmp, ref.File); err != nil {
		_ = d.Remove(tmp)
		return nil, err
	}
	return ref, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
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

// ErrSnapshot marks a workspace snapshot that fails its checks on resume:
// not the file the transcript records (sha256, size), or not a regular
// file of the user in the run directory.
var ErrSnapshot = errors.New("workspace snapshot refused")

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
	f, err := openSnapshot(d, st.Snapshot)
	if err != nil {
		return err
	}
	f.Close()
	return nil
}

// openSnapshot opens the snapshot ref names and checks it (see
// VerifySnapshot); the file is returned at offset 0.
func openSnapshot(d *rundir.Dir, ref *SnapshotRef) (*os.File, error) {
	if err := ref.check(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSnapshot, err)
	}
	f, err := d.OpenFile(ref.File)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSnapshot, ref.File, err)
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, ref.Size+1))
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s: %w", ErrSnapshot, ref.File, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != ref.Size || got != ref.SHA256 {
		f.Close()
		return nil, fmt.Errorf("%w: %s: sha256 %s (%d bytes), the transcript records %s (%d bytes): the file was changed after it was written", ErrSnapshot, ref.File, got, n, ref.SHA256, ref.Size)
	}
	return f, nil
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
	err := RestoreWorkspace(ctx, l.rd.d, l.sess, ref)
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

// drainHash hashes what the restore left unread of the snapshot and
// compares the whole with the record.
func drainHash(f io.Reader, h hash.Hash, ref *SnapshotRef) error {
	// The restore may stop reading at the archive's end marker: hash the
	// padding that follows, up to the recorded size.
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSnapshot, ref.File, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != ref.SHA256 {
		return fmt.Errorf("%w: %s: changed while it was restored (sha256 %s, the transcript records %s)", ErrSnapshot, ref.File, got, ref.SHA256)
	}
	return nil
}
