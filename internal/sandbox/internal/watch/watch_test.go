package watch

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestUsageCountsAllocatedBytes(t *testing.T) {
	d := t.TempDir()
	before := Usage([]string{d})
	if err := os.WriteFile(filepath.Join(d, "f"), make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Create(filepath.Join(d, "sparse"))
	f.Truncate(1 << 30) // a hole: occupies nothing
	f.Close()
	got := Usage([]string{d}) - before
	if got < 1<<20 || got > 1<<20+1<<16 {
		t.Errorf("usage grew by %d, want about 1 MiB (the sparse file occupies nothing)", got)
	}
}

func TestStartReportsGrowthOnce(t *testing.T) {
	d := t.TempDir()
	os.WriteFile(filepath.Join(d, "existing"), make([]byte, 1<<20), 0o644)
	fired := make(chan int64, 2)
	stop := Start([]string{d}, 512<<10, func(g int64) { fired <- g })
	defer stop()
	// Growth within the limit: nothing.
	os.WriteFile(filepath.Join(d, "small"), make([]byte, 100<<10), 0o644)
	select {
	case g := <-fired:
		t.Fatalf("fired at %d bytes of growth, under the limit", g)
	case <-time.After(2 * MinInterval):
	}
	os.WriteFile(filepath.Join(d, "big"), make([]byte, 1<<20), 0o644)
	select {
	case g := <-fired:
		if g <= 512<<10 {
			t.Errorf("reported growth %d", g)
		}
	case <-time.After(20 * MinInterval):
		t.Fatal("growth past the limit never reported")
	}
	select {
	case <-fired:
		t.Error("reported twice")
	case <-time.After(2 * MinInterval):
	}
}
