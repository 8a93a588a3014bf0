package resolve

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/ocicache/ocicachetest"
)

// BenchmarkColdResolveRegistry: the 20-skill graph of BenchmarkColdResolve
// (harness, agent, policy, 20 skills of 3 files all depending on one
// shared skill) resolved by a cold runner (empty cache) from a warm
// registry, with 50 ms added to every registry request and the forge
// serving nothing. The graph is two levels deep below the harness, so
// the floor is two round trips (small skills ride in their manifest).
// Target (issue 18): at most 3 round trips' time, 150 ms.
func BenchmarkColdResolveRegistry(b *testing.B) {
	const rtt = 50 * time.Millisecond
	w, dir := benchWorld(b)
	reg := ocicachetest.New(b)
	w.useRegistry(reg.Repository(regPath), true)
	h := filepath.Join(dir, "harness", "bench.yaml")
	// Runner A fills the registry.
	if _, err := Resolve(context.Background(), h, w.opts()); err != nil {
		b.Fatal(err)
	}
	w.srv.SetLatency(rtt)
	w.stopForge()
	reg.SetLatency(rtt)
	var total time.Duration
	var regReqs, forgeReqs, n int
	for b.Loop() {
		b.StopTimer()
		w.freshRunner(b)
		reg.ResetRequests()
		w.srv.ResetRequests()
		o := w.opts()
		b.StartTimer()
		start := time.Now()
		res, err := Resolve(context.Background(), h, o)
		total += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Graph.Nodes) != 23 || len(res.Warnings) != 0 {
			b.Fatalf("%d nodes, warnings %q", len(res.Graph.Nodes), res.Warnings)
		}
		regReqs, forgeReqs = reg.RequestCount(), w.srv.RequestCount()
		n++
	}
	if forgeReqs != 0 {
		b.Fatalf("a cold runner with a warm registry made %d forge requests", forgeReqs)
	}
	mean := total / time.Duration(n)
	b.ReportMetric(float64(mean)/float64(rtt), "round-trips/op")
	b.ReportMetric(float64(regReqs), "registry-requests/op")
	b.ReportMetric(float64(forgeReqs), "forge-requests/op")
}
