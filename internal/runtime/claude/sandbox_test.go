package claude_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/claude"
	"github.com/fullsend-ai/fullsend/internal/runtime/runtimetest"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// TestRealSandbox runs the fake CLI inside the local namespaces backend:
// bootstrap, hook wiring, .env sourcing, environment, working directory,
// stream parsing and transcript download all go through a real session.
func TestRealSandbox(t *testing.T) {
	s := runtimetest.LocalSession(t, sandbox.Spec{WorkDir: runtime.WorkspaceDir})
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	host := t.TempDir()
	for p, data := range map[string]string{
		"repo/README.md": "# Demo\n", "agent.md": "---\nname: code\n---\nImplement.\n",
		"env": "FROM_DOTENV=yes\n",
	} {
		must(os.MkdirAll(filepath.Dir(filepath.Join(host, p)), 0o755))
		must(os.WriteFile(filepath.Join(host, p), []byte(data), 0o644))
	}
	must(s.Upload(ctx, filepath.Join(host, "repo"), "/sandbox/workspace/demo"))
	must(s.Upload(ctx, filepath.Join(host, "env"), "/sandbox/workspace/.env"))
	must(s.Upload(ctx, "testdata/fake-claude.sh", "/sandbox/bin/claude"))
	must(s.Upload(ctx, "testdata/real-2.1.330/tool_use.jsonl", "/sandbox/rec/tool_use.jsonl"))

	rt := claude.New()
	boot := runtime.BootstrapInput{AgentName: "code", AgentFile: filepath.Join(host, "agent.md"), RepoDir: "/sandbox/workspace/demo"}
	must(rt.Bootstrap(ctx, s, boot))
	must(rt.BootstrapHooks(ctx, s, boot))
	var events []runtime.Event
	out, err := rt.Run(ctx, s, runtime.RunInput{
		AgentName: "code", Prompt: "Implement issue 42.", Iteration: 1, ResultPath: "/sandbox/workspace/result.json",
		WorkDir: "/sandbox/workspace/demo", Events: func(e runtime.Event) { events = append(events, e) },
		Env: map[string]string{"FAKE_CLAUDE_DIR": "/sandbox/fake", "FAKE_CLAUDE_RECORDING": "/sandbox/rec/tool_use.jsonl",
			"FAKE_CLAUDE_RESULT": `{"status":"ok"}`, "FAKE_CLAUDE_RESULT_PATH": "/sandbox/workspace/result.json"},
		Options: map[string]string{claude.OptBinary: "/sandbox/bin/claude"},
	})
	if err != nil || out.StopReason != runtime.StopCompleted || out.ToolCalls != 3 || len(events) == 0 {
		t.Fatalf("Run: %+v %v", out, err)
	}
	runDir := filepath.Join(host, "run")
	must(rt.SaveTranscript(ctx, s, runDir))
	must(s.Download(ctx, "/sandbox/fake", filepath.Join(host, "fake")))
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(host, p))
		must(err)
		return string(b)
	}
	if env := read("fake/env"); !strings.Contains(env, "FROM_DOTENV=yes\n") || !strings.Contains(env, "CLAUDE_CONFIG_DIR=/sandbox/claude-config\n") {
		t.Errorf("env in the sandbox:\n%s", env)
	}
	if cwd := strings.TrimSpace(read("fake/cwd")); cwd != "/sandbox/workspace/demo" {
		t.Errorf("cwd %q", cwd)
	}
	if args := read("fake/args"); !strings.Contains(args, "--settings\n/sandbox/workspace/.claude/settings.json\n") {
		t.Errorf("args %q", args)
	}
	if tr := read("run/transcript.jsonl"); !strings.Contains(tr, `"subtype":"success"`) {
		t.Errorf("transcript %q", tr)
	}
	if dbg := read("run/claude-debug-1.log"); !strings.Contains(dbg, "fake claude started") {
		t.Errorf("debug log %q", dbg)
	}
}
