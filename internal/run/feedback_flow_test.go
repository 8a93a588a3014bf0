package run_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/run"
)

// TestFeedbackModeFlow: in a real run, what the agent's second iteration
// is told is what validation_loop.feedback_mode says (the script runtime
// writes its ${FEEDBACK} to a file), and the report keeps the full text.
func TestFeedbackModeFlow(t *testing.T) {
	for mode, c := range map[string]struct{ want, not string }{
		"stderr":    {want: "exited with status 3; its stderr:\nERR-LINE", not: "OUT-LINE"},
		"exit_code": {want: "validation script exited with status 3", not: "ERR-LINE"},
	} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t)
			f.write("scripts/v.sh", "#!/bin/sh\n[ \"$FULLSEND_ITERATION\" = 2 ] && exit 0\necho OUT-LINE\necho ERR-LINE >&2\nexit 3\n")
			if err := os.Chmod(filepath.Join(f.dir, "scripts/v.sh"), 0o700); err != nil {
				t.Fatal(err)
			}
			f.write("script.yaml", `steps:
  - write: {path: /sandbox/output/feedback.txt, content: "${FEEDBACK}"}
    when: {iteration: 2}
  - write_result: {value: {status: ok}}
`)
			p := f.mustPlan(`agent: agents/tester.md
policy: policies/p.yaml
runtime: script
validation_loop:
  script: scripts/v.sh
  max_iterations: 2
  feedback_mode: `+mode+`
timeout_minutes: 5
`, run.Options{})
			rep, snap := f.mustExecute(p, run.ExecOptions{})
			got := snap.read(t, "/sandbox/output/feedback.txt")
			if !strings.Contains(got, c.want) || strings.Contains(got, c.not) {
				t.Errorf("feedback = %q, want %q without %q", got, c.want, c.not)
			}
			if it := rep.Validation.Iterations; len(it) != 2 || !strings.Contains(strings.Join(it[0].Errors, "\n"), "OUT-LINE") {
				t.Errorf("report iterations = %+v", it)
			}
		})
	}
}
