package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/hooks"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/runtimetest"
)

const repo = "/sandbox/workspace/demo"

type recorder struct {
	mu     sync.Mutex
	events []runtime.Event
}

func (r *recorder) add(e runtime.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) kinds(k runtime.EventKind) []runtime.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []runtime.Event
	for _, e := range r.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

type fixture struct {
	s        *runtimetest.Session
	rt       *Runtime
	boot     runtime.BootstrapInput
	fakeDir  string // where the fake CLI records its call
	testdata string
}

func setup(t *testing.T) *fixture {
	t.Helper()
	td, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	s := runtimetest.NewSession(t)
	s.AddBinary(t, "claude", filepath.Join(td, "fake-claude.sh"))
	s.WriteFile(t, repo+"/README.md", []byte("# Demo\nHello world\n"))
	s.WriteFile(t, "/sandbox/workspace/.env", []byte("FROM_DOTENV=dotenv-value\n"))
	s.WriteFile(t, "/sandbox/workspace/.env.d/forge.env", []byte("FORGE=github\n"))

	host := t.TempDir()
	agent := filepath.Join(host, "code.md")
	must(t, os.WriteFile(agent, []byte("---\nname: code\nmodel: opus\n---\nImplement the issue.\n"), 0o644))
	skill := filepath.Join(host, "skills", "code-implementation")
	must(t, os.MkdirAll(skill, 0o755))
	must(t, os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: code-implementation\n---\nSteps.\n"), 0o644))
	plugin := filepath.Join(host, "plugins", "gopls-lsp")
	must(t, os.MkdirAll(plugin, 0o755))
	must(t, os.WriteFile(filepath.Join(plugin, "plugin.json"), []byte(`{"name":"gopls-lsp"}`), 0o644))
	boot := runtime.BootstrapInput{
		AgentName: "code", AgentFile: agent, RepoDir: repo,
		Skills:  []runtime.Skill{{Name: "code-implementation", HostDir: skill}},
		Plugins: []runtime.Plugin{{Name: "gopls-lsp", HostDir: plugin}},
	}
	return &fixture{s: s, rt: New(), boot: boot, fakeDir: t.TempDir(), testdata: td}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) input(recording string, rec *recorder, extra map[string]string) runtime.RunInput {
	env := map[string]string{
		"FAKE_CLAUDE_DIR":         f.fakeDir,
		"FAKE_CLAUDE_RECORDING":   recordingPath(f.testdata, recording),
		"FAKE_CLAUDE_RESULT_PATH": "/sandbox/workspace/result.json",
		"GH_TOKEN":                "from-harness",
	}
	for k, v := range extra {
		env[k] = v
	}
	in := runtime.RunInput{
		AgentName: "code", Prompt: "Implement issue 42.", Model: "sonnet", Iteration: 1,
		ResultPath: "/sandbox/workspace/result.json", WorkDir: repo, Env: env,
		Options: map[string]string{OptMaxTurns: "5"},
	}
	if rec != nil {
		in.Events = rec.add
	}
	return in
}

func (f *fixture) recorded(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.fakeDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBootstrapLayoutAndHooks(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	f.boot.ToolAllowlist = []string{"Read", "Grep", "Bash(gh,jq)"}
	f.boot.DisabledHooks = []string{"unicode-posttool"}
	must(t, f.rt.Bootstrap(ctx, f.s, f.boot))
	must(t, f.rt.BootstrapHooks(ctx, f.s, f.boot))

	for p, want := range map[string]string{
		"/sandbox/claude-config/agents/code.md":                      "Implement the issue.",
		"/sandbox/claude-config/skills/code-implementation/SKILL.md": "Steps.",
		"/sandbox/claude-config/plugins/gopls-lsp/plugin.json":       "gopls-lsp",
		"/sandbox/workspace/.claude/hooks/manifest.json":             "ssrf-pretool",
		"/sandbox/claude-config/settings.json":                       "/usr/local/bin/fullsend hook each bash-risk-pretool ssrf-pretool",
	} {
		if got := string(f.s.ReadFile(t, p)); !strings.Contains(got, want) {
			t.Errorf("%s = %q, want it to contain %q", p, got, want)
		}
	}
	var settings struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type, Command string
				Timeout       int
			} `json:"hooks"`
		} `json:"hooks"`
		DisableAllHooks bool `json:"disableAllHooks"`
	}
	must(t, json.Unmarshal(f.s.ReadFile(t, SettingsPath), &settings))
	got := map[string]string{}
	for event, groups := range settings.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if h.Type != "command" || h.Timeout != hooks.HookTimeoutSeconds {
					t.Errorf("hook entry %+v", h)
				}
				// One process per event: `fullsend hook each NAME... [--allow LIST]`
				// under the matcher "*"; each hook applies its own matcher.
				if g.Matcher != "*" || len(g.Hooks) != 1 || len(groups) != 1 {
					t.Errorf("%s: %d groups, matcher %q, %d commands; want one command under \"*\"", event, len(groups), g.Matcher, len(g.Hooks))
				}
				rest, ok := strings.CutPrefix(h.Command, "/usr/local/bin/fullsend hook each ")
				if !ok {
					t.Errorf("%s command %q", event, h.Command)
				}
				names, args, _ := strings.Cut(rest, " --")
				for _, name := range strings.Fields(names) {
					hk, _ := hooks.Lookup(name)
					got[name] = event + " " + hk.Matcher
				}
				if event == hooks.PreToolUse && args != "allow 'Read,Grep,Bash(gh,jq)'" {
					t.Errorf("allowlist hook arguments %q", args)
				}
			}
		}
	}
	want := map[string]string{
		"bash-risk-pretool":         "PreToolUse Bash|Write|Edit|MultiEdit|NotebookEdit",
		"ssrf-pretool":              "PreToolUse Bash|WebFetch|mcp__.*",
		"tool-allowlist-pretool":    "PreToolUse *",
		"canary-pretool":            "PreToolUse *",
		"canary-posttool":           "PostToolUse *",
		"secret-redact-posttool":    "PostToolUse *",
		"context-suppress-posttool": "PostToolUse *",
	}
	if len(got) != len(want) {
		t.Errorf("wired hooks %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("hook %s wired as %q, want %q", k, got[k], v)
		}
	}
	if decoy := string(f.s.ReadFile(t, DecoyPath)); !strings.Contains(decoy, "aws_secret_access_key = "+f.rt.Canary()) {
		t.Errorf("decoy credentials %q", decoy)
	}
	env := f.rt.Env(f.boot)
	if _, exported := env[hooks.EnvToolAllowlist]; exported || env["CLAUDE_CONFIG_DIR"] != "/sandbox/claude-config" || len(env[hooks.EnvCanaryToken]) < hooks.MinCanaryLen {
		t.Errorf("env exports %v", env)
	}
	if New().Canary() == f.rt.Canary() {
		t.Error("two runtimes share a canary token")
	}
}

