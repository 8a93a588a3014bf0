//go:build linux

package attacktest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
)

// TestSnapshotCarriesNoPoison (issue 33): a hostile agent, run from the
// pull request's checkout with default flags, prepares its workspace for
// the resume: it overwrites the skills the runner laid out, appends to
// the runner's .env, plants a symlink to /etc, a FIFO and a setuid file,
// and leaves a work file. The run fails (turn limit); the operator resumes
// it. The resumed sandbox holds the work file (without its setuid bit),
// the runner's own skills and .env, no symlink and no FIFO; the snapshot
// in the run directory holds none of the poison.
func TestSnapshotCarriesNoPoison(t *testing.T) {
	needSandbox(t)
	tok := token(t)
	srv := modeltest.NewFunc(t, model.APIAnthropic, func(i int, r modeltest.Received) modeltest.Step {
		switch i {
		case 0:
			return modeltest.Call("p1", native.ToolBash, map[string]string{"command": "ln -s /etc etc-link && mkfifo fifo && printf kept-" + tok + " > work.txt && m=47 && chmod ${m}55 work.txt && " +
				"w=/sandbox/workspace; d=/sandbox/cla; d=${d}ude-config; for f in $d/skills/*/SKILL.md; do printf POISON-" + tok + " > \"$f\"; done && printf 'export POISON=" + tok + "\\n' >> $w/.env && echo planted"})
		case 1:
			return modeltest.Call("p2", native.ToolBash, map[string]string{"command": "ls -A; cat work.txt; echo; stat -c %A work.txt; d=/sandbox/cla; d=${d}ude-config; cat $d/skills/*/SKILL.md; w=/sandbox/workspace; cat $w/.env"})
		}
		return modeltest.Say("done")
	})
	harness := helloHarness(t)
	attackerCheckout(t, "", srv.Config().BaseURL)
	t.Setenv("FULLSEND_MODEL_AUTH", "none")
	runs := defaultRunsDir(t)
	code, _, stderr := fullsend(t, "run", "--runtime", "native", "--max-turns", "1", harness)
	if code != 1 || !strings.Contains(stderr, "turn limit") {
		t.Fatalf("first attempt: exit %d\n%s", code, stderr)
	}
	outs, _ := filepath.Glob(filepath.Join(runs, "*", native.ToolOutputsDir, "1.txt"))
	if len(outs) != 1 {
		t.Fatalf("tool outputs %v", outs)
	}
	if b, err := os.ReadFile(outs[0]); err != nil || strings.TrimSpace(string(b)) != "planted" {
		t.Fatalf("the hostile command did not run: %q %v", b, err)
	}
	code, _, stderr = fullsend(t, "run", "--resume", "latest", "--max-turns", "3", harness)
	reqs := srv.Requests()
	if len(reqs) < 3 {
		t.Fatalf("resume: exit %d, %d model requests\n%s", code, len(reqs), stderr)
	}
	msgs := reqs[2].Decoded.Messages
	seen := msgs[len(msgs)-1].Text()
	if !strings.Contains(seen, "kept-"+tok) {
		t.Fatalf("the work file was not restored:\n%s\n%s", seen, stderr)
	}
	for _, bad := range []string{"etc-link", "fifo", "POISON", "-rws"} {
		if strings.Contains(seen, bad) {
			t.Errorf("the resumed sandbox holds %q:\n%s", bad, seen)
		}
	}
	if !strings.Contains(seen, "-rwx") || !strings.Contains(seen, "GREETING_NAME") {
		t.Errorf("the resumed sandbox lacks the work file's mode or the runner's .env:\n%s", seen)
	}
	snaps, _ := filepath.Glob(filepath.Join(runs, "*", native.SnapshotsDir, "*.tar"))
	if len(snaps) != 1 {
		t.Fatalf("snapshots %v", snaps)
	}
	data, err := os.ReadFile(snaps[0])
	if err != nil || strings.Contains(string(data), "POISON") || !strings.Contains(string(data), "kept-"+tok) {
		t.Errorf("snapshot %s (%v): poison kept or work file missing", snaps[0], err)
	}
}
