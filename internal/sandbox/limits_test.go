package sandbox_test

import (
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

func TestLimitsLowerMin(t *testing.T) {
	t.Parallel()
	org := sandbox.Limits{}.Resolved()
	org.WallTime = time.Hour
	all := sandbox.Limits{WallTime: time.Minute, MemoryBytes: 1, Pids: 2, CPUs: 0.25, TmpBytes: 3, WorkspaceBytes: 4, OutputBytes: 5, OutputFiles: 6, SnapshotBytes: 8}
	for _, c := range []struct {
		name      string
		got, want sandbox.Limits
	}{
		{"lower by nothing", org.Lower(sandbox.Limits{}), org},
		{"lower every field but WallTime", org.Lower(all), sandbox.Limits{WallTime: time.Hour, MemoryBytes: 1, Pids: 2, CPUs: 0.25, TmpBytes: 3, WorkspaceBytes: 4, OutputBytes: 5, OutputFiles: 6, SnapshotBytes: 8}},
		{"lower never raises", all.Lower(org), all},
		{"min with unset", all.Min(sandbox.Limits{}), all},
		{"min of unset", sandbox.Limits{}.Min(all), all},
		{"min picks the lower", sandbox.Limits{Pids: 9, CPUs: 0.1, OutputFiles: 7}.Min(all), sandbox.Limits{WallTime: time.Minute, MemoryBytes: 1, Pids: 2, CPUs: 0.1, TmpBytes: 3, WorkspaceBytes: 4, OutputBytes: 5, OutputFiles: 6, SnapshotBytes: 8}},
		{"resolved keeps set values", all.Resolved(), all},
		{"resolved fills defaults", sandbox.Limits{Pids: 7}.Resolved(), sandbox.Limits{MemoryBytes: sandbox.DefaultMemoryBytes, Pids: 7, CPUs: sandbox.DefaultCPUs, TmpBytes: sandbox.DefaultTmpBytes, WorkspaceBytes: sandbox.DefaultWorkspaceBytes, OutputBytes: sandbox.DefaultOutputBytes, OutputFiles: sandbox.DefaultOutputFiles, SnapshotBytes: sandbox.DefaultSnapshotBytes}},
	} {
		if c.got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, c.got, c.want)
		}
	}
}
