package native

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/runtimetest"
)

// rebootAgent bootstraps h's runtime again with an agent definition whose
// frontmatter is front (and the harness's disabled hooks).
func rebootAgent(t *testing.T, h *harnessEnv, front string, disabled ...string) {
	t.Helper()
	agent := filepath.Join(t.TempDir(), "coder.md")
	writeHostFile(t, agent, "---\nname: coder\n"+front+"---\nYou are the coder agent.\n")
	if err := h.rt.Bootstrap(context.Background(), h.sess, runtime.BootstrapInput{
		AgentName: "coder", AgentFile: agent, RepoDir: repoDir, RunDir: h.runDir,
		Skills: []runtime.Skill{{Name: "demo", HostDir: h.skill}}, DisabledHooks: disabled,
	}); err != nil {
		t.Fatal(err)
	}
}

// ranInSandbox reports whether a command containing s reached the sandbox.
func ranInSandbox(h *harnessEnv, s string) bool {
	for _, e := range h.sess.Execs() {
		if strings.Contains(strings.Join(e.Args, " "), s) {
			return true
		}
	}
	return false
}

// Issue 12 item 7: the native runtime applies the agent's tools: as the
// claude runtime's hook does. Under Bash(gh,curl,jq), Skill the model's
// `ls /` is refused with a tool error it sees (and never runs), gh passes,
// a tool the agent does not list is refused, a listed one works.
func TestToolAllowlistFromAgent(t *testing.T) {
	for _, api := range dialects {
		t.Run(string(api), func(t *testing.T) {
			h := newHarnessEnv(t, api,
				modeltest.Call("c1", "bash", map[string]any{"command": "ls /"}),
				modeltest.Call("c2", "bash", map[string]any{"command": "gh issue list --limit 3 | jq -r ."}),
				modeltest.Call("c3", "write_file", map[string]any{"path": "notes.txt", "content": "x"}),
				modeltest.Call("c4", "read_skill_resource", map[string]any{"skill": "demo", "path": "SKILL.md"}),
				modeltest.Call("c5", "list_dir", map[string]any{}),
				modeltest.Say("done"),
			)
			rebootAgent(t, h, "tools: Bash(gh,curl,jq), Skill\n")
			h.sess.AddBinary(t, "gh", runtimetest.WriteScript(t, "gh", "echo \"gh ran: $*\"\n"))
			h.sess.AddBinary(t, "jq", runtimetest.WriteScript(t, "jq", "cat\n"))
			out, err := h.run(context.Background(), h.input(nil))
			if err != nil {
				t.Fatal(err)
			}
			if out.ToolCalls != 5 || out.StopReason != runtime.StopCompleted {
				t.Fatalf("outcome %+v", out)
			}
			txt, isErr := toolResultOf(t, h.srv, 1, "c1")
			if !strings.Contains(txt, "blocked by fullsend security check (allowlist.bash)") || !strings.Contains(txt, `Bash command "ls" is not allowed: this agent may run only gh, curl, jq`) {
				t.Errorf("ls / result %q", txt)
			}
			if api == model.APIAnthropic && !isErr {
				t.Error("refusal not flagged is_error")
			}
			if ranInSandbox(h, "ls /") {
				t.Error("the refused command reached the sandbox")
			}
			if txt, _ := toolResultOf(t, h.srv, 2, "c2"); txt != "gh ran: issue list --limit 3\n" {
				t.Errorf("gh result %q, want it to pass the allowlist and run", txt)
			}
			if txt, _ := toolResultOf(t, h.srv, 3, "c3"); !strings.Contains(txt, `(allowlist.tool): tool "Write" is not in this agent's tool allowlist (Bash(gh,curl,jq),Skill)`) {
				t.Errorf("write_file result %q", txt)
			}
			if ranInSandbox(h, "notes.txt") {
				t.Error("the refused write reached the sandbox")
			}
			if txt, _ := toolResultOf(t, h.srv, 4, "c4"); !strings.Contains(txt, "Run scripts/hello.sh.") {
				t.Errorf("read_skill_resource result %q (Skill is listed)", txt)
			}
			if txt, _ := toolResultOf(t, h.srv, 5, "c5"); !strings.Contains(txt, `tool "LS" is not in this agent's tool allowlist`) {
				t.Errorf("list_dir result %q", txt)
			}
			var blocked []string
			for _, r := range readRecords(t, h.runDir) {
				if r.Tool != nil && r.Tool.Blocked != "" {
					blocked = append(blocked, r.Tool.Name+":"+r.Tool.Blocked)
				}
			}
			if strings.Join(blocked, " ") != "bash:allowlist.bash write_file:allowlist.tool list_dir:allowlist.tool" {
				t.Errorf("transcript blocked records %v", blocked)
			}
		})
	}
}

// Aliases from the one name table: Glob permits list_dir; the harness key
// tool_allowlist: false lifts the restriction; an agent without tools: is
// unrestricted.
func TestToolAllowlistAliasesAndSwitches(t *testing.T) {
	steps := []modeltest.Step{
		modeltest.Call("d1", "list_dir", map[string]any{}),
		modeltest.Call("d2", "bash", map[string]any{"command": "echo hi"}),
		modeltest.Say("done"),
	}
	for _, c := range []struct {
		name, front string
		disabled    []string
		listOK      bool
		bashOK      bool
	}{
		{"glob permits list_dir", "tools: [Glob, Read]\n", nil, true, false},
		{"disabled by the harness", "tools: Read\n", []string{"tool_allowlist"}, true, true},
		{"no tools key", "", nil, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarnessEnv(t, model.APIOpenAI, steps...)
			rebootAgent(t, h, c.front, c.disabled...)
			if _, err := h.run(context.Background(), h.input(nil)); err != nil {
				t.Fatal(err)
			}
			if txt, _ := toolResultOf(t, h.srv, 1, "d1"); strings.Contains(txt, "allowlist") != !c.listOK {
				t.Errorf("list_dir %q, allowed want %v", txt, c.listOK)
			}
			if txt, _ := toolResultOf(t, h.srv, 2, "d2"); strings.Contains(txt, "allowlist") != !c.bashOK {
				t.Errorf("bash %q, allowed want %v", txt, c.bashOK)
			}
		})
	}
}

// A broken tools: fails Bootstrap; it never means "every tool".
func TestToolAllowlistBrokenFailsBootstrap(t *testing.T) {
	h := newHarnessEnv(t, model.APIOpenAI, modeltest.Say("unused"))
	agent := filepath.Join(t.TempDir(), "coder.md")
	writeHostFile(t, agent, "---\nname: coder\ntools: Bash(gh\n---\nbody\n")
	err := h.rt.Bootstrap(context.Background(), h.sess, runtime.BootstrapInput{AgentName: "coder", AgentFile: agent, RepoDir: repoDir})
	if err == nil || !strings.Contains(err.Error(), "coder.md:3: tools:") || !strings.Contains(err.Error(), "unbalanced") {
		t.Fatalf("Bootstrap = %v", err)
	}
}

// Every native tool is in the one Claude name table, so every tool call
// reaches the hook rules under a name they know.
func TestClaudeNamesCoverEveryTool(t *testing.T) {
	var missing []string
	for name := range toolTable() {
		if len(claudeNames[name]) == 0 {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("tools without a Claude Code name: %v", missing)
	}
	if len(claudeNames) != len(toolTable()) {
		t.Fatalf("claudeNames has %d entries, the tool table %d", len(claudeNames), len(toolTable()))
	}
}
