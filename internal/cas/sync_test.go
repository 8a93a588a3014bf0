package cas

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// TestPutSyncsEverythingBeforeRename: every file and directory of a new
// entry (metadata.json, each tree file, each directory, the entry root) is
// fsynced before the rename publishes it, and the fsyncs run side by side
// rather than one after the other (a journaling filesystem commits
// concurrent ones together; one by one they were most of a cold
// resolution's cache writes).
func TestPutSyncsEverythingBeforeRename(t *testing.T) {
	s := newStore(t)
	var (
		mu           sync.Mutex
		synced       []string
		running, top int
		renamed      bool
	)
	both := make(chan struct{})
	var bothOnce sync.Once
	testOnlySync = func(name string) {
		mu.Lock()
		if renamed {
			t.Errorf("%s synced after the rename", name)
		}
		synced = append(synced, name)
		running++
		top = max(top, running)
		if running >= 2 {
			bothOnce.Do(func() { close(both) })
		}
		mu.Unlock()
		// Hold this fsync until a second one runs beside it (or give up
		// after a while, so a serial implementation fails instead of
		// hanging).
		select {
		case <-both:
		case <-time.After(2 * time.Second):
		}
		mu.Lock()
		running--
		mu.Unlock()
	}
	var atRename []string
	testOnlyBeforeRename = func() {
		mu.Lock()
		defer mu.Unlock()
		atRename = slices.Clone(synced)
		renamed = true
	}
	t.Cleanup(func() {
		testOnlySync = nil
		testOnlyBeforeRename = func() {}
	})
	files := map[string][]byte{
		"SKILL.md":          []byte("---\nname: s\n---\n"),
		"notes.md":          []byte("notes"),
		"scripts/run.sh":    []byte("echo run"),
		"scripts/lib/x.txt": []byte("x"),
	}
	if _, err := s.PutTree("", Metadata{URL: "https://example.test/s"}, files); err != nil {
		t.Fatal(err)
	}
	want := []string{".", metadataName, treeName, treeName + "/SKILL.md", treeName + "/notes.md",
		treeName + "/scripts", treeName + "/scripts/lib", treeName + "/scripts/lib/x.txt", treeName + "/scripts/run.sh"}
	slices.Sort(atRename)
	if !slices.Equal(atRename, want) {
		t.Errorf("synced before the rename:\n%q\nwant\n%q", atRename, want)
	}
	if top < 2 {
		t.Errorf("at most %d fsync at a time: the entry's fsyncs ran one after the other", top)
	}
}