func TestBootstrapHooksRefusals(t *testing.T) {
	ctx := context.Background()
	f := setup(t)
	f.boot.ToolAllowlist = []string{"Bash(gh"}
	if err := f.rt.BootstrapHooks(ctx, f.s, f.boot); err == nil || !strings.Contains(err.Error(), "unbalanced") {
		t.Errorf("bad allowlist: %v", err)
	}
	f.boot.ToolAllowlist = nil
	f.boot.DisabledHooks = []string{"no-such-hook"}
	if err := f.rt.BootstrapHooks(ctx, f.s, f.boot); err == nil || !strings.Contains(err.Error(), "unknown hook") {
		t.Errorf("unknown disabled hook: %v", err)
	}
	f.boot.DisabledHooks = nil
	f.s.WriteFile(t, DecoyPath, []byte("real credentials\n"))
	must(t, f.rt.BootstrapHooks(ctx, f.s, f.boot))
	if got := string(f.s.ReadFile(t, DecoyPath)); got != "real credentials\n" {
		t.Errorf("decoy overwrote an existing credentials file: %q", got)
	}
	f.s.WriteFile(t, repo+"/.claude/settings.local.json", []byte(`{"disableAllHooks": true}`))
	err := f.rt.BootstrapHooks(ctx, f.s, f.boot)
	if err == nil || !strings.Contains(err.Error(), "settings.local.json sets disableAllHooks") {
		t.Errorf("repo disabling hooks: %v", err)
	}
	must(t, os.Remove(f.s.HostPath(SettingsPath)))
	if err := f.rt.BootstrapHooks(ctx, f.s, f.boot); err == nil {
		t.Fatal("second run with the bad repo settings passed")
	}
	if _, statErr := os.Stat(f.s.HostPath(SettingsPath)); !os.IsNotExist(statErr) {
		t.Error("settings written although the repo check failed")
	}
}

