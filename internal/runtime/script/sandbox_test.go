package script_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/runtimetest"
	"github.com/fullsend-ai/fullsend/internal/runtime/script"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// localSession provisions a real namespaces sandbox (no network), skipping
// when the machine cannot create one.
func localSession(t *testing.T) sandbox.Session {
	t.Helper()
	return runtimetest.LocalSession(t, sandbox.Spec{WorkDir: runtime.WorkspaceDir})
}

// TestRealSandbox runs bootstrap and a script through the local backend:
// the script runtime's sandbox access (cat, sh, rm, test, Upload) works in
// a real sandbox, not only in runtimetest.
func TestRealSandbox(t *testing.T) {
	s := localSession(t)
	ctx := context.Background()
	host := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	repo := filepath.Join(host, "repo")
	must(os.MkdirAll(repo, 0o755))
	must(os.WriteFile(filepath.Join(repo, "README.md"), []byte("# Demo\nHello\n"), 0o644))
	must(s.Upload(ctx, repo, "/sandbox/workspace/demo"))
	agent := filepath.Join(host, "agent.md")
	must(os.WriteFile(agent, []byte("---\nname: demo\n---\nBe brief.\n"), 0o644))
	skill := filepath.Join(host, "skill")
	must(os.MkdirAll(skill, 0o755))
	must(os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: hello\n---\nSay hello.\n"), 0o644))

	rt := script.New()
	must(rt.Bootstrap(ctx, s, runtime.BootstrapInput{AgentName: "demo", AgentFile: agent,
		Skills: []runtime.Skill{{Name: "hello", HostDir: skill}}, RepoDir: "/sandbox/workspace/demo"}))
	sc := filepath.Join(host, "script.yaml")
	must(os.WriteFile(sc, []byte(`steps:
  - read: {path: /sandbox/claude-config/skills/hello/SKILL.md, expect_contains: Say hello}
  - read: {path: "${WORKDIR}/README.md", expect_contains: Hello}
  - exec: {cmd: "id -un; pwd", expect_stdout_contains: /sandbox/workspace/demo, save: WHO}
  - write: {path: "${WORKDIR}/out/n.txt", content: "it ${ITERATION}"}
  - expect: {path: "${WORKDIR}/out/n.txt", contains: "it 1"}
  - write_result: {value: {status: ok, who: "${WHO}"}}
`), 0o644))
	in := runtime.RunInput{AgentName: "demo", Iteration: 1, ResultPath: "/sandbox/workspace/result.json",
		WorkDir: "/sandbox/workspace/demo", Options: map[string]string{script.OptionScript: sc}}
	out, err := rt.Run(ctx, s, in)
	if err != nil || out.StopReason != runtime.StopCompleted || out.ToolCalls != 6 {
		t.Fatalf("Run: %+v %v", out, err)
	}
	dst := filepath.Join(host, "result.json")
	must(s.Download(ctx, "/sandbox/workspace/result.json", dst))
	b, err := os.ReadFile(dst)
	must(err)
	var res map[string]string
	must(json.Unmarshal(b, &res))
	if res["status"] != "ok" || !strings.Contains(res["who"], "/sandbox/workspace/demo") {
		t.Fatalf("result %s", b)
	}
	must(rt.CleanupIteration(ctx, s))
	if err := s.Download(ctx, "/sandbox/workspace/result.json", filepath.Join(host, "again.json")); err == nil {
		t.Fatal("result still present after CleanupIteration")
	}
	// a failing expectation in the real sandbox names the step
	must(os.WriteFile(sc, []byte("steps:\n  - exec: {args: [ls, /nonexistent]}\n"), 0o644))
	_, err = rt.Run(ctx, s, in)
	if err == nil || !strings.Contains(err.Error(), "step 1 (exec, line 2): expectation failed: ls /nonexistent exited 2") {
		t.Fatalf("err = %v", err)
	}
}
