package cas

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/ref"
)

// BenchmarkGetTree measures verify-on-read of a cached tree (20 files of
// 512 KiB): bytes per second of content re-hashed by Get. Target: >= 1 GB/s
// on one core (go test -run '^$' -bench GetTree -cpu 1 ./internal/cas).
func BenchmarkGetTree(b *testing.B) {
	const files, size = 20, 512 << 10
	rng := rand.New(rand.NewPCG(1, 1))
	tree := map[string][]byte{}
	for i := range files {
		c := make([]byte, size)
		for j := range c {
			c[j] = byte(rng.Uint32())
		}
		tree[fmt.Sprintf("dir%d/file%02d.md", i%3, i)] = c
	}
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	e, err := s.PutTree("", Metadata{URL: "https://example.test/skill"}, tree)
	if err != nil {
		b.Fatal(err)
	}
	benchGet(b, s, e.Digest, files*size)
}

// benchGet runs Get(d) in the benchmark loop, size being the content bytes
// one Get verifies, and adds "MB/cpu-s": content bytes verified per
// CPU-second of the whole process, the one-core figure on a busy machine.
func benchGet(b *testing.B, s *Store, d ref.Digest, size int64) {
	b.SetBytes(size)
	b.ReportAllocs()
	c0, n := cpuTime(), int64(0)
	for b.Loop() {
		if _, err := s.Get(d); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if c := cpuTime() - c0; c > 0 {
		b.ReportMetric(float64(n*size)/c.Seconds()/1e6, "MB/cpu-s")
	}
}

// BenchmarkGetFile measures verify-on-read of one 4 MiB file entry.
func BenchmarkGetFile(b *testing.B) {
	c := make([]byte, 4<<20)
	rng := rand.New(rand.NewPCG(2, 2))
	for j := range c {
		c[j] = byte(rng.Uint32())
	}
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	e, err := s.PutFile("", Metadata{}, c)
	if err != nil {
		b.Fatal(err)
	}
	benchGet(b, s, e.Digest, int64(len(c)))
}
