package resolve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/forge"
)

// TestColdWaveFillsTheForgeBound: with default options, the blobs of many
// skills of one commit go out in one wave as wide as the forge client's
// bound on requests in flight (forge.DefaultMaxInFlight), and never wider.
// Thirty three-file skills make 90 blobs: at most 64 may be on the wire
// together, and no smaller bound on nodes may hold the wave below that
// (a bound of 16 nodes sent 48). With 300 ms of latency a request holds
// its token at least that long, so the requests that arrive within 240 ms
// of one another were on the wire together.
func TestColdWaveFillsTheForgeBound(t *testing.T) {
	const latency, skills = 300 * time.Millisecond, 30
	r := newRepo()
	w := newWorld(t, r)
	w.key = "o/r@" + benchCommit
	var refs []string
	for i := 0; i < skills; i++ {
		d := r.skill(t, fmt.Sprintf("skills/s%02d", i), nil,
			map[string]string{"notes.md": fmt.Sprintf("notes %d", i), "scripts/run.sh": fmt.Sprintf("echo %d", i)})
		refs = append(refs, "  - "+pin(w.tree(fmt.Sprintf("skills/s%02d", i)), d))
	}
	agent := r.file("agents/a.md", "---\nname: a\n---\nagent\n")
	w.srv.AddRepo(w.key, r.Files)
	w.srv.SetLatency(latency)
	dir := t.TempDir()
	h := filepath.Join(dir, "h.yaml")
	if err := os.WriteFile(h, []byte(fmt.Sprintf("agent: %s\nskills:\n%s\nallowed_remote_resources: [%s]\n",
		pin(w.blob("agents/a.md"), agent), strings.Join(refs, "\n"), w.prefix())), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Resolve(context.Background(), h, w.opts())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Graph.Nodes) != skills+1 {
		t.Fatalf("%d nodes, want %d", len(res.Graph.Nodes), skills+1)
	}
	reqs := w.srv.Requests()
	if len(reqs) != 2+3*skills {
		t.Fatalf("%d requests, want the agent, one listing and %d blobs", len(reqs), 3*skills)
	}
	most := 0
	for _, a := range reqs {
		n := 0
		for _, b := range reqs {
			if d := b.Time.Sub(a.Time); d >= 0 && d < latency*4/5 {
				n++
			}
		}
		most = max(most, n)
	}
	if most > forge.DefaultMaxInFlight {
		t.Errorf("%d requests on the wire together; the forge bound is %d", most, forge.DefaultMaxInFlight)
	}
	if most < forge.DefaultMaxInFlight {
		t.Errorf("the widest wave had %d requests; %d blobs were waiting and the forge bound is %d", most, 3*skills, forge.DefaultMaxInFlight)
	}
}
