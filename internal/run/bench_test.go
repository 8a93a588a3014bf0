package run_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/corpustest"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/resolve"
	"github.com/fullsend-ai/fullsend/internal/run"
)

// BenchmarkRunOverheadCode measures everything `fullsend run` does around
// the agent for the corpus's code harness: warm resolution, planning,
// pre_script, host scans, provisioning the local sandbox, layout, runtime
// bootstrap, the in-sandbox context scan, download, validation (schema and
// the validation script), post_script and teardown. The agent is the
// script runtime with a one-step script writing a valid result. Reported:
// ms/op for the whole run and overhead-ms/op = whole run minus the agent
// phase.
//
//	go test -run '^$' -bench BenchmarkRunOverheadCode -benchtime 20x ./internal/run/
func BenchmarkRunOverheadCode(b *testing.B) {
	lib := corpustest.Corpus(b)
	needLocal(b)
	root := lib.Dir
	file := filepath.Join(root, "harness", lib.Main+".yaml")
	cfg, _, err := config.Load(root)
	if err != nil {
		b.Fatal(err)
	}
	ws := b.TempDir()
	env := map[string]string{}
	loaded, err := harness.Load(file, harness.LoadOptions{Root: root, Config: cfg})
	if err != nil {
		b.Fatal(err)
	}
	corpusEnv(b, loaded, env)
	scriptFile := filepath.Join(b.TempDir(), "agent.yaml")
	writeFile(b, scriptFile, "steps:\n  - write_result: {value: {target_branch: main}}\n")
	repo := filepath.Join(b.TempDir(), "repo")
	writeFile(b, filepath.Join(repo, "README.md"), "# repo\n")
	writeFile(b, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	store, err := cas.Open(filepath.Join(ws, ".fullsend-cache"))
	if err != nil {
		b.Fatal(err)
	}
	phaseSum := map[string]float64{}
	var phaseOrder []string
	once := func() (time.Duration, time.Duration) {
		start := time.Now()
		res, err := resolve.Resolve(context.Background(), file, resolve.Options{Config: cfg, Root: root, Store: store, Offline: true})
		if err != nil {
			b.Fatal(err)
		}
		p, err := run.NewPlan(res, cfg, run.Options{Runtime: "script", RuntimeFlags: scriptFlags(scriptFile), Sandbox: "local",
			TargetRepo: repo, Cwd: ws, Workspace: ws, FullsendDir: root, ResolveTime: time.Since(start),
			Getenv: func(k string) string { return env[k] }})
		if err != nil {
			b.Fatal(err)
		}
		rep, err := run.Execute(context.Background(), p, run.ExecOptions{})
		if err != nil {
			b.Fatalf("run: %v (phases %+v)", err, rep.Phases)
		}
		total := time.Since(start)
		for _, ph := range rep.Phases {
			phaseSum[ph.Name] += ph.DurationMS
			if len(phaseOrder) < len(rep.Phases) {
				phaseOrder = append(phaseOrder, ph.Name)
			}
		}
		var agent time.Duration
		for _, ph := range rep.Phases {
			if strings.HasPrefix(ph.Name, "agent[") {
				agent += time.Duration(ph.DurationMS * float64(time.Millisecond))
			}
		}
		return total, agent
	}
	once() // warm: scanner rule sets, cache, page cache
	phaseSum, phaseOrder = map[string]float64{}, nil
	b.ResetTimer()
	var totalAll, agentAll time.Duration
	for i := 0; i < b.N; i++ {
		t, a := once()
		totalAll += t
		agentAll += a
	}
	if os.Getenv("FULLSEND_BENCH_PHASES") != "" {
		for _, n := range phaseOrder {
			b.Logf("%-14s %8.1f ms/op", n, phaseSum[n]/float64(b.N))
		}
	}
	b.ReportMetric(float64((totalAll-agentAll).Microseconds())/1000/float64(b.N), "overhead-ms/op")
	b.ReportMetric(float64(agentAll.Microseconds())/1000/float64(b.N), "agent-ms/op")
}
