package fetchsvc_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/fetchsvc"
)

// BenchmarkServeCacheHit is the service's own cost of one cache-hit
// request (the handler, without sockets or concurrency): the 4-file trees
// of BenchmarkConcurrentCacheHits, 100 distinct skills, a fresh service
// every 100 requests. It isolates the server-side CPU that the concurrent
// benchmark's latency mostly consists of, with allocations.
//
//	go test -run '^$' -bench ServeCacheHit -benchmem ./internal/fetchsvc/
func BenchmarkServeCacheHit(b *testing.B) {
	const n = 100
	w := newWorld(b, newRepo())
	var bodies []string
	for _, u := range w.cachedSkills(b, n) {
		body, _ := json.Marshal(fetchsvc.Request{URL: u})
		bodies = append(bodies, string(body))
	}
	newSvc := func() *fetchsvc.Service {
		o := w.options()
		o.MaxFetches = n
		s, err := fetchsvc.New(o)
		if err != nil {
			b.Fatal(err)
		}
		s.Attach(nullUploader{}, nil)
		return s
	}
	s := newSvc()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%n == 0 && i > 0 {
			b.StopTimer()
			s = newSvc()
			b.StartTimer()
		}
		req := httptest.NewRequest(http.MethodPost, fetchsvc.Path, strings.NewReader(bodies[i%n]))
		req.Header.Set("Authorization", "Bearer "+s.Token())
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}
