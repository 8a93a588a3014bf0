package native

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/runtimetest"
)

var dialects = []model.API{model.APIOpenAI, model.APIAnthropic}

const repoDir = "/sandbox/workspace/repo"

// harnessEnv is one test's world: a fake sandbox, a scripted model server,
// a bootstrapped native runtime and a run directory.
type harnessEnv struct {
	t      testing.TB
	api    model.API
	sess   *runtimetest.Session
	srv    *modeltest.Server
	rt     *Runtime
	runDir string
	env    map[string]string // host environment seen by the runtime
	sleeps []time.Duration
	events []runtime.Event
	skill  string // host dir of the "demo" skill
}

func newHarnessEnv(t testing.TB, api model.API, steps ...modeltest.Step) *harnessEnv {
	t.Helper()
	h := &harnessEnv{t: t, api: api, sess: runtimetest.NewSession(t), runDir: filepath.Join(t.TempDir(), "run")}
	h.srv = modeltest.New(t, api, steps...)
	h.setServer(h.srv)
	h.sess.WriteFile(t, repoDir+"/README.md", []byte("hello\n"))
	h.rt = New(Options{Getenv: func(k string) string { return h.env[k] }, Sleep: h.sleep})
	// A skill with a script.
	h.skill = filepath.Join(t.TempDir(), "demo")
	writeHostFile(t, filepath.Join(h.skill, "SKILL.md"), "---\nname: demo\ndescription: Demo skill: shows how skills work\n---\n# Demo\nRun scripts/hello.sh.\n")
	writeHostFile(t, filepath.Join(h.skill, "scripts/hello.sh"), "#!/bin/sh\necho \"hello from $SKILL_NAME $1\"\n")
	writeHostFile(t, filepath.Join(h.skill, "reference.md"), "reference text\n")
	agent := filepath.Join(t.TempDir(), "coder.md")
	writeHostFile(t, agent, "---\nname: coder\nmodel: opus\n---\nYou are the coder agent.\n")
	err := h.rt.Bootstrap(context.Background(), h.sess, runtime.BootstrapInput{
		AgentName: "coder", AgentFile: agent, RepoDir: repoDir, RunDir: h.runDir,
		Skills: []runtime.Skill{{Name: "demo", HostDir: h.skill}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harnessEnv) setServer(s *modeltest.Server) {
	h.srv = s
	cfg := s.Config()
	h.env = map[string]string{
		model.EnvAPI: string(h.api), model.EnvBaseURL: cfg.BaseURL, model.EnvModel: "fake-model", model.EnvAuth: "none",
	}
}

func (h *harnessEnv) sleep(ctx context.Context, d time.Duration) error {
	h.sleeps = append(h.sleeps, d)
	return ctx.Err()
}

func (h *harnessEnv) input(opts map[string]string) runtime.RunInput {
	return runtime.RunInput{
		AgentName: "coder", Prompt: "do the task", Iteration: 1, WorkDir: repoDir, RunDir: h.runDir,
		Env: map[string]string{"AGENT_VAR": "1"}, Options: opts,
		Events: func(e runtime.Event) { h.events = append(h.events, e) },
	}
}

func (h *harnessEnv) run(ctx context.Context, in runtime.RunInput) (*runtime.Outcome, error) {
	return h.rt.Run(ctx, h.sess, in)
}

func writeHostFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// toolResultOf returns the tool result text the server saw in request i
// for call id, and its error flag (anthropic only carries the flag).
func toolResultOf(t testing.TB, srv *modeltest.Server, i int, id string) (string, bool) {
	t.Helper()
	reqs := srv.Requests()
	if i >= len(reqs) {
		t.Fatalf("only %d requests, want request %d", len(reqs), i+1)
	}
	for _, m := range reqs[i].Decoded.Messages {
		if m.Role == model.RoleTool && m.ToolCallID == id {
			return m.Text(), m.IsError
		}
	}
	t.Fatalf("request %d has no result for %s", i+1, id)
	return "", false
}

func readRecords(t testing.TB, dir string) []Record {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, TranscriptFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []Record
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("transcript line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
