package resolve

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/progress"
)

type eventLog struct {
	mu sync.Mutex
	ev []progress.Event
}

func (l *eventLog) Event(e progress.Event) {
	l.mu.Lock()
	l.ev = append(l.ev, e)
	l.mu.Unlock()
}

func (l *eventLog) count(k progress.Kind, pred func(progress.Event) bool) int {
	n := 0
	for _, e := range l.ev {
		if e.Kind == k && (pred == nil || pred(e)) {
			n++
		}
	}
	return n
}

// TestProgressEvents: every node of the graph is announced and reported
// done, each network fetch is bracketed by FetchStart and FetchEnd with its
// size, and a second resolution from the cache reports cache hits and no
// fetch at all.
func TestProgressEvents(t *testing.T) {
	w, s, agent := rustWorld(t)
	dir := writeDir(t, map[string]string{
		"harness/h.yaml":        fmt.Sprintf("agent: %s\nskills:\n  - %s\n  - skills/local\nallowed_remote_resources: [%s]\n", pin(w.blob("agents/a.md"), agent), pin(w.tree("skills/rust"), s), w.prefix()),
		"skills/local/SKILL.md": "---\nname: local\n---\nbody\n",
	})
	for round, cached := range []bool{false, true} {
		var log eventLog
		o := w.opts()
		o.Events = &log
		res, err := Resolve(context.Background(), filepath.Join(dir, "harness/h.yaml"), o)
		if err != nil {
			t.Fatal(err)
		}
		nodes := len(res.Graph.Nodes) // the harness (Graph.Root) is not announced
		if nodes != 3 {
			t.Fatalf("%d nodes, want 3 (agent, remote skill, local skill)", nodes)
		}
		if a, d := log.count(progress.ResourceAdded, nil), log.count(progress.ResourceDone, nil); a != nodes || d != nodes {
			t.Errorf("round %d: %d added, %d done, want %d each", round, a, d, nodes)
		}
		starts, ends := log.count(progress.FetchStart, nil), log.count(progress.FetchEnd, func(e progress.Event) bool { return e.Err == "" && e.Bytes > 0 })
		hits := log.count(progress.ResourceDone, func(e progress.Event) bool { return e.CacheHit })
		if !cached && (starts != 2 || ends != 2 || hits != 0) {
			t.Errorf("first resolution: %d fetch starts, %d fetch ends with bytes, %d cache hits; want 2, 2, 0: %+v", starts, ends, hits, log.ev)
		}
		if cached && (starts != 0 || ends != 0 || hits != 2) {
			t.Errorf("cached resolution: %d fetch starts, %d fetch ends, %d cache hits; want 0, 0, 2", starts, ends, hits)
		}
		if !cached && log.count(progress.FetchEnd, func(e progress.Event) bool { return e.Name == w.tree("skills/rust") && e.Files == 2 }) != 1 {
			t.Errorf("no FetchEnd with 2 files for the tree skill: %+v", log.ev)
		}
	}
}
