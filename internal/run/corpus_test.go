package run_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/corpustest"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/resolve"
	"github.com/fullsend-ai/fullsend/internal/run"
)

var varRe = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// corpusEnv gives every ${VAR} a host_files src of h (and of its forge
// overlays) uses a real temporary file, as a CI runner would.
func corpusEnv(t testing.TB, h *harness.Harness, env map[string]string) {
	t.Helper()
	tmp := t.TempDir()
	var specs []harness.HostFileSpec
	specs = append(specs, h.HostFiles...)
	for _, o := range h.Forge {
		specs = append(specs, o.HostFiles...)
	}
	for _, hf := range specs {
		m := varRe.FindAllStringSubmatch(hf.Src, -1)
		if len(m) == 0 {
			continue
		}
		for _, v := range m {
			if _, ok := env[v[1]]; ok {
				continue
			}
			if hf.Src == "${"+v[1]+"}" {
				env[v[1]] = filepath.Join(tmp, v[1]+".file")
			} else {
				env[v[1]] = filepath.Join(tmp, v[1]+".dir")
			}
		}
		p := varRe.ReplaceAllStringFunc(hf.Src, func(s string) string { return env[s[2:len(s)-1]] })
		writeFile(t, p, `{"placeholder": true}`)
	}
}

// TestLibrariesRunToTheAgentStep runs every harness of each library,
// without and with each forge overlay, with the script runtime substituted:
// the run must get through pre_script, both scans, provisioning (policy and
// profiles mapped), layout and bootstrap to the agent step, which runs. The
// trivial script writes no result, so validation then fails: that is the
// expected end.
func TestLibrariesRunToTheAgentStep(t *testing.T) {
	corpustest.Each(t, testRunToTheAgentStep)
}

func testRunToTheAgentStep(t *testing.T, lib corpustest.Library) {
	needLocal(t)
	files, _ := filepath.Glob(filepath.Join(lib.Dir, "harness", "*.yaml"))
	if len(files) < lib.MinHarnesses {
		t.Fatalf("%d harnesses in %s", len(files), lib.Dir)
	}
	root := lib.Dir
	cfg, _, err := config.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	sbtmp := t.TempDir()
	scriptFile := filepath.Join(t.TempDir(), "trivial.yaml")
	writeFile(t, scriptFile, "steps:\n  - say: agent step reached\n")
	store, err := cas.Open(filepath.Join(ws, ".fullsend-cache"))
	if err != nil {
		t.Fatal(err)
	}
	type job struct {
		file, forge, name string
		loaded            *harness.Harness
	}
	var jobs []job
	for _, file := range files {
		loaded, err := harness.Load(file, harness.LoadOptions{Root: root, Config: cfg})
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, forge := range append([]string{""}, loaded.ForgeNames()...) {
			name := strings.TrimSuffix(filepath.Base(file), ".yaml")
			if forge != "" {
				name += "+" + forge
			}
			jobs = append(jobs, job{file, forge, name, loaded})
		}
	}
	for name := range lib.PlanSkills {
		if !slices.ContainsFunc(jobs, func(j job) bool { return j.name == name }) {
			t.Errorf("PlanSkills names %s: no such harness and overlay in %s", name, lib.Dir)
		}
	}
	// A few runs at once: a run mostly waits (under -race every exec of
	// the instrumented test binary in the sandbox sleeps a second at exit),
	// and concurrent runs in one workspace are a case of their own.
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, j := range jobs {
		file, forge, name, loaded := j.file, j.forge, j.name, j.loaded
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			t.Run(name, func(t *testing.T) {
				env := map[string]string{}
				corpusEnv(t, loaded, env)
				res, err := resolve.Resolve(context.Background(), file, resolve.Options{Config: cfg, Root: root, Store: store, Offline: true, Forge: forge})
				if err != nil {
					t.Fatalf("resolve: %v", err)
				}
				p, err := run.NewPlan(res, cfg, run.Options{Runtime: "script", RuntimeFlags: scriptFlags(scriptFile), Sandbox: "local",
					TargetRepo: "none", Cwd: ws, Workspace: ws, FullsendDir: root,
					Getenv: func(k string) string { return env[k] }})
				if err != nil {
					t.Fatalf("plan: %v", err)
				}
				if len(p.Spec.Network.Allow) == 0 {
					t.Errorf("no network allowlist from the policy and profiles")
				}
				if wants, ok := lib.PlanSkills[name]; ok {
					var names []string
					for _, s := range p.Skills {
						names = append(names, s.Name)
					}
					for _, want := range wants {
						if !slices.Contains(names, want) {
							t.Errorf("%s skills %v lack %s", name, names, want)
						}
					}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				rep, err := run.Execute(ctx, p, run.ExecOptions{SandboxOptions: sandboxOpts(sbtmp)})
				if rep == nil {
					t.Fatalf("no report: %v", err)
				}
				if ph := phase(rep, "agent[1]"); ph == nil || ph.Status != "ok" {
					t.Fatalf("agent step not reached: %v\nphases: %+v", err, rep.Phases)
				}
				var ie *run.InvalidResultError
				if p.Schema != "" && !errors.As(err, &ie) {
					t.Errorf("err = %v, want the missing-result validation failure", err)
				}
				for _, fd := range rep.Findings {
					if fd.Severity == "critical" {
						t.Errorf("critical finding in library content: %+v", fd)
					}
				}
				t.Logf("%s: %d skills, %d mounts, allow %v, notes %d", name, len(p.Skills), len(p.Spec.Mounts), p.Spec.Network.Allow, len(rep.Notes))
			})
		}()
	}
	wg.Wait()
	if ents, _ := os.ReadDir(sbtmp); len(ents) != 0 {
		t.Errorf("sandbox temp dir not empty after the library runs: %d entries", len(ents))
	}
}
