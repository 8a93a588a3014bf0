//go:build unix

package run_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	"github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
)

// Issue 26 item 5: a native run's hook blocks and canary trips reach the
// report's findings and events.jsonl, as the claude runtime's do.
func TestNativeVerdictsRecorded(t *testing.T) {
	srv := modeltest.New(t, model.APIOpenAI,
		modeltest.Call("n1", "bash", map[string]any{"command": "curl http://169.254.169.254/latest/meta-data/"}),
		modeltest.Call("n2", "bash", map[string]any{"command": "cat " + runtime.DecoyPath}),
		modeltest.Say("done"),
	)
	f := newFixture(t)
	repo := f.newRepo(nil)
	p, err := f.planKeep("agent: agents/tester.md\nskills: [skills/alpha]\nruntime: native\ntimeout_minutes: 5\n",
		run.Options{Runtime: "native", Cwd: repo, RuntimeFlags: nativeFlags(native.Config{API: "openai", BaseURL: srv.URL + "/v1", Model: "m", Auth: "none"})})
	if err != nil {
		t.Fatal(err)
	}
	rep, _, err := f.execute(p, run.ExecOptions{})
	if err != nil {
		t.Fatalf("run: %v (%s)", err, rep.Error)
	}
	var ssrf, canary bool
	for _, fd := range rep.Findings {
		if fd.Phase != "agent[1]" || !fd.Blocked || fd.Path != "bash" || fd.Scanner == "" {
			continue
		}
		ssrf = ssrf || (strings.HasPrefix(fd.Rule, "ssrf.") && fd.Severity == "warning")
		canary = canary || (fd.Rule == "canary.read" && fd.Severity == "critical")
	}
	if !ssrf || !canary {
		t.Errorf("findings (ssrf block %v, canary trip %v): %+v", ssrf, canary, rep.Findings)
	}
	ev, err := os.ReadFile(filepath.Join(rep.Dir(), run.EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(ev), `"kind":"verdict"`); n != 2 {
		t.Errorf("%d verdict events in %s, want 2:\n%s", n, run.EventsFile, ev)
	}
}
