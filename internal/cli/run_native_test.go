//go:build unix

package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	runpkg "github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
)

// These tests run `fullsend run --runtime native` on the README's hello
// example through cli.Main's code path, in the real local sandbox, against
// a scripted model server on loopback (package modeltest). The native
// runtime reads the FULLSEND_MODEL_* variables from the process
// environment, so the tests set them with t.Setenv (no t.Parallel).

const (
	helloResult  = `{"greeting": "Hello, world!", "name": "world"}`
	resultInSbox = "/sandbox/output/agent-result.json"
)

// setModelEnv points the native runtime at srv through the environment,
// clearing every other model variable of the developer's shell.
func setModelEnv(t *testing.T, api model.API, baseURL string) {
	t.Helper()
	for _, k := range []string{model.EnvAPI, model.EnvBaseURL, model.EnvModel, model.EnvAuth, model.EnvKeyEnv, model.EnvAPIKey} {
		t.Setenv(k, "")
	}
	t.Setenv(model.EnvAPI, string(api))
	t.Setenv(model.EnvBaseURL, baseURL)
	t.Setenv(model.EnvAuth, "none")
	t.Setenv(model.EnvModel, "test-model")
}

func onlyRun(t *testing.T, ws string) *runpkg.Report {
	t.Helper()
	reps, err := runpkg.List(runpkg.RunsDir(ws))
	if err != nil || len(reps) != 1 {
		t.Fatalf("runs in %s: %v, %d (want 1)", ws, err, len(reps))
	}
	return reps[0]
}

// jsonLines decodes a JSONL file of the run directory.
func jsonLines(t *testing.T, file string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("run dir: %v", err)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: bad line %q: %v", file, sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func countType(recs []map[string]any, typ string) int {
	n := 0
	for _, r := range recs {
		if r["type"] == typ {
			n++
		}
	}
	return n
}

