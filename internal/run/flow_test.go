package run_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// TestHostFiles: optional sources that are unset or missing are skipped
// with a note; a missing required source is an error naming the entry.
func TestHostFiles(t *testing.T) {
	cases := []struct {
		name    string
		entry   string
		env     map[string]string
		wantErr string // "" = plans fine
		note    string
	}{
		{name: "required unset variable", entry: "  - src: ${CREDS}\n    dest: /tmp/c.json\n", wantErr: "host_files[0]: required host file is missing: src ${CREDS}: CREDS not set"},
		{name: "required missing file", entry: "  - src: ${CREDS}\n    dest: /tmp/c.json\n", env: map[string]string{"CREDS": "/nonexistent/c.json"}, wantErr: "host_files[0]: required host file is missing: src /nonexistent/c.json: no such regular file"},
		{name: "optional unset variable", entry: "  - src: ${CREDS}\n    dest: /tmp/c.json\n    optional: true\n", note: "host_files[0] (/tmp/c.json): skipped: src ${CREDS}: CREDS not set"},
		{name: "optional missing file", entry: "  - src: ${CREDS}\n    dest: /tmp/c.json\n    optional: true\n", env: map[string]string{"CREDS": "/nonexistent/c.json"}, note: "skipped: src /nonexistent/c.json: no such regular file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			for k, v := range c.env {
				f.env[k] = v
			}
			p, err := f.plan(baseHarness+"host_files:\n"+c.entry, run.Options{})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, run.ErrHostFileMissing) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, n := range p.Notes {
				found = found || strings.Contains(n, c.note)
			}
			if !found || p.HostFiles[0].Src != "" {
				t.Errorf("notes %v, host file %+v", p.Notes, p.HostFiles[0])
			}
		})
	}
}

