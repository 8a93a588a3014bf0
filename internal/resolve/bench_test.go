package resolve

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// benchCommit is the commit the benchmark's references name.
const benchCommit = "8cd37993b5c1e2f4a6d8b0c2e4f6a8b0c2d4e6f8"

// benchWorld is the benchmark: a harness with 20 remote skills of
// 3 files each, all depending on one shared skill, plus a remote agent and
// policy.
func benchWorld(b testing.TB) (*world, string) {
	r := newRepo()
	shared := r.skill(b, "skills/shared", nil, map[string]string{"a.md": "shared a", "b.md": "shared b"})
	var skills []string
	w := newWorld(b, r)
	// Pinned harnesses name commits: a commit's tree listing is shared by
	// every skill of it (a branch's only by concurrent callers).
	w.key = "o/r@" + benchCommit
	for i := 0; i < 20; i++ {
		d := r.skill(b, fmt.Sprintf("skills/s%02d", i), []string{"../shared#sha256=" + string(shared)},
			map[string]string{"notes.md": fmt.Sprintf("notes %d", i), "scripts/run.sh": fmt.Sprintf("echo %d", i)})
		skills = append(skills, "  - "+pin(w.tree(fmt.Sprintf("skills/s%02d", i)), d))
	}
	agent := r.file("agents/a.md", "---\nname: a\n---\nagent\n")
	policy := r.file("policies/p.yaml", "version: 1\n")
	w.srv.AddRepo(w.key, r.Files)
	h := fmt.Sprintf("agent: %s\npolicy: %s\nskills:\n%s\nallowed_remote_resources: [%s]\n",
		pin(w.blob("agents/a.md"), agent), pin(w.blob("policies/p.yaml"), policy), strings.Join(skills, "\n"), w.prefix())
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "harness"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "harness", "bench.yaml"), []byte(h), 0o644); err != nil {
		b.Fatal(err)
	}
	return w, dir
}

// BenchmarkColdResolve: empty cache, 50 ms latency per forge request, the
// real scan pipeline as the CLI builds it from the org config (every
// fetched file is scanned before it is cached). The pipeline is built once,
// outside the timed part, as one fullsend process builds it once.
// Target (issue 15): <= 0.25 s and <= 65 requests per resolution.
func BenchmarkColdResolve(b *testing.B) {
	w, dir := benchWorld(b)
	w.srv.SetLatency(50 * time.Millisecond)
	pipe, err := scan.New(scan.OptionsFromConfig(w.cfg, nil))
	if err != nil {
		b.Fatal(err)
	}
	h := filepath.Join(dir, "harness", "bench.yaml")
	var reqs int
	for b.Loop() {
		b.StopTimer()
		store, err := cas.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		w.store = store
		w.srv.ResetRequests()
		o := w.opts()
		o.Scanner = pipe
		if c := os.Getenv("RESOLVE_BENCH_CONCURRENCY"); c != "" {
			fmt.Sscan(c, &o.Concurrency)
		}
		b.StartTimer()
		res, err := Resolve(context.Background(), h, o)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Graph.Nodes) != 23 {
			b.Fatalf("%d nodes", len(res.Graph.Nodes))
		}
		reqs = w.srv.RequestCount()
	}
	b.ReportMetric(float64(reqs), "requests/op")
}

// BenchmarkWarmProcess builds the fullsend binary and runs
// `fullsend resolve [--offline]` as a subprocess against a warm cache (the
// forge counts zero requests; online, the process could not even reach
// it: its names resolve only through the test resolver). It reports the
// median wall time of 21 runs per iteration. Target: <= 50 ms.
func BenchmarkWarmProcess(b *testing.B) {
	w, dir := benchWorld(b)
	h := filepath.Join(dir, "harness", "bench.yaml")
	cache := b.TempDir()
	store, err := cas.Open(cache)
	if err != nil {
		b.Fatal(err)
	}
	w.store = store
	if _, err := Resolve(context.Background(), h, w.opts()); err != nil {
		b.Fatal(err)
	}
	f := w.srv.Forge()
	cfg := fmt.Sprintf("version: \"1\"\nallowed_remote_resources: [%s]\nsecurity:\n  remote_resources:\n    allowed_domains: [%s]\n    allowed_private_networks: [127.0.0.0/8]\nforges:\n  - {host: %q, type: github, api_url: %q}\n",
		w.prefix(), strings.Join(w.cfg.Security.RemoteResources.AllowedDomains, ", "), f.Host, f.APIURL)
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(cfg), 0o644); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(b.TempDir(), "fullsend")
	build := exec.Command("go", "build", "-o", bin, "github.com/fullsend-ai/fullsend/cmd/fullsend")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	for _, mode := range []string{"offline", "online"} {
		b.Run(mode, func(b *testing.B) {
			args := []string{"--fullsend-dir", dir, "resolve", "--json", "harness/bench.yaml"}
			if mode == "offline" {
				args = append(args, "--offline")
			}
			w.srv.ResetRequests()
			var med time.Duration
			for b.Loop() {
				var ds []time.Duration
				for i := 0; i < 21; i++ {
					cmd := exec.Command(bin, args...)
					cmd.Env = append(os.Environ(), cas.EnvCacheDir+"="+cache)
					start := time.Now()
					out, err := cmd.CombinedOutput()
					ds = append(ds, time.Since(start))
					if err != nil {
						b.Fatalf("%v\n%s", err, out)
					}
					if !strings.Contains(string(out), `"cache_hit": true`) {
						b.Fatalf("not a warm run:\n%s", out)
					}
				}
				sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
				med = ds[len(ds)/2]
			}
			if n := w.srv.RequestCount(); n != 0 {
				b.Fatalf("warm runs made %d requests", n)
			}
			b.ReportMetric(float64(med.Microseconds())/1000, "median-ms/process")
		})
	}
}
