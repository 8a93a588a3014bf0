package run_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/runtime/claude"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite internal/run/testdata/golden")

// golden compares got (JSON) with testdata/golden/name, byte for byte
// (field order included), after replacing the fixture's root directory by
// $ROOT and the values of volatile keys (times, durations, ids) by their
// key name: the serialised plan and report must stay the same across
// refactors.
func golden(t *testing.T, name, root string, got []byte, volatile ...string) {
	t.Helper()
	var compact bytes.Buffer
	if err := json.Compact(&compact, got); err != nil {
		t.Fatal(err)
	}
	got = bytes.ReplaceAll(compact.Bytes(), []byte(root), []byte("$ROOT"))
	// The backend's capabilities depend on the machine (cgroup version,
	// landlock): the report's sandbox.capabilities is left out.
	if i := bytes.Index(got, []byte(`"capabilities":{"Isolation"`)); i >= 0 {
		j := i + len(`"capabilities":`)
		depth, end := 0, -1
		for k := j; k < len(got) && end < 0; k++ {
			switch got[k] {
			case '{':
				depth++
			case '}':
				if depth--; depth == 0 {
					end = k + 1
				}
			}
		}
		if end > 0 {
			got = append(append(got[:j:j], []byte(`"<machine>"`)...), got[end:]...)
		}
	}
	for _, k := range volatile {
		re := regexp.MustCompile(`"` + regexp.QuoteMeta(k) + `":\s*("(\\.|[^"\\])*"|-?[0-9][0-9.eE+-]*)`)
		got = re.ReplaceAll(got, []byte(`"`+k+`": "<`+k+`>"`))
	}
	var out bytes.Buffer
	if err := json.Indent(&out, got, "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	file := filepath.Join("testdata", "golden", name)
	if *updateGolden {
		if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("%s changed (rerun with -update-golden only for an intended format change):\n%s", file, out.Bytes())
	}
}

// TestGoldenPlan: the plan of each runtime serialises as it did (the
// runtime's settings under runtime_options).
func TestGoldenPlan(t *testing.T) {
	f := newFixture(t)
	f.newRepo(map[string]string{"README.md": "hi\n"})
	root := filepath.Dir(f.dir)
	webHarness := baseHarness + "native:\n  tools: [web_fetch]\n  subagent_profiles: [read_only]\n  max_parallel_children: 2\neffort: high\n"
	for _, c := range []struct {
		name    string
		harness string
		o       run.Options
	}{
		{"plan-script.json", baseHarness, run.Options{Runtime: "script", RuntimeFlags: scriptFlags(filepath.Join(f.dir, "script.yaml"))}},
		{"plan-native.json", webHarness, run.Options{Runtime: "native", RuntimeFlags: nativeFlags(native.Config{Model: "m", MaxTurns: 7, BaseURL: "http://127.0.0.1:9/v1"})}},
		{"plan-claude.json", baseHarness + "effort: high\n", run.Options{Runtime: "claude", Sandbox: "docker", RuntimeFlags: claudeFlags(claude.Config{PermissionMode: "default", MaxTurns: 3}, "", "opus-x")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := f.planKeep(c.harness, c.o)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, root, b, "graph_hash")
		})
	}
}

// TestGoldenReport: report.json of a script run keeps its shape and
// values (times, durations and ids aside).
func TestGoldenReport(t *testing.T) {
	f := newFixture(t)
	f.newRepo(map[string]string{"README.md": "hi\n"})
	p := f.mustPlan(baseHarness, run.Options{})
	rep, _ := f.mustExecute(p, run.ExecOptions{RunID: "20260101T000000.000Z-golden"})
	b, err := os.ReadFile(filepath.Join(p.RunsDir, rep.RunID, run.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "report-script.json", filepath.Dir(f.dir), b,
		"started_at", "finished_at", "duration_ms", "session_id", "graph_hash")
	// The phase names and statuses in order (their timings vary).
	var r struct {
		Phases []struct{ Name, Status string } `json:"phases"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ph := range r.Phases {
		names = append(names, ph.Name+"="+ph.Status)
	}
	got := strings.Join(names, " ")
	want := "stage=ok host_scan=ok provision=ok layout=ok bootstrap=ok scan_context=ok agent[1]=ok download[1]=ok validate[1]=ok teardown=ok"
	if got != want {
		t.Errorf("phases %s\nwant %s", got, want)
	}
}

// TestPlanSerialisesNoSecret: the environment values (which may hold
// secrets) live in the Plan, not its PlanRecord, and never reach its JSON,
// whether marshalled by pointer or by value.
func TestPlanSerialisesNoSecret(t *testing.T) {
	f := newFixture(t)
	const secret = "fs-plan-secret-0123456789"
	h := baseHarness + "env:\n  sandbox:\n    SOME_TOKEN: " + secret + "-sandbox\n  runner:\n    OTHER_TOKEN: " + secret + "-runner\n"
	p := f.mustPlan(h, run.Options{})
	if p.SandboxEnv["SOME_TOKEN"] == "" || p.RunnerEnv["OTHER_TOKEN"] == "" {
		t.Fatalf("env not planned: %v %v", p.SandboxEnv, p.RunnerEnv)
	}
	for _, v := range []any{p, *p} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), secret) || !strings.Contains(string(b), `"agent_name":"tester"`) {
			t.Errorf("%T serialised as:\n%s", v, b)
		}
	}
}