// TestScripts covers pre_script and post_script and their failure paths.
func TestScripts(t *testing.T) {
	const pre = "#!/bin/sh\necho \"pre $MY_VAR $FULLSEND_RUN_DIR\"\necho pre-ran > \"$FULLSEND_RUN_DIR/pre-marker\"\n"
	const post = "#!/bin/sh\necho \"post $MY_VAR\"\ncat \"$FULLSEND_RESULT_FILE\"\n"
	harness := baseHarness + "pre_script: scripts/pre.sh\npost_script: scripts/post.sh\nenv:\n  runner:\n    MY_VAR: \"${HOST_VALUE}\"\n"
	setup := func(t *testing.T, preBody, postBody string) *fixture {
		f := newFixture(t)
		f.env["HOST_VALUE"] = "from-host"
		writeExec(t, filepath.Join(f.dir, "scripts/pre.sh"), preBody)
		writeExec(t, filepath.Join(f.dir, "scripts/post.sh"), postBody)
		return f
	}
	t.Run("both run", func(t *testing.T) {
		f := setup(t, pre, post)
		rep, _, err := f.execute(f.mustPlan(harness, run.Options{}), run.ExecOptions{})
		if err != nil {
			t.Fatal(err)
		}
		preLog := readFile(t, filepath.Join(rep.Dir(), run.PreScriptLog))
		if preLog != "pre from-host "+rep.Dir()+"\n" {
			t.Errorf("pre_script.log = %q", preLog)
		}
		postLog := readFile(t, filepath.Join(rep.Dir(), run.PostScriptLog))
		if !strings.HasPrefix(postLog, "post from-host\n") || !strings.Contains(postLog, `"status": "ok"`) {
			t.Errorf("post_script.log = %q", postLog)
		}
		if phase(rep, "pre_script").Status != "ok" || phase(rep, "post_script").Status != "ok" {
			t.Errorf("phases: %+v", rep.Phases)
		}
	})
	t.Run("pre_script fails: nothing provisioned", func(t *testing.T) {
		f := setup(t, "#!/bin/sh\necho broken >&2\nexit 3\n", post)
		rep, _, err := f.execute(f.mustPlan(harness, run.Options{}), run.ExecOptions{})
		var se *run.ScriptError
		if !errors.As(err, &se) || se.Field != "pre_script" || se.ExitCode != 3 {
			t.Fatalf("err = %v", err)
		}
		if rep.Status != run.StatusFailed || phase(rep, "provision") != nil || phase(rep, "post_script") != nil {
			t.Errorf("status %s phases %+v", rep.Status, rep.Phases)
		}
		if got := readFile(t, filepath.Join(rep.Dir(), run.PreScriptLog)); got != "broken\n" {
			t.Errorf("pre log = %q", got)
		}
	})
	t.Run("post_script fails", func(t *testing.T) {
		f := setup(t, pre, "#!/bin/sh\nexit 7\n")
		rep, _, err := f.execute(f.mustPlan(harness, run.Options{}), run.ExecOptions{})
		var se *run.ScriptError
		if !errors.As(err, &se) || se.Field != "post_script" || se.ExitCode != 7 || rep.Status != run.StatusFailed {
			t.Fatalf("err = %v status %s", err, rep.Status)
		}
		if ph := phase(rep, "teardown"); ph == nil || ph.Status != "ok" {
			t.Errorf("teardown %+v", ph)
		}
	})
	t.Run("post_script skipped when the agent fails", func(t *testing.T) {
		f := setup(t, pre, post)
		f.write("script.yaml", "steps:\n  - fail: {message: boom, exit_code: 4}\n")
		rep, _, err := f.execute(f.mustPlan(harness, run.Options{}), run.ExecOptions{})
		var ae *run.AgentError
		if !errors.As(err, &ae) || ae.ExitCode != 4 {
			t.Fatalf("err = %v", err)
		}
		if phase(rep, "post_script") != nil {
			t.Errorf("post_script ran after a failed agent")
		}
	})
	t.Run("script without executable bit runs through sh", func(t *testing.T) {
		f := setup(t, pre, post)
		if err := os.Chmod(filepath.Join(f.dir, "scripts/pre.sh"), 0o644); err != nil {
			t.Fatal(err)
		}
		rep, _, err := f.execute(f.mustPlan(harness, run.Options{}), run.ExecOptions{})
		if err != nil || !strings.HasPrefix(readFile(t, filepath.Join(rep.Dir(), run.PreScriptLog)), "pre from-host") {
			t.Fatalf("err = %v", err)
		}
	})
}

