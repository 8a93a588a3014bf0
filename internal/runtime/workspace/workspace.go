// Package workspace keeps a sandbox's writable state in a run directory:
// a snapshot of the session (sandbox.Snapshotter) streamed into
// snapshots/<sha256>.tar, and its restore into another session, verified
// against its record (size and sha256) before and while it streams. The
// native runtime takes one per turn and restores it on --resume; the
// runner suspends an idle interactive sandbox with it. The file is
// untrusted on restore: the backend's Restore filters the stream.
package workspace

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
	"time"

	"github.com/fullsend-ai/fullsend/internal/rundir"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// Dir holds the workspace snapshots of a run directory, each
// named by the sha256 of its content (snapshots/<sha256>.tar).
const Dir = "snapshots"

// Timeout bounds one snapshot or restore.
const Timeout = 5 * time.Minute

// Skip are the paths under /sandbox a snapshot neither keeps nor
// restores: what the runner and the runtime lay out afresh for every
// process (the runtime configuration with the skills, the CA bundle, the
// canary decoy, the .env files holding the run's environment), so that a
// snapshot never carries them into the run directory and a restore never
// replaces them.
var Skip = []string{
	runtime.ClaudeConfigDir,
	path.Join(sandbox.Root, ".fullsend"),
	runtime.DecoyPath,
	path.Join(runtime.WorkspaceDir, ".env"),
	path.Join(runtime.WorkspaceDir, ".env.d"),
}

// Ref is the transcript's record of one workspace snapshot: the
// file, its sha256 and size.
type Ref struct {
	File   string `json:"file"` // snapshots/<sha256>.tar, relative to the run directory
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

var refName = regexp.MustCompile(`^snapshots/([0-9a-f]{64})\.tar$`)

// Check refuses a reference whose file is not snapshots/<sha256>.tar for
// its own sha256.
func (s *Ref) Check() error {
	m := refName.FindStringSubmatch(s.File)
	if m == nil || m[1] != s.SHA256 || s.Size < 0 {
		return fmt.Errorf("snapshot record %q: not %s/<sha256>.tar of its sha256", s.File, Dir)
	}
	return nil
}

// ErrNoSnapshots is returned by Save and Restore for a
// session whose backend keeps no snapshots.
var ErrNoSnapshots = errors.New("this sandbox backend keeps no workspace snapshots")

// Save takes a snapshot of s's writable state (the paths the
// runtime owns left out) into d's snapshots/<sha256>.tar and returns its
// reference; see Restore.
func Save(ctx context.Context, d *rundir.Dir, s sandbox.Session) (*Ref, error) {
	sn, ok := sandbox.SnapshotterOf(s)
	if !ok {
		return nil, ErrNoSnapshots
	}
	return SaveTo(ctx, d, sn)
}

// Restore verifies the snapshot ref of d (see VerifySnapshot)
// and restores it into s, checking the bytes again as they stream.
func Restore(ctx context.Context, d *rundir.Dir, s sandbox.Session, ref *Ref) error {
	sn, ok := sandbox.SnapshotterOf(s)
	if !ok {
		return ErrNoSnapshots
	}
	f, err := Open(d, ref)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	if err := sn.Restore(ctx, io.TeeReader(io.LimitReader(f, ref.Size), h), Skip); err != nil {
		return fmt.Errorf("workspace snapshot %s: %w", ref.File, err)
	}
	return drainHash(f, h, ref)
}

// ErrRefused marks a workspace snapshot that fails its checks on resume:
// not the file the transcript records (sha256, size), or not a regular
// file of the user in the run directory.
var ErrRefused = errors.New("workspace snapshot refused")

// SaveTo streams sn's snapshot into a new file of d, hashing it,
// and moves it to its content address.
func SaveTo(ctx context.Context, d *rundir.Dir, sn sandbox.Snapshotter) (*Ref, error) {
	if err := d.MkdirAll(Dir, 0o700); err != nil {
		return nil, err
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	tmp := path.Join(Dir, ".tmp-"+hex.EncodeToString(b[:]))
	f, err := d.Create(tmp, 0o600)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(f, h)}
	err = sn.Snapshot(ctx, cw, Skip)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = d.Remove(tmp)
		return nil, err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	ref := &Ref{File: path.Join(Dir, sum+".tar"), SHA256: sum, Size: cw.n}
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

// Open opens the snapshot ref names and checks it (see
// VerifySnapshot); the file is returned at offset 0.
func Open(d *rundir.Dir, ref *Ref) (*os.File, error) {
	if err := ref.Check(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	f, err := d.OpenFile(ref.File)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrRefused, ref.File, err)
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, ref.Size+1))
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s: %w", ErrRefused, ref.File, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != ref.Size || got != ref.SHA256 {
		f.Close()
		return nil, fmt.Errorf("%w: %s: sha256 %s (%d bytes), the transcript records %s (%d bytes): the file was changed after it was written", ErrRefused, ref.File, got, n, ref.SHA256, ref.Size)
	}
	return f, nil
}

// drainHash hashes what the restore left unread of the snapshot and
// compares the whole with the record.
func drainHash(f io.Reader, h hash.Hash, ref *Ref) error {
	// The restore may stop reading at the archive's end marker: hash the
	// padding that follows, up to the recorded size.
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrRefused, ref.File, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != ref.SHA256 {
		return fmt.Errorf("%w: %s: changed while it was restored (sha256 %s, the transcript records %s)", ErrRefused, ref.File, got, ref.SHA256)
	}
	return nil
}