// rec names a recording of the real CLI (testdata/real-2.1.330/README.md).
func rec(name string) string { return "real-2.1.330/" + name + ".jsonl" }

func recordingPath(testdata, name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(testdata, name)
}

// truncated is a CLI that died mid-stream: the first lines of a real
// recording, a line of its dying words, one more message, no result.
func truncated(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", rec("tool_use")))
	must(t, err)
	lines := strings.SplitAfter(string(b), "\n")
	var keep []string
	for _, l := range lines {
		if strings.Contains(l, `"type":"assistant"`) {
			keep = append(keep, "Error: something went wrong in the renderer\n", l)
			break
		}
		keep = append(keep, l)
	}
	p := filepath.Join(t.TempDir(), "truncated.jsonl")
	must(t, os.WriteFile(p, []byte(strings.Join(keep, "")), 0o644))
	return p
}

func TestRunSuccess(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	must(t, f.rt.Bootstrap(ctx, f.s, f.boot))
	must(t, f.rt.BootstrapHooks(ctx, f.s, f.boot))
	rr := &recorder{}
	in := f.input(rec("tool_use"), rr, map[string]string{"FAKE_CLAUDE_RESULT": `{"status":"ok"}`})
	in.Options[OptEffort] = "high"
	out, err := f.rt.Run(ctx, f.s, in)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := runtime.Outcome{ExitCode: 0, StopReason: runtime.StopCompleted, Turns: 4, ToolCalls: 3,
		InputTokens: 5400, OutputTokens: 115, CostUSD: 0.023899999999999998, SessionID: "35132e83-ab74-416a-b9b0-df223a5956ce"}
	if out.ExitCode != want.ExitCode || out.StopReason != want.StopReason || out.Turns != want.Turns || out.ToolCalls != want.ToolCalls ||
		out.InputTokens != want.InputTokens || out.OutputTokens != want.OutputTokens || out.CostUSD != want.CostUSD || out.SessionID != want.SessionID || len(out.Errors) != 0 {
		t.Fatalf("outcome\n got %+v\nwant %+v", *out, want)
	}

	args := strings.Split(strings.TrimSpace(f.recorded(t, "args")), "\n")
	wantArgs := []string{"--print", "--agent", "code", "--output-format", "stream-json", "--verbose",
		"--include-partial-messages", "--include-hook-events", "--strict-mcp-config",
		"--settings", f.s.HostPath(SettingsPath), "--permission-mode", "bypassPermissions", "--model", "sonnet",
		"--max-turns", "5", "--effort", "high", "--debug-file", f.s.HostPath(LogDir + "/claude-debug-1.log")}
	if strings.Join(args, " ") != strings.Join(wantArgs, " ") {
		t.Errorf("claude args\n got %q\nwant %q", args, wantArgs)
	}
	stdin := f.recorded(t, "stdin")
	if !strings.HasPrefix(stdin, "Implement issue 42.") || !strings.Contains(stdin, "/sandbox/workspace/result.json") {
		t.Errorf("prompt on stdin %q", stdin)
	}
	env := f.recorded(t, "env")
	for _, kv := range []string{"CLAUDE_CONFIG_DIR=" + f.s.HostPath("/sandbox/claude-config"), "FROM_DOTENV=dotenv-value", "FORGE=github",
		"GH_TOKEN=from-harness", "IS_SANDBOX=1", "FULLSEND_CANARY_TOKEN=" + f.rt.Canary()} {
		if !strings.Contains(env, kv+"\n") {
			t.Errorf("claude env lacks %s", kv)
		}
	}
	if cwd := strings.TrimSpace(f.recorded(t, "cwd")); cwd != f.s.HostPath(repo) {
		t.Errorf("cwd %s", cwd)
	}

	calls := rr.kinds(runtime.EventToolCall)
	if len(calls) != 3 || calls[0].Name != "Read" || calls[1].Name != "Bash" || calls[1].Text != "ls -a && echo ok" || calls[2].Name != "Write" {
		t.Errorf("tool calls %+v", calls)
	}
	results := rr.kinds(runtime.EventToolResult)
	if len(results) != 3 || results[1].Name != "Bash" || results[1].ID != "toolu_bash" || !strings.Contains(results[1].Text, "README.md") || results[1].IsError {
		t.Errorf("tool results %+v", results)
	}
	// The CLI prints a message once per content block: one turn each.
	if turns := rr.kinds(runtime.EventTurn); len(turns) != 4 {
		t.Errorf("turn events %d, want 4 (split message counted once)", len(turns))
	}
	// Per-turn usage from message_delta, not the 1 of message_start.
	usage := rr.kinds(runtime.EventUsage)
	var perTurn []int64
	for _, u := range usage[:len(usage)-1] {
		perTurn = append(perTurn, u.OutputTokens)
	}
	if len(usage) != 5 || fmt.Sprint(perTurn) != "[35 28 40 12]" || usage[0].InputTokens != 1200 || usage[4].Name != "total" || usage[4].OutputTokens != 115 {
		t.Errorf("usage events %+v", usage)
	}
	if texts := rr.kinds(runtime.EventText); len(texts) != 2 {
		t.Errorf("text events %+v", texts)
	}
	if r := rr.kinds(runtime.EventResult); len(r) != 1 || r[0].Name != runtime.StopCompleted {
		t.Errorf("result events %+v", r)
	}
	if v := rr.kinds(runtime.EventVerdict); len(v) != 0 {
		t.Errorf("verdicts of allowing hooks: %+v", v)
	}
	if info := rr.kinds(runtime.EventInfo); len(info) != 1 || !strings.HasPrefix(info[0].Text, "Claude Code 2.1.330, session ") {
		t.Errorf("info events (status and hook_started are not events) %+v", info)
	}

	runDir := filepath.Join(t.TempDir(), "run")
	must(t, f.rt.SaveTranscript(ctx, f.s, runDir))
	tr, _ := os.ReadFile(filepath.Join(runDir, "transcript.jsonl"))
	rawRec, _ := os.ReadFile(filepath.Join(f.testdata, rec("tool_use")))
	if string(tr) != string(rawRec) {
		t.Errorf("transcript.jsonl differs from the stream")
	}
	if b, _ := os.ReadFile(filepath.Join(runDir, "claude-debug-1.log")); !strings.Contains(string(b), "fake claude started") {
		t.Errorf("debug log %q", b)
	}
	if _, err := os.Stat(filepath.Join(runDir, "claude-projects", "-sandbox-workspace-demo", "session.jsonl")); err != nil {
		t.Errorf("session file not saved: %v", err)
	}
}