func writeExec(t testing.TB, p, body string) {
	t.Helper()
	writeFile(t, p, body)
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestValidationLoop: pass at once, pass on retry with the errors fed
// back, give up after max_iterations, and a failing validation script.
func TestValidationLoop(t *testing.T) {
	cases := []struct {
		name      string
		script    string
		extra     string // harness additions
		valScript string
		wantErr   bool
		wantIters int
		wantValid []bool
		check     func(t *testing.T, rep *run.Report)
	}{
		{name: "pass", script: okScript, wantIters: 1, wantValid: []bool{true}},
		{name: "retry with feedback", script: `steps:
  - write_result: {json: '{"status": "bad"}'}
    when: {iteration: 1}
  - expect: {path: /dev/null}
    when: {feedback: false}
  - exec: {cmd: 'printf "%s" "$FB" | grep -q "status"', env: {FB: "${FEEDBACK}"}}
    when: {iteration: 2}
  - write_result: {value: {status: ok}}
    when: {iteration: 2}
`, wantIters: 2, wantValid: []bool{false, true}, check: func(t *testing.T, rep *run.Report) {
			if errs := rep.Validation.Iterations[0].Errors; len(errs) == 0 || !strings.Contains(errs[0], "/status") {
				t.Errorf("iteration 1 errors = %v", errs)
			}
		}},
		{name: "give up", script: "steps:\n  - write_result: {json: '{\"status\": 3}'}\n", wantErr: true, wantIters: 2, wantValid: []bool{false, false},
			check: func(t *testing.T, rep *run.Report) {
				if rep.Status != run.StatusInvalid || rep.Validation.Valid == nil || *rep.Validation.Valid {
					t.Errorf("status %s valid %v", rep.Status, rep.Validation.Valid)
				}
			}},
		{name: "no result", script: "steps:\n  - say: nothing\n", wantErr: true, wantIters: 2, wantValid: []bool{false, false},
			check: func(t *testing.T, rep *run.Report) {
				if !strings.Contains(rep.Validation.Iterations[0].Errors[0], "did not write /sandbox/output/agent-result.json") {
					t.Errorf("errors = %v", rep.Validation.Iterations[0].Errors)
				}
			}},
		{name: "validation script rejects", script: okScript, extra: "  script: scripts/check.sh\n",
			valScript: "#!/bin/sh\necho \"checking $FULLSEND_RESULT_FILE\"\ngrep -q never \"$FULLSEND_RESULT_FILE\" || { echo 'missing never' >&2; exit 1; }\n",
			wantErr:   true, wantIters: 2, wantValid: []bool{false, false},
			check: func(t *testing.T, rep *run.Report) {
				if e := rep.Validation.Iterations[1].Errors; len(e) != 1 || !strings.Contains(e[0], "missing never") {
					t.Errorf("errors = %v", e)
				}
			}},
		{name: "validation script accepts", script: okScript, extra: "  script: scripts/check.sh\n",
			valScript: "#!/bin/sh\ngrep -q ok \"$FULLSEND_RESULT_FILE\"\n", wantIters: 1, wantValid: []bool{true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.write("script.yaml", c.script)
			if c.valScript != "" {
				writeExec(t, filepath.Join(f.dir, "scripts/check.sh"), c.valScript)
			}
			h := strings.Replace(baseHarness, "  max_iterations: 2\n", "  max_iterations: 2\n"+c.extra, 1)
			rep, _, err := f.execute(f.mustPlan(h, run.Options{}), run.ExecOptions{})
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, c.wantErr)
			}
			var ie *run.InvalidResultError
			if c.wantErr && !errors.As(err, &ie) {
				t.Errorf("err %T is not an InvalidResultError", err)
			}
			if len(rep.Validation.Iterations) != c.wantIters {
				t.Fatalf("iterations = %+v", rep.Validation.Iterations)
			}
			for i, v := range c.wantValid {
				if rep.Validation.Iterations[i].Valid != v {
					t.Errorf("iteration %d valid = %v", i+1, !v)
				}
			}
			if c.check != nil {
				c.check(t, rep)
			}
		})
	}
}

// TestTeardownAfterFailingAgent: an agent that leaves a background process
// and fails; the sandbox is torn down, no process and no temp dir remain.
func TestTeardownAfterFailingAgent(t *testing.T) {
	f := newFixture(t)
	marker := fmt.Sprintf("31%d.5", os.Getpid())
	f.write("script.yaml", "steps:\n  - exec: {cmd: 'sleep "+marker+" > /dev/null 2>&1 &'}\n  - fail: {message: agent crashed, exit_code: 2}\n")
	var sess sandbox.Session
	rep, _, err := f.execute(f.mustPlan(baseHarness, run.Options{}), run.ExecOptions{OnProvisioned: func(s sandbox.Session) { sess = s }})
	var ae *run.AgentError
	if !errors.As(err, &ae) || ae.ExitCode != 2 || rep.Status != run.StatusFailed {
		t.Fatalf("err = %v status %s", err, rep.Status)
	}
	if ph := phase(rep, "teardown"); ph == nil || ph.Status != "ok" {
		t.Fatalf("teardown = %+v", ph)
	}
	if pids := processesMatching("sleep " + marker); len(pids) != 0 {
		t.Errorf("processes left after teardown: %v", pids)
	}
	if _, err := sess.Exec(context.Background(), sandbox.ExecRequest{Args: []string{"true"}}); err == nil {
		t.Errorf("session still answers after teardown")
	}
}
