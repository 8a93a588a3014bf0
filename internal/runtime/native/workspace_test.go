package native

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/runtimetest"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// snapSession is the fake session with sandbox.Snapshotter: each
// snapshot is the bytes "state-N", and Restore records what it got.
type snapSession struct {
	*runtimetest.Session
	mu       sync.Mutex
	taken    int
	restored []string
	skip     []string
}

func (s *snapSession) Snapshot(_ context.Context, w io.Writer, skip []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.taken++
	s.skip = skip
	_, err := fmt.Fprintf(w, "state-%d", s.taken)
	return err
}

func (s *snapSession) Restore(_ context.Context, r io.Reader, skip []string) error {
	b, err := io.ReadAll(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.restored = append(s.restored, string(b))
	return err
}

var _ sandbox.Snapshotter = (*snapSession)(nil)

// TestWorkspaceSnapshotsAndRestore: a snapshot after a turn whose tools
// may write, none after a read-only turn, one when the loop ends; the
// previous file is removed; the runner-owned paths are skipped; a resume
// restores the last one; a changed file is refused (ErrSnapshot).
func TestWorkspaceSnapshotsAndRestore(t *testing.T) {
	h := newHarnessEnv(t, model.APIOpenAI,
		modeltest.Call("w1", ToolWriteFile, map[string]any{"path": "notes.txt", "content": "x"}),
		modeltest.Call("r1", ToolReadFile, map[string]any{"path": "notes.txt"}),
		modeltest.Say("done"),
	)
	ss := &snapSession{Session: h.sess}
	if out, err := h.rt.Run(context.Background(), ss, h.input(nil)); err != nil || out.StopReason != runtime.StopCompleted {
		t.Fatalf("%+v %v", out, err)
	}
	if ss.taken != 2 {
		t.Fatalf("%d snapshots, want 2 (after the write turn, at the end)", ss.taken)
	}
	for _, p := range []string{runtime.ClaudeConfigDir, runtime.DecoyPath, runtime.WorkspaceDir + "/.env"} {
		found := false
		for _, s := range ss.skip {
			found = found || s == p
		}
		if !found {
			t.Errorf("snapshot keeps %s (skip %v)", p, ss.skip)
		}
	}
	var refs []*SnapshotRef
	for _, r := range readRecords(t, h.runDir) {
		if r.Type == RecSnapshot {
			refs = append(refs, r.Snapshot)
		}
	}
	if len(refs) != 2 || refs[1].Size != int64(len("state-2")) {
		t.Fatalf("snapshot records %+v", refs)
	}
	if _, err := os.Stat(filepath.Join(h.runDir, refs[0].File)); !os.IsNotExist(err) {
		t.Errorf("the previous snapshot was kept: %v", err)
	}

	h2 := newHarnessEnv(t, model.APIOpenAI, modeltest.Say("again"))
	ss2 := &snapSession{Session: h2.sess}
	h2.runDir = h.runDir
	if _, err := h2.rt.Resume(context.Background(), ss2, h2.input(nil)); err != nil {
		t.Fatal(err)
	}
	if len(ss2.restored) != 1 || ss2.restored[0] != "state-2" {
		t.Fatalf("restored %q, want the last snapshot", ss2.restored)
	}

	// Changed on disk: refused, nothing restored.
	last := filepath.Join(h.runDir, refs[1].File)
	for _, r := range readRecords(t, h.runDir) {
		if r.Type == RecSnapshot {
			last = filepath.Join(h.runDir, r.Snapshot.File)
		}
	}
	if err := os.WriteFile(last, []byte("state-X"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := LoadState(h.runDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifySnapshot(h.runDir, st); !errors.Is(err, ErrSnapshot) {
		t.Fatalf("VerifySnapshot of a changed file: %v", err)
	}
	h3 := newHarnessEnv(t, model.APIOpenAI, modeltest.Say("never"))
	ss3 := &snapSession{Session: h3.sess}
	h3.runDir = h.runDir
	if _, err := h3.rt.Resume(context.Background(), ss3, h3.input(nil)); !errors.Is(err, ErrSnapshot) || len(ss3.restored) != 0 {
		t.Fatalf("resume with a changed snapshot: %v, restored %q", err, ss3.restored)
	}
}

func TestSnapshotRefChecked(t *testing.T) {
	sum := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, ref := range []SnapshotRef{
		{File: "snapshots/" + sum + ".tar", SHA256: sum[:63] + "0"},
		{File: "../x/" + sum + ".tar", SHA256: sum},
		{File: "snapshots/" + sum + ".tar/../../x", SHA256: sum},
		{File: "snapshots/" + sum + ".tar", SHA256: sum, Size: -1},
	} {
		if err := ref.Check(); err == nil {
			t.Errorf("%+v accepted", ref)
		}
	}
	if err := (&SnapshotRef{File: "snapshots/" + sum + ".tar", SHA256: sum}).Check(); err != nil {
		t.Error(err)
	}
}