func TestRunFailures(t *testing.T) {
	cases := []struct {
		name, recording string
		env             map[string]string
		opts            map[string]string
		stop, wantErr   string
		exit            int
	}{
		{name: "max turns", recording: rec("max_turns"), env: map[string]string{"FAKE_CLAUDE_EXIT": "1"}, stop: runtime.StopMaxTurns,
			wantErr: "runtime claude: run: turn limit reached: Reached maximum number of turns (2)", exit: 1},
		{name: "api error", recording: rec("api_error"), env: map[string]string{"FAKE_CLAUDE_EXIT": "1"}, stop: runtime.StopError,
			wantErr: "runtime claude: run: model API error (HTTP 500): API Error: 500 upstream model crashed.", exit: 1},
		{name: "died", recording: "truncated", env: map[string]string{"FAKE_CLAUDE_EXIT": "1", "FAKE_CLAUDE_STDERR": "fatal: out of memory"},
			stop: runtime.StopError, wantErr: "claude exited 1 without a result message: fatal: out of memory", exit: 1},
		{name: "nonzero after result", recording: rec("tool_use"), env: map[string]string{"FAKE_CLAUDE_EXIT": "3", "FAKE_CLAUDE_STDERR": "hook crashed"},
			stop: runtime.StopError, wantErr: "claude exited 3: hook crashed", exit: 3},
		{name: "missing binary", recording: rec("tool_use"), opts: map[string]string{OptBinary: "claude-not-installed"},
			stop: runtime.StopError, wantErr: "claude-not-installed not found in the sandbox (exit 127)", exit: 127},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := setup(t)
			ctx := context.Background()
			must(t, f.rt.Bootstrap(ctx, f.s, f.boot))
			rr := &recorder{}
			recording := c.recording
			if recording == "truncated" {
				recording = truncated(t)
			}
			in := f.input(recording, rr, c.env)
			for k, v := range c.opts {
				in.Options[k] = v
			}
			out, err := f.rt.Run(ctx, f.s, in)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.HasPrefix(err.Error(), "runtime claude: run: ") {
				t.Fatalf("err = %v, want %q", err, c.wantErr)
			}
			if strings.Contains(err.Error(), "claude success") {
				t.Errorf("error worded after the result's subtype: %v", err)
			}
			if out == nil || out.StopReason != c.stop || out.ExitCode != c.exit || len(out.Errors) == 0 {
				t.Fatalf("outcome %+v", out)
			}
		})
	}
}

