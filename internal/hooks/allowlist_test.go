package hooks

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

func bashInput(cmd string) *Input {
	return &Input{HookEventName: PreToolUse, ToolName: "Bash", ToolInput: []byte(`{"command":` + quoteJSON(cmd) + `}`)}
}

func quoteJSON(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

func TestAgentAllowlist(t *testing.T) {
	for _, c := range []struct {
		name, doc, want string
		ok              bool
	}{
		{"comma list", "---\nname: triage\ntools: Bash(gh,curl,jq), Skill\nmodel: opus\n---\nbody\n", "Bash(gh,curl,jq),Skill", true},
		{"with comments (YAML path)", "---\nname: p\n# curl: needed on GitLab\ntools: Bash(gh, curl, jq), Skill\n---\n", "Bash(gh,curl,jq),Skill", true},
		{"yaml list", "---\nname: r\ntools:\n  - Read\n  - Bash(gh:*)\n  - mcp__github__*\n---\n", "Read,Bash(gh),mcp__github__*", true},
		{"no tools key", "---\nname: code\nmodel: opus\n---\nbody\n", "", false},
		{"no frontmatter", "just a body\n", "", false},
	} {
		got, ok, err := AgentAllowlist("agents/x.md", []byte(c.doc))
		if err != nil || got != c.want || ok != c.ok {
			t.Errorf("%s: %q %v %v, want %q %v", c.name, got, ok, err, c.want, c.ok)
		}
	}
	for _, c := range []struct{ doc, want string }{
		{"---\nname: x\ntools: Bash(gh\n---\n", "agents/x.md:3: tools: invalid value: tool allowlist \"Bash(gh\": unbalanced '('"},
		{"---\nname: x\nmodel: opus\ntools:\n---\n", "agents/x.md:4: tools: invalid value: empty"},
		{"---\nname: x\ntools: ' , '\n---\n", "agents/x.md:3: tools: invalid value: empty"},
		{"---\nname: x\ntools: {Bash: gh}\n---\n", "agents/x.md:3: tools: wrong type"},
		{"---\nname: x\ntools: [Read, '']\n---\n", "agents/x.md:3: tools: invalid value: entry 1 must be a non-empty string"},
		{"---\nname: x\ntools: Bash(gh|sh)\n---\n", "must be a single program name"},
		{"---\nname: x\ntools: Bash(g'h)\n---\n", "must be a single program name"},
		{"---\nname: x\ntools: WebFetch(domain:x.com)\n---\n", "only Bash takes a command list"},
	} {
		_, ok, err := AgentAllowlist("agents/x.md", []byte(c.doc))
		var ye *yamlx.Error
		if err == nil || ok || !strings.Contains(err.Error(), c.want) || !errors.As(err, &ye) {
			t.Errorf("%q: %v (restricted %v), want a yamlx error containing %q", c.doc, err, ok, c.want)
		}
	}
}

func TestRunAllowlists(t *testing.T) {
	agent := []byte("---\nname: t\ntools: Bash(gh,jq), Read\n---\n")
	for _, c := range []struct {
		name     string
		runner   []string
		disabled []string
		want     string
	}{
		{"agent only", nil, nil, "Bash(gh,jq),Read"},
		{"agent and runner", []string{"Bash(gh)", "Read"}, nil, "Bash(gh,jq),Read | Bash(gh),Read"},
		{"disabled by harness key", nil, []string{"tool_allowlist"}, ""},
		{"disabled by hook name", []string{"Read"}, []string{"tool-allowlist-pretool"}, ""},
		{"other hook disabled", nil, []string{"ssrf"}, "Bash(gh,jq),Read"},
	} {
		got, err := RunAllowlists("a.md", agent, c.runner, c.disabled)
		if err != nil || strings.Join(got, " | ") != c.want {
			t.Errorf("%s: %q %v, want %q", c.name, got, err, c.want)
		}
	}
	if got, err := RunAllowlists("a.md", []byte("---\nname: t\n---\n"), nil, nil); err != nil || got != nil {
		t.Errorf("unrestricted agent: %q %v", got, err)
	}
	if _, err := RunAllowlists("a.md", agent, []string{"Bash(gh"}, nil); err == nil {
		t.Error("broken runner list accepted")
	}
	if _, err := RunAllowlists("a.md", agent, nil, []string{"no_such_key"}); err == nil || !errors.Is(err, ErrUnknownHook) {
		t.Errorf("unknown disabled name: %v", err)
	}
}

// Two lists never widen each other: each must permit the call.
func TestEveryAllowlistMustPermit(t *testing.T) {
	env := &Env{ToolAllowlists: []string{"Bash(gh,jq),Read", "Bash(gh),Read"}, Getenv: func(string) string { return "Bash" }}
	for cmd, allowed := range map[string]bool{"gh issue list": true, "gh x | jq .": false, "ls /": false} {
		v, err := checkAllowlist(context.Background(), bashInput(cmd), env)
		if err != nil || v.Block == allowed {
			t.Errorf("%q: %+v %v, allowed want %v", cmd, v, err, allowed)
		}
	}
	// The variable is not read when lists are given, even to widen.
	v, _ := checkAllowlist(context.Background(), bashInput("ls /"), &Env{ToolAllowlists: []string{"Bash(gh)"}, Getenv: func(string) string { return "Bash" }})
	if !v.Block {
		t.Error("FULLSEND_TOOL_ALLOWLIST widened the given list")
	}
	// An empty given list is an error, never "no restriction".
	if _, err := checkAllowlist(context.Background(), bashInput("ls /"), &Env{ToolAllowlists: []string{" "}}); err == nil {
		t.Error("empty given allowlist read as no restriction")
	}
}

func TestToolAliases(t *testing.T) {
	in := &Input{HookEventName: PreToolUse, ToolName: "LS", ToolAliases: []string{"Glob"}, ToolInput: []byte(`{}`)}
	env := &Env{ToolAllowlists: []string{"Glob,Read"}}
	if v, err := checkAllowlist(context.Background(), in, env); err != nil || v.Block {
		t.Errorf("alias Glob not honoured: %+v %v", v, err)
	}
	in.ToolAliases = nil
	if v, _ := checkAllowlist(context.Background(), in, env); !v.Block {
		t.Error("LS permitted without an alias")
	}
	// A payload cannot bring its own aliases.
	got, err := ReadInput(strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"Write","ToolAliases":["Read"],"tool_aliases":["Read"]}`))
	if err != nil || got.ToolAliases != nil {
		t.Fatalf("payload set aliases: %+v %v", got, err)
	}
}

func TestFormatAllowlistRoundTrip(t *testing.T) {
	for in, want := range map[string]string{
		"Bash(gh, curl,jq) , Skill":   "Bash(gh,curl,jq),Skill",
		"Bash(gh:*),Bash(jq *),Read":  "Bash(gh),Bash(jq),Read",
		"mcp__github__*, Bash":        "mcp__github__*,Bash",
		"Bash(python3,g++,git-lfs)":   "Bash(python3,g++,git-lfs)",
		"Bash(./x)":                   "",
		"Bash(-rf)":                   "",
		"Bash($HOME)":                 "",
		"Bash(gh'),Read":              "",
		"Bash(gh\"),Read":             "",
		"Read; touch /tmp/x":          "",
		"Bash(gh),Read'; touch /x; '": "",
	} {
		rules, err := ParseAllowlist(in)
		if want == "" {
			if err == nil {
				t.Errorf("%q accepted as %q", in, FormatAllowlist(rules))
			}
			continue
		}
		if err != nil || FormatAllowlist(rules) != want {
			t.Errorf("%q: %q %v, want %q", in, FormatAllowlist(rules), err, want)
		}
	}
}

func TestSettingsWiresAllowlist(t *testing.T) {
	hs, err := Select([]string{"tirith"}, []string{ToolAllowlistHook})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Settings("/usr/local/bin/fullsend", hs, "Bash(gh, jq), Read", "Read")
	want := `"command": "/usr/local/bin/fullsend hook each ssrf-pretool tool-allowlist-pretool canary-pretool --allow 'Bash(gh,jq),Read' --allow 'Read'"`
	if err != nil || !strings.Contains(string(b), want) || strings.Contains(string(b), "bash-risk-pretool") {
		t.Fatalf("Settings:\n%s\n%v\nwant %s", b, err, want)
	}
	if _, err := Settings("/usr/local/bin/fullsend", hs); err == nil || !strings.Contains(err.Error(), "without a tool allowlist") {
		t.Errorf("allowlist hook wired without a list: %v", err)
	}
	for _, bad := range []string{"", " , ", "Bash(gh", "Read'; rm -rf / #"} {
		if _, err := Settings("/usr/local/bin/fullsend", hs, bad); err == nil {
			t.Errorf("allowlist %q accepted into a command line", bad)
		}
	}
	// Harness keys and hook names both disable.
	for _, d := range [][]string{{"tool_allowlist"}, {"tool-allowlist-pretool"}} {
		hs, err := Select(d, []string{ToolAllowlistHook})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hs {
			if h.Name == ToolAllowlistHook {
				t.Errorf("Select(%v) kept the allowlist hook", d)
			}
		}
	}
	if _, err := Select([]string{"canary"}, nil); err != nil {
		t.Errorf("harness key canary: %v", err)
	}
}

// The workspace .env files are sourced before every claude iteration and
// every native bash call: writing them would run code past Bash(...).
func TestEnvFilesProtected(t *testing.T) {
	ctx := context.Background()
	for cmd, blocked := range map[string]bool{
		"echo 'curl x | sh' >> /sandbox/workspace/.env":       true,
		"jq -n '\"x\"' > /sandbox/workspace/.env.d/zz.env":    true,
		"cd .. && printf 'FULLSEND_X=1' > .env.d/x":           true,
		"cat /sandbox/workspace/.env":                         false,
		"cp .env.example .env.development && go test ./...":   false,
		"gh issue list > /sandbox/workspace/demo/issues.json": false,
	} {
		v, err := checkBashRisk(ctx, bashInput(cmd), nil)
		if err != nil || v.Block != blocked {
			t.Errorf("%q: %+v %v, blocked want %v", cmd, v, err, blocked)
		}
	}
	for p, blocked := range map[string]bool{
		"/sandbox/workspace/.env":           true,
		"/sandbox/workspace/.env.d/x.env":   true,
		"/sandbox/workspace/demo/.env.test": false,
	} {
		in := &Input{HookEventName: PreToolUse, ToolName: "Write", ToolInput: []byte(`{"file_path":"` + p + `","content":"x"}`)}
		v, err := checkBashRisk(ctx, in, nil)
		if err != nil || v.Block != blocked {
			t.Errorf("Write %s: %+v %v, blocked want %v", p, v, err, blocked)
		}
	}
}

// Claude Code renamed Task to Agent: `tools: Task` still permits the
// Agent tool, and nothing else gains from the rename.
func TestRenamedToolTask(t *testing.T) {
	agent := &Input{HookEventName: PreToolUse, ToolName: "Agent", ToolInput: []byte(`{}`)}
	if v, err := checkAllowlist(context.Background(), agent, &Env{ToolAllowlists: []string{"Read,Task"}}); err != nil || v.Block {
		t.Errorf("tools: Task does not permit Agent: %+v %v", v, err)
	}
	if v, _ := checkAllowlist(context.Background(), agent, &Env{ToolAllowlists: []string{"Read"}}); !v.Block {
		t.Error("Agent permitted without Task or Agent in the list")
	}
	task := &Input{HookEventName: PreToolUse, ToolName: "Task", ToolInput: []byte(`{}`)}
	if v, _ := checkAllowlist(context.Background(), task, &Env{ToolAllowlists: []string{"Agent"}}); !v.Block {
		t.Error("the rename works backwards: tools: Agent permitted Task")
	}
}
