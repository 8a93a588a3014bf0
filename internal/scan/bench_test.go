package scan

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/corpustest"
)

func reportCPU(b *testing.B, start time.Duration, size int) {
	if d := cpuTime() - start; d > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/1e6/d.Seconds(), "cpu-MB/s")
	}
}

// libraryMarkdown concatenates every markdown file of an agents library.
func libraryMarkdown(b testing.TB, lib corpustest.Library) []byte {
	files := libraryFiles(b, lib)
	var names []string
	for n := range files {
		if strings.HasSuffix(n, ".md") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []byte
	for _, n := range names {
		out = append(out, files[n]...)
		out = append(out, '\n')
	}
	return out
}

// BenchmarkPipelineMarkdown measures the non-ML pipeline (unicode,
// injection, secrets, ssrf) over the corpus markdown, as remote content (all
// scanners on). Run with -cpu 1 for the per-core figure. It needs the
// corpus (FULLSEND_CORPUS): README's figure is measured on it.
func BenchmarkPipelineMarkdown(b *testing.B) {
	p, err := New(DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	benchScan(b, func(ctx context.Context, data []byte, m Meta) {
		r, err := p.Scan(ctx, data, m)
		if err != nil || r.Blocked {
			b.Fatal(err, r.Findings)
		}
	})
}

func benchScanner(b *testing.B, s Scanner) {
	benchScan(b, func(ctx context.Context, data []byte, m Meta) {
		if _, err := s.Scan(ctx, data, m); err != nil {
			b.Fatal(err)
		}
	})
}

// benchScan times scan over the corpus markdown, as remote content.
func benchScan(b *testing.B, scan func(ctx context.Context, data []byte, m Meta)) {
	data := libraryMarkdown(b, corpustest.Corpus(b))
	ctx := context.Background()
	m := Meta{Path: "corpus.md", Origin: Remote}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		scan(ctx, data, m)
	}
	reportCPU(b, start, len(data))
}

func BenchmarkScannerUnicode(b *testing.B)   { benchScanner(b, NewUnicodeScanner()) }
func BenchmarkScannerInjection(b *testing.B) { benchScanner(b, NewInjectionScanner()) }
func BenchmarkScannerSSRF(b *testing.B)      { benchScanner(b, NewSSRFScanner(nil)) }
func BenchmarkScannerSecrets(b *testing.B) {
	s, err := NewSecretsScanner()
	if err != nil {
		b.Fatal(err)
	}
	benchScanner(b, s)
}