// TestParseAPIErrorAndRetry: the CLI's <synthetic> stand-in message is no
// turn, its text an error; api_retry details reach the events.
func TestParseAPIErrorAndRetry(t *testing.T) {
	parse := func(name string) (*recorder, runtime.Outcome) {
		rr := &recorder{}
		p := NewParser(rr.add)
		b, err := os.ReadFile(filepath.Join("testdata", rec(name)))
		must(t, err)
		w := &lineWriter{p: p}
		w.Write(b)
		w.Flush()
		out, _ := p.Outcome()
		return rr, out
	}
	rr, out := parse("api_error")
	if out.Turns != 0 || len(rr.kinds(runtime.EventTurn)) != 0 {
		t.Errorf("synthetic message counted as a turn: %+v", out)
	}
	errs := rr.kinds(runtime.EventError)
	if len(errs) != 2 || errs[0].Name != "server_error" || !strings.HasPrefix(errs[0].Text, "API Error: 500") || !strings.HasPrefix(errs[1].Text, "model API error (HTTP 500)") {
		t.Errorf("error events %+v", errs)
	}
	retry := rr.kinds(runtime.EventInfo)
	if len(retry) != 2 || retry[1].Name != "api_retry" || !strings.Contains(retry[1].Text, "attempt 1 of 1 failed with HTTP 500 (server_error); retrying in") {
		t.Errorf("retry events %+v", retry)
	}
	rr, out = parse("api_retry")
	retry = rr.kinds(runtime.EventInfo)
	if out.StopReason != runtime.StopCompleted || out.Turns != 1 || len(retry) != 2 || !strings.Contains(retry[1].Text, "HTTP 529 (overloaded)") {
		t.Errorf("retry: %+v %+v", out, retry)
	}
}

// TestParseVerdicts: every denial and blocked output of the real hooks
// becomes one verdict, named after the fullsend hook with its rule and
// call; the result's permission_denials do not repeat the hook's denial.
func TestParseVerdicts(t *testing.T) {
	rr := &recorder{}
	p := NewParser(rr.add)
	b, err := os.ReadFile(filepath.Join("testdata", rec("hook_denied")))
	must(t, err)
	w := &lineWriter{p: p}
	w.Write(b)
	w.Flush()
	var got []string
	for _, v := range rr.kinds(runtime.EventVerdict) {
		got = append(got, v.Name+" "+v.Rule+" "+v.ID+" "+strings.SplitN(v.Text, ":", 2)[0])
	}
	want := []string{
		"ssrf-pretool ssrf.metadata toolu_ssrf blocked the call of Bash",
		"canary-posttool canary.read toolu_canary blocked the output of Bash",
		"secret-redact-posttool secret.secrets/aws-access-token toolu_canary blocked the output of Bash",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("verdicts\n got %q\nwant %q", got, want)
	}
	// A denial only the CLI reports (a permission rule, no hook answer)
	// and a hook that could not decide (exit 2) are verdicts too.
	rr = &recorder{}
	p = NewParser(rr.add)
	p.Line([]byte(`{"type":"system","subtype":"hook_response","hook_name":"PreToolUse:Read","hook_event":"PreToolUse","stdout":"","stderr":"fullsend: hook canary-pretool: decoding payload: EOF","exit_code":2}`))
	p.Line([]byte(`{"type":"result","subtype":"success","is_error":false,"permission_denials":[{"tool_name":"Edit","tool_use_id":"toolu_x","tool_input":{"file_path":"/etc/passwd"}}]}`))
	v := rr.kinds(runtime.EventVerdict)
	if len(v) != 2 || v[0].Rule != "hook.error" || v[0].Name != "PreToolUse:Read" || !strings.Contains(v[0].Text, "decoding payload") ||
		v[1].Name != "permission_denial" || v[1].ID != "toolu_x" || !strings.Contains(v[1].Text, "Edit") {
		t.Errorf("verdicts %+v", v)
	}
}