// TestRunNativeOpenAI is the README's native command: `fullsend run
// --runtime native examples/hello/harness.yaml` from the clone, with the
// model server given by the environment. The scripted model reads the
// greeting skill and GREETING_NAME with bash in the sandbox, writes the
// result with write_file and finishes.
func TestRunNativeOpenAI(t *testing.T) {
	needLocalSandbox(t)
	srv := modeltest.New(t, model.APIOpenAI,
		modeltest.Call("c1", native.ToolBash, map[string]string{"command": "cat /sandbox/claude-config/skills/greeting/SKILL.md; echo \"name=$GREETING_NAME\""}),
		modeltest.Call("c2", native.ToolWriteFile, map[string]string{"path": resultInSbox, "content": helloResult}),
		modeltest.Say("Wrote the greeting."),
	)
	setModelEnv(t, model.APIOpenAI, srv.URL+"/v1")
	hello := helloAbs(t)
	repo := inGitRepo(t)
	ws := t.TempDir()
	code, out, errs := runCLI(t, "--workspace", ws, "run", "--runtime", "native", hello)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	for _, want := range []string{"  succeeded\n", "agent     hello\n", "runtime   native\n", "sandbox   local\n", "result    valid (iteration 1 of 2)\n", "usage     3 turn(s), 2 tool call(s), 0 input / 25 output tokens, stop completed\n", "run dir   "} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	rep := onlyRun(t, ws)
	dir := rep.Dir()
	if rep.Runtime != "native" || rep.Events.Turns != 3 || rep.Events.ToolCalls != 2 || rep.Events.StopReason != "completed" || rep.Events.Iterations != 1 {
		t.Errorf("report: runtime %q events %+v", rep.Runtime, rep.Events)
	}
	if rep.Target.Repo != repo {
		t.Errorf("target repository %q, want %s detected from the current directory", rep.Target.Repo, repo)
	}
	if res, err := os.ReadFile(filepath.Join(dir, "output", "agent-result.json")); err != nil || string(res) != helloResult {
		t.Errorf("result = %s (%v)", res, err)
	}
	calls := jsonLines(t, filepath.Join(dir, native.CallsFile))
	if len(calls) != 3 {
		t.Errorf("calls.jsonl: %d lines, want 3", len(calls))
	}
	tr := jsonLines(t, filepath.Join(dir, native.TranscriptFile))
	if countType(tr, native.RecStart) != 1 || countType(tr, native.RecStop) != 1 || countType(tr, native.RecMessage) != 6 {
		t.Errorf("transcript.jsonl: %d records: start %d, message %d, stop %d", len(tr), countType(tr, native.RecStart), countType(tr, native.RecMessage), countType(tr, native.RecStop))
	}
	// The bash call ran in the sandbox, with the skill uploaded and env.sandbox exported.
	if bash, err := os.ReadFile(filepath.Join(dir, "tool-outputs", "1.txt")); err != nil || !strings.Contains(string(bash), "Hello, <name>!") || !strings.Contains(string(bash), "name=world") {
		t.Errorf("tool-outputs/1.txt = %q (%v)", bash, err)
	}
	if _, err := os.Stat(filepath.Join(dir, native.SkillRegistryFile)); err != nil {
		t.Errorf("skill registry: %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("model saw %d requests, want 3", len(reqs))
	}
	first := reqs[0]
	if first.Decoded.Model != "test-model" || first.Header.Get("Authorization") != "" {
		t.Errorf("request: model %q, Authorization %q", first.Decoded.Model, first.Header.Get("Authorization"))
	}
	// The result schema (validation_loop.schema) reached the system prompt.
	if !strings.Contains(first.Decoded.System, `"title":"hello agent result"`) || !strings.Contains(first.Decoded.System, resultInSbox) {
		t.Errorf("system prompt lacks the result schema:\n%s", first.Decoded.System)
	}
}

// TestRunNativeAnthropicFlags: the Anthropic dialect chosen by flags, which
// win over the environment (set to an openai server that must never be
// called); bearer auth from --model-key-env whose key never reaches the
// sandbox; a first result that fails the schema is not fatal: the
// validation errors are fed back in the same conversation and the second
// iteration succeeds.
func TestRunNativeAnthropicFlags(t *testing.T) {
	needLocalSandbox(t)
	const key = "sk-ant-test-9f8e7d6c5b4a"
	srv := modeltest.New(t, model.APIAnthropic,
		modeltest.Call("t1", native.ToolBash, map[string]string{"command": "printenv; cat /sandbox/workspace/.env"}),
		modeltest.Call("t2", native.ToolWriteFile, map[string]string{"path": resultInSbox, "content": `{"greeting": "hi", "name": "world"}`}),
		modeltest.Say("Done."),
		modeltest.Call("t3", native.ToolWriteFile, map[string]string{"path": resultInSbox, "content": helloResult}),
		modeltest.Say("Fixed."),
	)
	unused := modeltest.New(t, model.APIOpenAI)
	setModelEnv(t, model.APIOpenAI, unused.URL+"/v1")
	t.Setenv("FS_TEST_MODEL_KEY", key)
	ws := t.TempDir()
	code, out, errs := runCLI(t, "--workspace", ws, "run", "--runtime", "native", "--target-repo", "none",
		"--model-api", "anthropic", "--model-base-url", srv.URL, "--model", "claude-test", "--model-auth", "bearer", "--model-key-env", "FS_TEST_MODEL_KEY",
		"--max-turns", "9", "--max-output-tokens", "5000", helloHarness)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if !strings.Contains(out, "result    valid (iteration 2 of 2)\n") || !strings.Contains(out, "runtime   native\n") {
		t.Errorf("summary:\n%s", out)
	}
	rep := onlyRun(t, ws)
	dir := rep.Dir()
	it := rep.Validation.Iterations
	if len(it) != 2 || it[0].Valid || it[0].ExitCode != 1 || len(it[0].Errors) == 0 || !it[1].Valid {
		t.Errorf("iterations: %+v", it)
	}
	if rep.Events.Turns != 5 || rep.Events.ToolCalls != 3 {
		t.Errorf("events: %+v", rep.Events)
	}
	reqs := srv.Requests()
	if len(reqs) != 5 || len(unused.Requests()) != 0 {
		t.Fatalf("anthropic server saw %d requests, openai server %d", len(reqs), len(unused.Requests()))
	}
	for i, r := range reqs {
		if r.Header.Get("x-api-key") != key || r.Decoded.Model != "claude-test" {
			t.Errorf("request %d: x-api-key %q, model %q", i+1, r.Header.Get("x-api-key"), r.Decoded.Model)
		}
	}
	// --max-turns and --max-output-tokens reached the loop.
	tr := jsonLines(t, filepath.Join(dir, native.TranscriptFile))
	if lim, _ := tr[0]["limits"].(map[string]any); lim["max_turns"] != 9.0 || lim["max_output_tokens"] != 5000.0 {
		t.Errorf("start record limits = %v", tr[0]["limits"])
	}
	// Iteration 2 continued the conversation with the validation errors.
	last := reqs[3].Decoded.Messages
	fb := last[len(last)-1]
	if fb.Role != model.RoleUser || !strings.Contains(fb.Text(), "failed validation") || !strings.Contains(fb.Text(), "greeting") || len(last) < 6 {
		t.Errorf("feedback message = %q (of %d messages)", fb.Text(), len(last))
	}
	// The key never entered the sandbox nor any artifact of the run.
	env, _ := os.ReadFile(filepath.Join(dir, "tool-outputs", "1.txt"))
	if !strings.Contains(string(env), "GREETING_NAME") {
		t.Errorf("bash env output = %q", env)
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(key)) {
				t.Errorf("%s contains the API key", p)
			}
		}
		return nil
	})
}

