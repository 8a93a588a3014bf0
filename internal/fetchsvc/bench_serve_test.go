package fetchsvc_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/fetchsvc"
	"github.com/fullsend-ai/fullsend/internal/ref"
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
	for i := range n {
		dir := fmt.Sprintf("skills/s%03d", i)
		files := map[string][]byte{
			"SKILL.md":          fmt.Appendf(nil, "---\nname: s%03d\ndescription: skill %d\n---\n# s%03d\n%s", i, i, i, strings.Repeat("Some guidance.\n", 40)),
			"scripts/run.sh":    []byte("#!/bin/sh\necho run\n"),
			"assets/a/data.txt": []byte(strings.Repeat("x", 2048)),
			"README.md":         []byte("readme\n"),
		}
		d, err := cas.TreeHash(files)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.store.PutTree(d, cas.Metadata{URL: w.tree(dir)}, files); err != nil {
			b.Fatal(err)
		}
		body, _ := json.Marshal(fetchsvc.Request{URL: pin(w.tree(dir), ref.Digest(d))})
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