func TestRunHookDeniedAndUnparsed(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	must(t, f.rt.Bootstrap(ctx, f.s, f.boot))
	rr := &recorder{}
	out, err := f.rt.Run(ctx, f.s, f.input(rec("hook_denied"), rr, nil))
	if err != nil || out.StopReason != runtime.StopCompleted || len(out.Errors) != 0 {
		t.Fatalf("%+v %v", out, err)
	}
	res := rr.kinds(runtime.EventToolResult)
	if len(res) != 2 || !res[0].IsError || !strings.Contains(res[0].Text, "cloud metadata endpoint") || res[0].Name != "Bash" {
		t.Fatalf("denied tool result %+v", res)
	}
	if v := rr.kinds(runtime.EventVerdict); len(v) != 3 {
		t.Errorf("verdicts %+v", v)
	}
	rr = &recorder{}
	_, _ = f.rt.Run(ctx, f.s, f.input(truncated(t), rr, map[string]string{"FAKE_CLAUDE_EXIT": "1"}))
	errs := rr.kinds(runtime.EventError)
	if len(errs) == 0 || errs[0].Name != "unparsed" || !strings.Contains(errs[0].Text, "renderer") {
		t.Fatalf("unparsed line not reported: %+v", errs)
	}
	if texts := rr.kinds(runtime.EventText); len(texts) != 1 || texts[0].Text != "Reading the README first." {
		t.Fatalf("parsing did not continue after a bad line: %+v", texts)
	}
}

func TestRunTimeoutFeedbackCleanup(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	must(t, f.rt.Bootstrap(ctx, f.s, f.boot))
	slow := runtimetest.WriteScript(t, "slow-claude", "sleep 10\n")
	in := f.input(rec("tool_use"), nil, nil)
	in.Options[OptBinary] = slow
	in.Timeout = 200 * time.Millisecond
	start := time.Now()
	out, err := f.rt.Run(ctx, f.s, in)
	if err == nil || out == nil || out.StopReason != runtime.StopTimeout || time.Since(start) > 5*time.Second {
		t.Fatalf("timeout: %+v %v", out, err)
	}

	f.s.WriteFile(t, "/sandbox/workspace/result.json", []byte(`{"status": 1}`))
	must(t, f.rt.CleanupIteration(ctx, f.s))
	if _, err := os.Stat(f.s.HostPath("/sandbox/workspace/result.json")); !os.IsNotExist(err) {
		t.Fatal("CleanupIteration left the previous result")
	}
	in = f.input(rec("tool_use"), nil, nil)
	in.Iteration, in.Feedback = 2, "/status: expected string, got number"
	schema := filepath.Join(t.TempDir(), "result.schema.json")
	must(t, os.WriteFile(schema, []byte(`{"type":"object","required":["status"]}`), 0o644))
	in.ResultSchema = schema
	if _, err := f.rt.Run(ctx, f.s, in); err != nil {
		t.Fatal(err)
	}
	stdin := f.recorded(t, "stdin")
	if !strings.Contains(stdin, "failed validation") || !strings.Contains(stdin, "/status: expected string, got number") ||
		!strings.Contains(stdin, `JSON Schema:`+"\n"+`{"type":"object","required":["status"]}`) {
		t.Fatalf("feedback not in prompt: %q", stdin)
	}
	if args := f.recorded(t, "args"); !strings.Contains(args, "claude-debug-2.log") {
		t.Fatalf("debug log not per iteration: %s", args)
	}
}

func TestRunOptions(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	for _, c := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"script": "x"}, `unknown option "script"`},
		{map[string]string{OptMaxTurns: "-1"}, "not a positive integer"},
		{map[string]string{OptPermissionMode: "yolo"}, `"yolo" is not a permission mode`},
		{map[string]string{OptEffort: "extreme"}, `"extreme" is not an effort level`},
		{map[string]string{OptDebug: "maybe"}, "not true or false"},
	} {
		in := f.input(rec("tool_use"), nil, nil)
		in.Options = c.opts
		out, err := f.rt.Run(ctx, f.s, in)
		if err == nil || out != nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v %v", c.opts, out, err)
		}
	}
	in := f.input(rec("tool_use"), nil, nil)
	in.Options = map[string]string{OptDebug: "false"}
	if _, err := f.rt.Run(ctx, f.s, in); err != nil {
		t.Fatal(err)
	}
	if args := f.recorded(t, "args"); strings.Contains(args, "--debug-file") || strings.Contains(args, "--settings") {
		t.Errorf("debug=false / no hooks still passed flags: %s", args)
	}
}
