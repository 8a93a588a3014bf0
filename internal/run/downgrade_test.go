package run_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/progress"
	"github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/backends"
)

// weakMemory is the local backend claiming that its memory limit holds
// only per process: a backend weaker than the run asks.
type weakMemory struct{ sandbox.Backend }

func (w weakMemory) Capabilities() sandbox.Capabilities {
	c := w.Backend.Capabilities()
	c.Limits.Memory = sandbox.LimitEnforcement{Level: sandbox.Weaker, How: "test: RLIMIT_AS per process"}
	return c
}

// TestDowngradesWarnedBeforeTheAgent: every enforcement weaker than the
// harness asked for (per-binary network rules, an env.sandbox variable
// unset on the runner, a sandbox limit the backend enforces weakly) is a
// "fullsend: warning:" line on stderr before the agent phase starts, and
// stays in the report's notes.
func TestDowngradesWarnedBeforeTheAgent(t *testing.T) {
	f := newFixture(t)
	needLocal(t)
	p := f.mustPlan(baseHarness+"env:\n  sandbox:\n    GH_TOKEN: ${GH_TOKEN}\n", run.Options{})
	b, err := backends.Open("local", sandboxOpts(f.tmp))
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	pr := progress.New(&stderr, progress.Options{Mode: progress.Plain})
	rep, _, err := f.execute(p, run.ExecOptions{Backend: weakMemory{b}, Progress: pr, Warn: pr.Writer()})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(stderr.String(), "\n")
	at := func(sub string) int {
		for i, l := range lines {
			if strings.Contains(l, sub) {
				return i
			}
		}
		return -1
	}
	agent := at("fullsend: agent[1]: started")
	if agent < 0 {
		t.Fatalf("no agent phase line:\n%s", stderr.String())
	}
	for _, w := range []string{
		"fullsend: warning: network: per-binary restrictions of policies and profiles are not enforced",
		"fullsend: warning: env.sandbox: unset on the runner (empty): GH_TOKEN",
		"fullsend: warning: sandbox local: limit memory: test: RLIMIT_AS per process (weaker)",
	} {
		i := at(w)
		if i < 0 || i > agent || !strings.HasPrefix(lines[i], "fullsend: warning: ") {
			t.Errorf("warning %q at line %d, agent phase at line %d:\n%s", w, i, agent, stderr.String())
		}
		if !hasNote(rep, strings.TrimPrefix(w, "fullsend: warning: ")) {
			t.Errorf("report notes lack %q: %q", w, rep.Notes)
		}
	}
}