// TestRunNativeResume: a run whose model call fails is continued with
// --resume RUN_ID in the same run directory; the runtime is taken from
// the recorded report, the next request carries the whole earlier
// conversation, and the earlier attempt's report is kept.
func TestRunNativeResume(t *testing.T) {
	needLocalSandbox(t)
	srv := modeltest.New(t, model.APIOpenAI,
		modeltest.Call("c1", native.ToolBash, map[string]string{"command": "echo first-attempt"}),
		modeltest.Step{Status: 400, Body: `{"error":{"message":"bad request"}}`},
	)
	setModelEnv(t, model.APIOpenAI, srv.URL+"/v1")
	ws := t.TempDir()
	code, out, errs := runCLI(t, "--workspace", ws, "run", "--runtime", "native", "--target-repo", "none", helloHarness)
	if code != 1 || !strings.Contains(out, "  failed\n") {
		t.Fatalf("first attempt: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	id := onlyRun(t, ws).RunID

	// Only native runs resume; the runtime check names the rule.
	code, _, errs = runCLI(t, "--workspace", ws, "run", "--runtime", "script", "--resume", id, helloHarness)
	if code != 1 || !strings.Contains(errs, "--resume is only supported by the native runtime") {
		t.Errorf("--resume with script: exit %d %q", code, errs)
	}

	// The resumed loop first writes an invalid result: the second
	// validation iteration must continue with the feedback, not resume again.
	srv.Push(
		modeltest.Call("c2", native.ToolWriteFile, map[string]string{"path": resultInSbox, "content": `{"greeting": "Hello, world!"}`}),
		modeltest.Say("Resumed and done."),
		modeltest.Call("c3", native.ToolWriteFile, map[string]string{"path": resultInSbox, "content": helloResult}),
		modeltest.Say("Added the name."),
	)
	code, out, errs = runCLI(t, "--workspace", ws, "run", "--resume", id, "--target-repo", "none", helloHarness)
	if code != 0 {
		t.Fatalf("resume: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if !strings.Contains(out, "run       "+id+"  succeeded\n") || !strings.Contains(out, "result    valid (iteration 2 of 2)\n") || !strings.Contains(errs, "resumed run "+id) {
		t.Errorf("resume summary:\nstdout:\n%s\nstderr:\n%s", out, errs)
	}
	rep := onlyRun(t, ws)
	// Counts: the resumed conversation (bash, write, say) plus iteration 2 (write, say).
	if rep.RunID != id || rep.Resumes != 1 || rep.Runtime != "native" || rep.Events.Turns != 5 || rep.Events.ToolCalls != 3 {
		t.Errorf("report: id %s resumes %d runtime %s events %+v", rep.RunID, rep.Resumes, rep.Runtime, rep.Events)
	}
	prev, err := os.ReadFile(filepath.Join(rep.Dir(), "report.attempt-1.json"))
	if err != nil || !strings.Contains(string(prev), `"status": "failed"`) {
		t.Errorf("previous report: %v\n%s", err, prev)
	}
	reqs := srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("model saw %d requests, want 6", len(reqs))
	}
	if fb := reqs[4].Decoded.Messages; !strings.Contains(fb[len(fb)-1].Text(), "failed validation") {
		t.Errorf("iteration 2 after resume got no feedback: %q", fb[len(fb)-1].Text())
	}
	// The resumed request replays the conversation: prompt, bash call, its result.
	if got, want := len(reqs[2].Decoded.Messages), len(reqs[1].Decoded.Messages); got != want || reqs[2].Decoded.System != reqs[0].Decoded.System {
		t.Errorf("resumed request has %d messages (want %d) or another system prompt", got, want)
	}
	if res, _ := reqs[2].LastToolResult(); !strings.Contains(res, "first-attempt") {
		t.Errorf("resumed request's last tool result = %q", res)
	}
	tr := jsonLines(t, filepath.Join(rep.Dir(), native.TranscriptFile))
	// One resume record for --resume, one for validation iteration 2.
	if countType(tr, native.RecResume) != 2 || countType(tr, native.RecStart) != 1 {
		t.Errorf("transcript: %d resume, %d start records", countType(tr, native.RecResume), countType(tr, native.RecStart))
	}

	// A succeeded run has nothing to resume.
	code, _, errs = runCLI(t, "--workspace", ws, "run", "--resume", id, "--target-repo", "none", helloHarness)
	if code != 1 || !strings.Contains(errs, "already succeeded") {
		t.Errorf("resume of a succeeded run: exit %d %q", code, errs)
	}
}

// TestRunNativeFlagErrors: bad values are usage errors (exit 2) before
// anything runs; native flags with another runtime are refused.
func TestRunNativeFlagErrors(t *testing.T) {
	ws := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--runtime", "native", "--model-api", "gemini"}, 2, `--model-api "gemini": want openai or anthropic`},
		{[]string{"--runtime", "native", "--model-auth", "basic"}, 2, `--model-auth "basic": want bearer or none`},
		{[]string{"--runtime", "native", "--max-turns", "0"}, 2, "--max-turns 0: want a positive number"},
		{[]string{"--runtime", "native", "--max-output-tokens", "-5"}, 2, "--max-output-tokens -5: want a positive number"},
		{[]string{"--runtime", "native", "--model", " "}, 2, "--model: empty value"},
		{[]string{"--runtime", "native", "--compact-tokens", "0"}, 2, "--compact-tokens 0: want a positive number"},
		{[]string{"--runtime", "claude", "--compact-tokens", "9000"}, 2, `--compact-tokens: only for the native runtime (runtime is "claude")`},
		{[]string{"--model", "x", "--max-turns", "3"}, 2, `--model, --max-turns: only for the native runtime (runtime is "script")`},
		{[]string{"--runtime", "native", "--resume", "../x"}, 2, "--resume: run id"},
		{[]string{"--image", "shot.png"}, 2, `--image: only for the native runtime (runtime is "script")`},
		{[]string{"--runtime", "claude", "--image", "shot.png"}, 2, `--image: only for the native runtime (runtime is "claude")`},
		{[]string{"--runtime", "native", "--image", " "}, 2, "--image: empty value"},
		{[]string{"--runtime", "native", "--model", "m", "--model-auth", "none", "--image", helloHarness}, 2, "inside the target repository, and there is none"},
		{[]string{"--runtime", "native", "--resume", "20000101T000000.000Z-000000"}, 1, "no such run"},
	} {
		code, _, errs := runCLI(t, append(append([]string{"--workspace", ws, "run", "--target-repo", "none"}, tc.args...), helloHarness)...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d %q, want %d %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
}

// TestRunNativeResumeAfterKill: a `fullsend run` process killed (SIGKILL)
// while waiting for the model leaves a transcript and no report; --resume
// continues it in the same run directory, sending the model exactly the
// request the killed process had sent.
func TestRunNativeResumeAfterKill(t *testing.T) {
	needLocalSandbox(t)
	bin := cliBinary(t)
	var pid atomic.Int64
	srv := modeltest.NewFunc(t, model.APIOpenAI, func(i int, r modeltest.Received) modeltest.Step {
		switch i {
		case 0:
			return modeltest.Call("c1", native.ToolBash, map[string]string{"command": "echo before-kill"})
		case 1:
			return modeltest.Step{Handler: func(w http.ResponseWriter, r *http.Request) {
				if p := pid.Load(); p > 0 {
					_ = syscall.Kill(int(p), syscall.SIGKILL)
				}
				select {
				case <-r.Context().Done():
				case <-time.After(30 * time.Second):
				}
			}}
		case 2:
			return modeltest.Call("c2", native.ToolWriteFile, map[string]string{"path": resultInSbox, "content": helloResult})
		default:
			return modeltest.Say("Resumed after the kill.")
		}
	})
	setModelEnv(t, model.APIOpenAI, srv.URL+"/v1")
	ws := t.TempDir()
	cmd := exec.Command(bin, "--workspace", ws, "run", "--runtime", "native", "--target-repo", "none", helloHarness)
	// The killed process cannot tear its sandbox down: keep its directory
	// in the test's temp dir.
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid.Store(int64(cmd.Process.Pid))
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("first attempt was not killed: %v\n%s", err, stderr.String())
	}
	all, err := os.ReadDir(runpkg.RunsDir(ws))
	var ents []os.DirEntry // run directories (the runs dir also holds its .gitignore)
	for _, e := range all {
		if e.IsDir() {
			ents = append(ents, e)
		}
	}
	if err != nil || len(ents) != 1 {
		t.Fatalf("run dirs: %v %d", err, len(ents))
	}
	id := ents[0].Name()
	if _, err := os.Stat(filepath.Join(runpkg.RunsDir(ws), id, runpkg.ReportFile)); err == nil {
		t.Fatalf("the killed run wrote a report")
	}

	// No report: the runtime defaults to native.
	code, out, errs := runCLI(t, "--workspace", ws, "run", "--resume", id, "--target-repo", "none", helloHarness)
	if code != 0 {
		t.Fatalf("resume: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	rep := onlyRun(t, ws)
	if rep.RunID != id || rep.Runtime != "native" || rep.Resumes != 1 || !strings.Contains(strings.Join(rep.Notes, "\n"), "left no report") {
		t.Errorf("report: id %s runtime %s resumes %d notes %q", rep.RunID, rep.Runtime, rep.Resumes, rep.Notes)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("model saw %d requests, want 4", len(reqs))
	}
	killed, resumed := reqs[1].Decoded, reqs[2].Decoded
	kb, _ := json.Marshal(killed.Messages)
	rb, _ := json.Marshal(resumed.Messages)
	if resumed.System != killed.System || !bytes.Equal(kb, rb) || resumed.MaxTokens != killed.MaxTokens {
		t.Errorf("resumed request differs from the killed one:\n got %s\nwant %s", rb, kb)
	}
}

// TestRunNativeImage: `fullsend run --runtime native --image FILE` attaches
// the image to the first user message; the transcript keeps its metadata
// and never its pixels; report.json carries the capability snapshot.
func TestRunNativeImage(t *testing.T) {
	needLocalSandbox(t)
	srv := modeltest.New(t, model.APIOpenAI,
		modeltest.Call("c1", native.ToolWriteFile, map[string]string{"path": resultInSbox, "content": helloResult}),
		modeltest.Say("done"),
	)
	setModelEnv(t, model.APIOpenAI, srv.URL+"/v1")
	hello := helloAbs(t)
	repo := inGitRepo(t)
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
	if err := os.WriteFile(filepath.Join(repo, "shot.png"), []byte(png), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	code, out, errs := runCLI(t, "--workspace", ws, "run", "--runtime", "native", "--image", "shot.png", hello)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	first := srv.Requests()[0].Decoded.Messages[0]
	n := 0
	for _, b := range first.Content {
		if b.Type == model.BlockImage && b.MediaType == "image/png" && b.Data != "" {
			n++
		}
	}
	if n != 1 || !strings.Contains(first.Text(), filepath.Join(repo, "shot.png")) {
		t.Fatalf("first message: %d images, text %q", n, first.Text())
	}
	rep := onlyRun(t, ws)
	tr, err := os.ReadFile(filepath.Join(rep.Dir(), native.TranscriptFile))
	if err != nil || !strings.Contains(string(tr), `"file":"images/prompt-1.png"`) || strings.Contains(string(tr), `"data":"iVBOR`) {
		t.Errorf("transcript (%v):\n%s", err, tr)
	}
	if c := rep.Capabilities; c == nil || c.Model == nil || c.Model.(map[string]any)["model"] != "test-model" || len(c.Tools) == 0 || slices.Contains(c.Tools, native.ToolWebFetch) {
		t.Errorf("capabilities %+v", c)
	}
}
