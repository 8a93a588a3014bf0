package fetchsvc_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/fetchsvc"
	"github.com/fullsend-ai/fullsend/internal/runtime/runtimetest"
)

// nullUploader accepts every upload without copying (the service's own
// cost, without the sandbox backend's).
type nullUploader struct{}

func (nullUploader) Upload(context.Context, string, string) error { return nil }

// BenchmarkConcurrentCacheHits fires 100 concurrent requests at a fresh
// service per iteration, for skills already in the cache (4-file trees;
// 100 distinct skills, or one skill 100 times): token check, URL rules, budget, cache read with full
// re-verification, audit append (a real file), SKILL.md read and the
// upload. Every request opens its own connection, as `fullsend
// fetch-skill` does. It reports the p50, p99 and max request latency.
// "upload=none" measures the service alone; "upload=runtimetest" adds a
// real copy of each tree into a host directory playing the sandbox.
// cpu-ms/req is process CPU (service and the in-process clients) per
// request.
//
//	go test -run '^$' -bench ConcurrentCacheHits -benchtime 20x ./internal/fetchsvc/
func BenchmarkConcurrentCacheHits(b *testing.B) {
	null := func(testing.TB) fetchsvc.Uploader { return nullUploader{} }
	disk := func(tb testing.TB) fetchsvc.Uploader { return runtimetest.NewSession(tb) }
	b.Run("skills=100/upload=none", func(b *testing.B) { benchCacheHits(b, 100, null) })
	b.Run("skills=100/upload=runtimetest", func(b *testing.B) { benchCacheHits(b, 100, disk) })
	b.Run("skills=1/upload=runtimetest", func(b *testing.B) { benchCacheHits(b, 1, disk) })
}

// benchCacheHits sends 100 concurrent requests spread over distinct cached
// skills.
func benchCacheHits(b *testing.B, distinct int, uploader func(testing.TB) fetchsvc.Uploader) {
	const n = 100
	w := newWorld(b, newRepo())
	urls := w.cachedSkills(b, distinct)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
	var lat []time.Duration
	var mu sync.Mutex
	var cpu time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		o := w.options()
		o.MaxFetches = n
		s, err := fetchsvc.Start(b.Context(), o)
		if err != nil {
			b.Fatal(err)
		}
		s.Attach(uploader(b), nil)
		b.StartTimer()
		c0 := cpuTime()
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			body, _ := json.Marshal(fetchsvc.Request{URL: urls[i%distinct]})
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest(http.MethodPost, "http://"+s.Addr()+fetchsvc.Path, strings.NewReader(string(body)))
				req.Header.Set("Authorization", "Bearer "+s.Token())
				<-start
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				var res fetchsvc.Response
				err = json.NewDecoder(resp.Body).Decode(&res)
				resp.Body.Close()
				d := time.Since(t0)
				if err != nil || resp.StatusCode != http.StatusOK || !res.CacheHit {
					b.Errorf("status %d cache_hit %v %v", resp.StatusCode, res.CacheHit, err)
					return
				}
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}()
		}
		close(start)
		wg.Wait()
		b.StopTimer()
		cpu += cpuTime() - c0
		s.Close()
		b.StartTimer()
	}
	b.StopTimer()
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(float64(len(lat))*p))] }
	b.ReportMetric(float64(q(0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(q(0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(lat)), "cpu-ms/req")
}
