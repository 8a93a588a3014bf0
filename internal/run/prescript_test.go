package run_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/run"
)

// TestPreScriptSkip: the pre-script output protocol. skipped=true or exit
// 78 ends the run skipped (exit 0, nothing provisioned, reason in
// report.json); skipped=false proceeds; malformed output and a removed
// file fail the run instead of proceeding.
func TestPreScriptSkip(t *testing.T) {
	harness := baseHarness + "pre_script: scripts/pre.sh\n"
	cases := []struct {
		name, body string
		status     string // run status
		reason     string
		errPart    string // for failed runs
		outputs    map[string]string
	}{
		{name: "skipped=true", body: "printf 'skipped=true\\nreason=PR #7 already fixes it\\nmy_pr=7\\n' >> \"$FULLSEND_PRESCRIPT_OUTPUT\"\n",
			status: run.StatusSkipped, reason: "PR #7 already fixes it", outputs: map[string]string{"my_pr": "7"}},
		{name: "exit 78", body: "echo nothing to do\nexit 78\n", status: run.StatusSkipped, reason: "the pre_script exited 78 (skip; no reason given)"},
		{name: "exit 78 with reason", body: "echo 'reason=quiet day' >> \"$FULLSEND_PRESCRIPT_OUTPUT\"\nexit 78\n", status: run.StatusSkipped, reason: "quiet day"},
		{name: "skipped=false proceeds", body: "echo skipped=false >> \"$FULLSEND_PRESCRIPT_OUTPUT\"\n", status: run.StatusSucceeded},
		{name: "nothing written proceeds", body: "true\n", status: run.StatusSucceeded},
		{name: "malformed fails", body: "echo 'skipped true' >> \"$FULLSEND_PRESCRIPT_OUTPUT\"\n", status: run.StatusFailed, errPart: "want key=value"},
		{name: "empty skipped fails", body: "echo 'skipped=' >> \"$FULLSEND_PRESCRIPT_OUTPUT\"\n", status: run.StatusFailed, errPart: "want true or false"},
		{name: "removed file fails", body: "rm \"$FULLSEND_PRESCRIPT_OUTPUT\"\n", status: run.StatusFailed, errPart: "the pre_script removed it"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			writeExec(t, filepath.Join(f.dir, "scripts/pre.sh"), "#!/bin/sh\nset -e\n"+c.body)
			rep, _, err := f.execute(f.mustPlan(harness, run.Options{}), run.ExecOptions{})
			if rep == nil {
				t.Fatalf("no report: %v", err)
			}
			if rep.Status != c.status {
				t.Fatalf("status %s (err %v), want %s", rep.Status, err, c.status)
			}
			switch c.status {
			case run.StatusSkipped:
				if err != nil || rep.ExitCode != 0 {
					t.Fatalf("skipped run: err %v exit %d", err, rep.ExitCode)
				}
				if rep.SkipReason != c.reason {
					t.Errorf("skip reason %q, want %q", rep.SkipReason, c.reason)
				}
				for _, ph := range []string{"stage", "host_scan", "provision", "agent[1]"} {
					if phase(rep, ph) != nil {
						t.Errorf("phase %s ran after the skip", ph)
					}
				}
				var onDisk map[string]any
				if err := json.Unmarshal([]byte(readFile(t, filepath.Join(rep.Dir(), run.ReportFile))), &onDisk); err != nil {
					t.Fatal(err)
				}
				if onDisk["status"] != "skipped" || onDisk["skip_reason"] != c.reason {
					t.Errorf("report.json status %v skip_reason %v", onDisk["status"], onDisk["skip_reason"])
				}
			case run.StatusSucceeded:
				if err != nil || rep.SkipReason != "" {
					t.Fatalf("err %v skip %q", err, rep.SkipReason)
				}
			case run.StatusFailed:
				if err == nil || !strings.Contains(err.Error(), c.errPart) || phase(rep, "provision") != nil {
					t.Fatalf("err %v, want %q and nothing provisioned", err, c.errPart)
				}
			}
			if c.outputs != nil {
				for k, v := range c.outputs {
					if rep.PrescriptOutputs[k] != v {
						t.Errorf("prescript_outputs %v", rep.PrescriptOutputs)
					}
				}
			}
		})
	}
	t.Run("the output file is private and in the run dir", func(t *testing.T) {
		f := newFixture(t)
		writeExec(t, filepath.Join(f.dir, "scripts/pre.sh"), "#!/bin/sh\nstat -c %a \"$FULLSEND_PRESCRIPT_OUTPUT\" > \"$FULLSEND_RUN_DIR/mode\"\necho \"$FULLSEND_PRESCRIPT_OUTPUT\" > \"$FULLSEND_RUN_DIR/where\"\n")
		rep, _, err := f.execute(f.mustPlan(harness, run.Options{}), run.ExecOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(readFile(t, filepath.Join(rep.Dir(), "mode"))); got != "600" {
			t.Errorf("mode %s", got)
		}
		if got := strings.TrimSpace(readFile(t, filepath.Join(rep.Dir(), "where"))); filepath.Dir(got) != rep.Dir() {
			t.Errorf("output file %s outside the run dir %s", got, rep.Dir())
		}
		if _, err := os.Stat(filepath.Join(rep.Dir(), "prescript.out")); err != nil {
			t.Error(err)
		}
	})
}
