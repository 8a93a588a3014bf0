package script

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/runtimetest"
)

const repo = "/sandbox/workspace/demo"

func writeScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type recorder struct{ events []runtime.Event }

func (r *recorder) add(e runtime.Event) { r.events = append(r.events, e) }

func (r *recorder) kinds(k runtime.EventKind) []runtime.Event {
	var out []runtime.Event
	for _, e := range r.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func input(script string, iter int, rec *recorder) runtime.RunInput {
	in := runtime.RunInput{
		AgentName:  "demo",
		Prompt:     "do it",
		Iteration:  iter,
		ResultPath: "/sandbox/workspace/result.json",
		WorkDir:    repo,
		Env:        map[string]string{"ISSUE_NUMBER": "42"},
		Options:    map[string]string{OptionScript: script},
	}
	if rec != nil {
		in.Events = rec.add
	}
	return in
}

func newSession(t *testing.T) *runtimetest.Session {
	s := runtimetest.NewSession(t)
	s.WriteFile(t, repo+"/README.md", []byte("# Demo\nHello world\n"))
	return s
}

func TestRunAllOps(t *testing.T) {
	s := newSession(t)
	stub := runtimetest.WriteScript(t, "fullsend", `[ "$1" = fetch-skill ] || exit 9
echo "fetching $2" >&2
echo /sandbox/claude-config/skills/fetched-x`)
	s.Mount(runtime.FullsendBinary, stub)
	sc := writeScript(t, `steps:
  - say: "working on issue ${ISSUE_NUMBER}"
  - read: {path: "${WORKDIR}/README.md", expect_contains: Hello, save: README}
  - write: {path: "${WORKDIR}/out/notes.txt", content: "iteration ${ITERATION} $$HOME\n"}
  - exec: {args: [cat, out/notes.txt], expect_stdout_contains: "iteration 1 $HOME"}
  - exec: {cmd: "ls | wc -l", expect_output: '^\s*[0-9]+', save: COUNT}
  - exec: {cmd: "exit 3", expect_exit: 3}
  - expect: {path: "${WORKDIR}/out/notes.txt", contains: iteration, not_contains: secret, matches: 'iteration \d'}
  - expect: {path: "${WORKDIR}/missing", exists: false}
  - fetch_skill: {url: "https://github.com/org/lib/tree/v1/skills/x"}
  - write_result: {value: {status: ok, issue: "${ISSUE_NUMBER}", files: "${COUNT}", skill: "${SKILL_DIR}", n: 3}}
`)
	rec := &recorder{}
	out, err := New().Run(context.Background(), s, input(sc, 1, rec))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if out.ExitCode != 0 || out.StopReason != runtime.StopCompleted || out.ToolCalls != 10 || out.Turns != 1 {
		t.Fatalf("outcome %+v", out)
	}
	var res map[string]any
	if err := json.Unmarshal(s.ReadFile(t, "/sandbox/workspace/result.json"), &res); err != nil {
		t.Fatal(err)
	}
	if res["status"] != "ok" || res["issue"] != "42" || res["files"] != "2" || res["skill"] != "/sandbox/claude-config/skills/fetched-x" || res["n"] != float64(3) {
		t.Fatalf("result %v", res)
	}
	if got := string(s.ReadFile(t, repo+"/out/notes.txt")); got != "iteration 1 $HOME\n" {
		t.Fatalf("notes %q", got)
	}
	calls, results := rec.kinds(runtime.EventToolCall), rec.kinds(runtime.EventToolResult)
	if len(calls) != 10 || len(results) != 10 {
		t.Fatalf("events: %d calls %d results", len(calls), len(results))
	}
	if calls[8].Name != "fetch_skill" || calls[8].Text != "https://github.com/org/lib/tree/v1/skills/x" || calls[8].ID != "step-9" {
		t.Fatalf("fetch_skill call event %+v", calls[8])
	}
	if txt := rec.kinds(runtime.EventText); len(txt) != 1 || txt[0].Text != "working on issue 42" {
		t.Fatalf("say event %+v", txt)
	}
	last := rec.events[len(rec.events)-1]
	if last.Kind != runtime.EventResult || last.Name != runtime.StopCompleted || last.Time.IsZero() {
		t.Fatalf("last event %+v", last)
	}
}

func TestExpectationFailureNamesStep(t *testing.T) {
	cases := []struct {
		name, script, want string
	}{
		{"exit", "steps:\n  - say: hi\n  - exec: {cmd: 'echo boom >&2; exit 2'}\n", "step 2 (exec, line 3): expectation failed: echo boom >&2; exit 2 exited 2, want 0: boom"},
		{"stdout", "steps:\n  - exec: {args: [echo, hi], expect_stdout_contains: bye}\n", `step 1 (exec, line 2): expectation failed: stdout of echo hi does not contain "bye"`},
		{"regex", "steps:\n  - exec: {args: [echo, hi], expect_output: '^bye'}\n", "does not match /^bye/"},
		{"read", "steps:\n  - read: {path: /sandbox/workspace/demo/README.md, expect_contains: Goodbye}\n", `step 1 (read, line 2): expectation failed: /sandbox/workspace/demo/README.md does not contain "Goodbye"`},
		{"read missing", "steps:\n  - read: {path: /sandbox/nope}\n", "step 1 (read, line 2): expectation failed: /sandbox/nope cannot be read"},
		{"exists", "steps:\n  - name: check\n    expect: {path: /sandbox/nope}\n", `step 1 (expect "check", line 2): expectation failed: /sandbox/nope does not exist`},
		{"absent", "steps:\n  - expect: {path: /sandbox/workspace/demo/README.md, exists: false}\n", "README.md exists"},
		{"contains", "steps:\n  - expect: {path: /sandbox/workspace/demo/README.md, contains: zzz}\n", `does not contain "zzz"`},
		{"not contains", "steps:\n  - expect: {path: /sandbox/workspace/demo/README.md, not_contains: Hello}\n", `contains "Hello"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSession(t)
			rec := &recorder{}
			out, err := New().Run(context.Background(), s, input(writeScript(t, c.script), 1, rec))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			var se *StepError
			if !errors.As(err, &se) {
				t.Fatalf("error is not a StepError: %v", err)
			}
			if !errors.Is(err, ErrExpectation) {
				t.Fatalf("error does not wrap ErrExpectation: %v", err)
			}
			if out == nil || out.ExitCode != 1 || out.StopReason != runtime.StopError || len(out.Errors) != 1 {
				t.Fatalf("outcome %+v", out)
			}
			if errs := rec.kinds(runtime.EventError); len(errs) != 1 {
				t.Fatalf("error events %+v", errs)
			}
		})
	}
}

func TestIterationBranching(t *testing.T) {
	sc := writeScript(t, `steps:
  - write_result: {json: '{"status": '}
    when: {iteration: 1}
  - write_result: {value: {status: fixed, feedback: "${FEEDBACK}"}}
    when: {from_iteration: 2, feedback: true}
`)
	s := newSession(t)
	rt := New()
	if _, err := rt.Run(context.Background(), s, input(sc, 1, nil)); err != nil {
		t.Fatal(err)
	}
	if got := string(s.ReadFile(t, "/sandbox/workspace/result.json")); got != `{"status": ` {
		t.Fatalf("iteration 1 result %q", got)
	}
	if err := rt.CleanupIteration(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.HostPath("/sandbox/workspace/result.json")); !os.IsNotExist(err) {
		t.Fatalf("result not removed by CleanupIteration: %v", err)
	}
	in := input(sc, 2, nil)
	in.Feedback = "status: expected object"
	if _, err := rt.Run(context.Background(), s, in); err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(s.ReadFile(t, "/sandbox/workspace/result.json"), &res); err != nil || res["status"] != "fixed" || res["feedback"] != "status: expected object" {
		t.Fatalf("iteration 2 result %v %v", res, err)
	}
	// iteration 3 without feedback: no step applies, nothing written
	_ = rt.CleanupIteration(context.Background(), s)
	out, err := rt.Run(context.Background(), s, input(sc, 3, nil))
	if err != nil || out.ToolCalls != 0 {
		t.Fatalf("iteration 3: %+v %v", out, err)
	}
	if _, err := os.Stat(s.HostPath("/sandbox/workspace/result.json")); !os.IsNotExist(err) {
		t.Fatal("iteration 3 wrote a result")
	}
}

func TestFetchSkillFailure(t *testing.T) {
	s := newSession(t)
	s.Mount(runtime.FullsendBinary, runtimetest.WriteScript(t, "fullsend", `echo "fullsend: https://evil.example/x: not allowed" >&2; exit 1`))
	_, err := New().Run(context.Background(), s, input(writeScript(t, "steps:\n  - fetch_skill: {url: https://evil.example/x}\n"), 1, nil))
	if err == nil || !strings.Contains(err.Error(), "step 1 (fetch_skill, line 2): fetch-skill https://evil.example/x: exit status 1: fullsend: https://evil.example/x: not allowed") {
		t.Fatalf("err = %v", err)
	}
	s.Mount(runtime.FullsendBinary, runtimetest.WriteScript(t, "fullsend2", `echo relative/dir`))
	_, err = New().Run(context.Background(), s, input(writeScript(t, "steps:\n  - fetch_skill: {url: https://x.example/y}\n"), 1, nil))
	if err == nil || !strings.Contains(err.Error(), "want an absolute skill directory") {
		t.Fatalf("err = %v", err)
	}
}

func TestFailTimeoutAndVariables(t *testing.T) {
	s := newSession(t)
	out, err := New().Run(context.Background(), s, input(writeScript(t, "steps:\n  - fail: {message: 'agent crashed on ${ISSUE_NUMBER}', exit_code: 3}\n  - say: never\n"), 1, nil))
	if err == nil || !strings.Contains(err.Error(), "step 1 (fail, line 2): agent crashed on 42") || out.ExitCode != 3 || out.ToolCalls != 1 {
		t.Fatalf("fail: %+v %v", out, err)
	}
	_, err = New().Run(context.Background(), s, input(writeScript(t, "steps:\n  - say: '${NOPE}'\n"), 1, nil))
	if err == nil || !strings.Contains(err.Error(), "variable ${NOPE} is not set") {
		t.Fatalf("unknown var: %v", err)
	}
	in := input(writeScript(t, "steps:\n  - exec: {args: [sleep, '10']}\n"), 1, nil)
	in.Timeout = 100 * time.Millisecond
	start := time.Now()
	out, err = New().Run(context.Background(), s, in)
	if err == nil || out.StopReason != runtime.StopTimeout || time.Since(start) > 5*time.Second {
		t.Fatalf("timeout: %+v %v", out, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out, err = New().Run(ctx, s, input(writeScript(t, "steps:\n  - say: hi\n"), 1, nil))
	if err == nil || out.StopReason != runtime.StopCanceled {
		t.Fatalf("canceled: %+v %v", out, err)
	}
}

func TestParseStrict(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"unknown field", "steps:\n  - exec: {args: [ls], expect_exti: 1}\n", "line 2"},
		{"unknown top", "stepz: []\n", "line 1"},
		{"no op", "steps:\n  - name: x\n", "line 2: step 1: no operation"},
		{"two ops", "steps:\n  - say: a\n  - say: b\n    read: {path: /x}\n", "line 3: step 2: several operations in one step (read, say)"},
		{"exec both", "steps:\n  - exec: {args: [ls], cmd: ls}\n", "exactly one of args or cmd"},
		{"bad regex", "steps:\n  - exec: {cmd: ls, expect_output: '('}\n", "expect_output"},
		{"read no path", "steps:\n  - read: {save: X}\n", "read: path is required"},
		{"bad save", "steps:\n  - exec: {cmd: ls, save: 'a-b'}\n", "not a variable name"},
		{"result none", "steps:\n  - write_result: {}\n", "exactly one of value, json or file"},
		{"empty", "steps: []\n", "no steps"},
		{"absent with content", "steps:\n  - expect: {path: /x, exists: false, contains: y}\n", "content checks need exists: true"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(c.src))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "script s.yaml: ") {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func TestOptionsAndBootstrap(t *testing.T) {
	s := newSession(t)
	in := input("", 1, nil)
	in.Options = map[string]string{}
	if out, err := New().Run(context.Background(), s, in); err == nil || out != nil || !strings.Contains(err.Error(), `option "script"`) {
		t.Fatalf("missing script: %v %v", out, err)
	}
	in.Options = map[string]string{"script": "x", "binary": "y"}
	if _, err := New().Run(context.Background(), s, in); err == nil || !strings.Contains(err.Error(), `unknown option "binary"`) {
		t.Fatalf("unknown option: %v", err)
	}

	dir := t.TempDir()
	agent := filepath.Join(dir, "agent.md")
	os.WriteFile(agent, []byte("---\nname: demo\n---\nDo it.\n"), 0o644)
	skill := filepath.Join(dir, "skill")
	os.MkdirAll(filepath.Join(skill, "scripts"), 0o755)
	os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: lint\n---\n"), 0o644)
	os.WriteFile(filepath.Join(skill, "scripts", "run.sh"), []byte("echo hi\n"), 0o755)
	bin := BootstrapInputFor(agent, skill)
	if err := New().Bootstrap(context.Background(), s, bin); err != nil {
		t.Fatal(err)
	}
	if got := string(s.ReadFile(t, "/sandbox/claude-config/agents/demo.md")); !strings.Contains(got, "Do it.") {
		t.Fatalf("agent file %q", got)
	}
	if got := string(s.ReadFile(t, "/sandbox/claude-config/skills/lint/scripts/run.sh")); got != "echo hi\n" {
		t.Fatalf("skill file %q", got)
	}
	bin.Skills = append(bin.Skills, bin.Skills[0])
	if err := New().Bootstrap(context.Background(), s, bin); err == nil || !strings.Contains(err.Error(), `skill "lint": listed twice`) {
		t.Fatalf("duplicate skill: %v", err)
	}
	bin.Skills = []runtime.Skill{{Name: "../evil", HostDir: skill}}
	if err := New().Bootstrap(context.Background(), s, bin); err == nil || !strings.Contains(err.Error(), `skill name "../evil"`) {
		t.Fatalf("bad skill name: %v", err)
	}
}

func BootstrapInputFor(agent, skill string) runtime.BootstrapInput {
	return runtime.BootstrapInput{AgentName: "demo", AgentFile: agent, Skills: []runtime.Skill{{Name: "lint", HostDir: skill}}, RepoDir: repo}
}

func TestHelloExampleScript(t *testing.T) {
	s := newSession(t)
	s.WriteFile(t, "/sandbox/claude-config/skills/greeting/SKILL.md", []byte("---\nname: greeting\n---\nCompose a greeting.\n"))
	in := input("testdata/hello.yaml", 1, nil)
	in.Env = map[string]string{"GREETING_NAME": "world"}
	if _, err := New().Run(context.Background(), s, in); err != nil {
		t.Fatal(err)
	}
	if got := string(s.ReadFile(t, "/sandbox/workspace/result.json")); !strings.Contains(got, `"greeting": "Hello, world!"`) {
		t.Fatalf("result %s", got)
	}
	for iter, want := range map[int]string{1: `"greeting": "hi"`, 2: `"greeting": "Hello, world!"`} {
		in := input("testdata/retry.yaml", iter, nil)
		in.Env = map[string]string{"GREETING_NAME": "world"}
		if iter == 2 {
			in.Feedback = "/greeting: does not match pattern"
		}
		if _, err := New().Run(context.Background(), s, in); err != nil {
			t.Fatal(err)
		}
		if got := string(s.ReadFile(t, "/sandbox/workspace/result.json")); !strings.Contains(got, want) {
			t.Fatalf("iteration %d result %s", iter, got)
		}
	}
}

func TestStepTimeout(t *testing.T) {
	s := newSession(t)
	start := time.Now()
	_, err := New().Run(context.Background(), s, input(writeScript(t, "steps:\n  - exec: {cmd: 'sleep 10', timeout: 100ms}\n"), 1, nil))
	if err == nil || !strings.Contains(err.Error(), "step 1 (exec, line 2): sleep 10: timed out") || time.Since(start) > 5*time.Second {
		t.Fatalf("err = %v after %v", err, time.Since(start))
	}
}
