package native

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/runtimetest"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// TestLocalSandbox drives the tools against the real local backend (skipped
// where it cannot run): the commands the tools use must exist there.
func TestLocalSandbox(t *testing.T) {
	s := runtimetest.LocalSession(t, sandbox.Spec{})
	ctx := context.Background()
	if res, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"mkdir", "-p", repoDir}}); err != nil || res.ExitCode != 0 {
		t.Fatalf("mkdir: %v %s", err, res.Stderr)
	}
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	srv := modeltest.New(t, model.APIOpenAI,
		modeltest.Call("a", "write_file", map[string]any{"path": "dir/f.txt", "content": "alpha beta\n"}),
		modeltest.Call("b", "edit_file", map[string]any{"path": "dir/f.txt", "old_string": "beta", "new_string": "gamma"}),
		modeltest.Call("c", "read_file", map[string]any{"path": "dir/f.txt"}),
		modeltest.Call("d", "list_dir", map[string]any{"path": "dir"}),
		modeltest.Call("e", "bash", map[string]any{"command": "printf '%s' \"$0\" >/dev/null; cat dir/f.txt | wc -l"}),
		modeltest.Call("f", "list_dir", map[string]any{}),
		modeltest.Call("g", "view_image", map[string]any{"path": "shot.png"}),
		modeltest.Call("h", "run_skill_script", map[string]any{"script": "demo:scripts/hello.sh", "args": []string{"x"}}),
		modeltest.Say("done"),
	)
	dir := t.TempDir()
	writeHostFile(t, filepath.Join(dir, "shot.png"), string(png))
	if err := s.Upload(ctx, filepath.Join(dir, "shot.png"), repoDir+"/shot.png"); err != nil {
		t.Fatal(err)
	}
	skill := filepath.Join(dir, "demo")
	writeHostFile(t, filepath.Join(skill, "SKILL.md"), "---\nname: demo\ndescription: d\n---\n")
	writeHostFile(t, filepath.Join(skill, "scripts/hello.sh"), "#!/bin/sh\necho \"hi $SKILL_NAME $1\"\n")
	agent := filepath.Join(dir, "a.md")
	writeHostFile(t, agent, "agent\n")
	cfg := srv.Config()
	env := map[string]string{model.EnvBaseURL: cfg.BaseURL, model.EnvModel: "m", model.EnvAuth: "none"}
	rt := New(Options{Getenv: func(k string) string { return env[k] }})
	runDir := filepath.Join(dir, "run")
	if err := rt.Bootstrap(ctx, s, runtime.BootstrapInput{AgentName: "a", AgentFile: agent, RepoDir: repoDir, RunDir: runDir, Skills: []runtime.Skill{{Name: "demo", HostDir: skill}}}); err != nil {
		t.Fatal(err)
	}
	out, err := rt.Run(ctx, s, runtime.RunInput{AgentName: "a", Prompt: "p", Iteration: 1, WorkDir: repoDir, RunDir: runDir})
	if err != nil || out.StopReason != runtime.StopCompleted {
		t.Fatalf("outcome %+v err %v", out, err)
	}
	want := map[string]string{"a": "wrote 11 bytes", "b": "replaced 1 occurrence", "c": "alpha gamma", "d": "f.txt", "e": "1", "f": "shot.png", "g": "image /sandbox/workspace/repo/shot.png", "h": "hi demo x"}
	for i, id := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		txt, isErr := toolResultOf(t, srv, i+1, id)
		if isErr || !strings.Contains(txt, want[id]) {
			t.Errorf("%s: %q (want %q)", id, txt, want[id])
		}
	}
	if _, err := os.Stat(filepath.Join(runDir, ImagesDir, "7.png")); err != nil {
		t.Error(err)
	}
}

// TestLocalParallelChildren: with the real local backend, each parallel
// child gets a session of its own holding the parent's workspace.
func TestLocalParallelChildren(t *testing.T) {
	s := runtimetest.LocalSession(t, sandbox.Spec{})
	ctx := context.Background()
	if res, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"sh", "-c", "mkdir -p " + repoDir + " && echo parent-made > " + repoDir + "/note.txt"}}); err != nil || res.ExitCode != 0 {
		t.Fatalf("setup: %v %s", err, res.Stderr)
	}
	m := &scriptModel{
		parentCalls: []model.ToolCall{delegateCall("a", map[string]any{"goal": "A", "profile": "read_only"}), delegateCall("b", map[string]any{"goal": "B", "profile": "read_only"})},
		started:     map[string]time.Time{}, ended: map[string]time.Time{},
	}
	m.childTurn = func(ctx context.Context, goal string, req *model.Request) (*model.Response, error) {
		if len(req.Messages) == 1 {
			return &model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
				{ID: "r", Name: ToolReadFile, Arguments: modeltest.Args(map[string]any{"path": "note.txt"})}}}, StopReason: model.StopToolUse}, nil
		}
		return say(req.Messages[len(req.Messages)-1].Text()), nil
	}
	dir := t.TempDir()
	agent := filepath.Join(dir, "a.md")
	writeHostFile(t, agent, "agent\n")
	env := map[string]string{model.EnvBaseURL: "http://127.0.0.1:1/v1", model.EnvModel: "m", model.EnvAuth: "none"}
	rt := New(Options{Getenv: func(k string) string { return env[k] }, Client: m})
	var ids []string
	var mu sync.Mutex
	rt.SetChildSessions(func(context.Context) (sandbox.Session, error) {
		cs := runtimetest.LocalSession(t, sandbox.Spec{})
		mu.Lock()
		ids = append(ids, cs.ID())
		mu.Unlock()
		return cs, nil
	})
	runDir := filepath.Join(dir, "run")
	if err := rt.Bootstrap(ctx, s, runtime.BootstrapInput{AgentName: "a", AgentFile: agent, RepoDir: repoDir, RunDir: runDir}); err != nil {
		t.Fatal(err)
	}
	out, err := rt.Run(ctx, s, runtime.RunInput{AgentName: "a", Prompt: "p", Iteration: 1, WorkDir: repoDir, RunDir: runDir,
		Options: map[string]string{OptSubagentProfiles: "read_only", OptMaxParallel: "2"}})
	if err != nil || out.StopReason != runtime.StopCompleted {
		t.Fatalf("outcome %+v err %v", out, err)
	}
	if len(ids) != 2 || ids[0] == ids[1] || ids[0] == s.ID() {
		t.Fatalf("child sessions %v (parent %s)", ids, s.ID())
	}
	msgs := m.parent[1].Messages
	for _, r := range msgs[len(msgs)-2:] {
		if r.IsError || !strings.Contains(r.Text(), "parent-made") {
			t.Errorf("child result %s", r.Text())
		}
	}
}
