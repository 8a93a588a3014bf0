package forge_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/forge"
	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
)

// BenchmarkFetchTree20 fetches a 20-file skill directory from the fake
// GitHub with 50 ms of latency injected into every request, with a fresh
// client (cold connections, TLS handshakes included) per iteration. The
// floor is 2 round trips (the trees call, then every blob in parallel);
// "round-trips" reports wall time divided by the injected latency.
func BenchmarkFetchTree20(b *testing.B) {
	const latency = 50 * time.Millisecond
	files := map[string][]byte{}
	for i := 0; i < 20; i++ {
		files[fmt.Sprintf("skills/bench/f%02d.md", i)] = []byte(fmt.Sprintf("# file %d\n%s\n", i, make([]byte, 2048)))
	}
	srv := forgetest.NewGitHub(b, forgetest.Repos{"acme/skills@main": files})
	srv.SetLatency(latency)
	loc, err := forge.Parse(srv.TreeURL("acme/skills@main", "skills/bench"), []config.Forge{srv.Forge()})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		c := forge.New(fetch.New(srv.FetchOptions()), []config.Forge{srv.Forge()}, nil)
		got, err := c.FetchTree(context.Background(), loc)
		if err != nil || len(got) != 20 {
			b.Fatalf("%d files, %v", len(got), err)
		}
	}
	per := time.Since(start) / time.Duration(b.N)
	b.ReportMetric(float64(per.Microseconds())/1000, "ms/op")
	b.ReportMetric(float64(per)/float64(latency), "round-trips")
	b.ReportMetric(float64(srv.RequestCount())/float64(b.N), "requests/op")
}
