package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

var (
	preNames  = []string{"bash-risk-pretool", "ssrf-pretool", "tool-allowlist-pretool", "canary-pretool"}
	postNames = []string{"canary-posttool", "secret-redact-posttool", "unicode-posttool", "context-suppress-posttool"}
)

// answeredBy returns the hook named in a blocking answer's tag ("" = allow).
func answeredBy(t *testing.T, out []byte) string {
	t.Helper()
	if len(out) == 0 {
		return ""
	}
	s := string(out)
	for _, n := range append(append([]string{}, preNames...), postNames...) {
		if strings.Contains(s, n) {
			return n
		}
	}
	t.Fatalf("answer names no hook: %s", out)
	return ""
}

// One process per event: HandleEach gives the answer each single hook
// would give, for every hook of the event, on the same payloads.
func TestHandleEachRunsEveryHookOfTheEvent(t *testing.T) {
	ctx := context.Background()
	env := &Env{Getenv: func(k string) string {
		return map[string]string{EnvCanaryToken: canaryToken(t), EnvToolAllowlist: "Read,Grep,Bash"}[k]
	}}
	for _, c := range []struct {
		payload string
		names   []string
		want    string
	}{
		{"pre_bash_curl_sh", preNames, "bash-risk-pretool"},
		{"pre_bash_metadata", preNames, "ssrf-pretool"},
		{"pre_write_file", preNames, "tool-allowlist-pretool"},
		{"pre_bash_canary_exfil", preNames, "canary-pretool"},
		{"pre_bash_gh", preNames, ""},
		{"pre_webfetch_metadata", []string{"bash-risk-pretool", "ssrf-pretool"}, "ssrf-pretool"},
		{"post_bash_env_canary", postNames, "canary-posttool"},
		{"post_read_private_key", postNames, "secret-redact-posttool"},
		{"post_read_zwsp", postNames, "unicode-posttool"},
		{"post_webfetch_injection", postNames, "context-suppress-posttool"},
		{"post_bash_issue_ok", postNames, ""},
	} {
		var out bytes.Buffer
		v, err := HandleEach(ctx, c.names, bytes.NewReader(payload(t, c.payload)), &out, env)
		if err != nil {
			t.Errorf("%s: %v", c.payload, err)
			continue
		}
		if got := answeredBy(t, out.Bytes()); got != c.want || v.Block != (c.want != "") {
			t.Errorf("%s: answered by %q (block %v), want %q\n%s", c.payload, got, v.Block, c.want, out.Bytes())
		}
		if c.want == "" {
			continue
		}
		// The single hook agrees.
		var single bytes.Buffer
		sv, err := Handle(ctx, c.want, bytes.NewReader(payload(t, c.payload)), &single, env)
		if err != nil || !sv.Block || sv.Rule != v.Rule {
			t.Errorf("%s: %s alone: %+v %v; each: %+v", c.payload, c.want, sv, err, v)
		}
		if !json.Valid(out.Bytes()) {
			t.Errorf("%s: answer is not JSON: %s", c.payload, out.Bytes())
		}
	}
}

// A hook runs only for the tools its matcher selects, as it did when
// Claude Code applied the matcher.
func TestHookMatches(t *testing.T) {
	for _, c := range []struct {
		hook, tool string
		want       bool
	}{
		{"bash-risk-pretool", "Bash", true},
		{"bash-risk-pretool", "NotebookEdit", true},
		{"bash-risk-pretool", "BashOutput", false},
		{"bash-risk-pretool", "Read", false},
		{"ssrf-pretool", "mcp__github__get_issue", true},
		{"ssrf-pretool", "WebFetch", true},
		{"ssrf-pretool", "WebSearch", false},
		{"canary-pretool", "Anything", true},
	} {
		h, _ := Lookup(c.hook)
		if got, err := h.Matches(c.tool); err != nil || got != c.want {
			t.Errorf("%s matches %s = %v %v, want %v", c.hook, c.tool, got, err, c.want)
		}
	}
	// In one process the matchers still apply: ssrf-pretool would flag the
	// metadata address in any tool's input, but is wired for Bash, WebFetch
	// and MCP tools only, so a Grep for it is not its business.
	grep := []byte(`{"hook_event_name":"PreToolUse","tool_name":"Grep","tool_input":{"pattern":"http://169.254.169.254/latest"},"tool_use_id":"t1"}`)
	var out bytes.Buffer
	if v, err := HandleEach(context.Background(), []string{"bash-risk-pretool", "ssrf-pretool"}, bytes.NewReader(grep), &out, &Env{}); err != nil || v.Block || out.Len() != 0 {
		t.Errorf("Grep under ssrf-pretool's matcher: %+v %v %s", v, err, out.Bytes())
	}
	ssrf, _ := Lookup("ssrf-pretool")
	if v, err := ssrf.Check(context.Background(), &Input{HookEventName: PreToolUse, ToolName: "Grep", ToolInput: []byte(`{"pattern":"http://169.254.169.254/latest"}`)}, &Env{}); err != nil || !v.Block {
		t.Fatalf("the probe is void: ssrf-pretool alone does not flag it: %+v %v", v, err)
	}
	bad := Hook{Name: "x", Matcher: "("}
	if _, err := bad.Matches("Bash"); err == nil {
		t.Error("a matcher that does not compile selected nothing silently")
	}
}

// Every way HandleEach cannot decide is an error (the CLI exits 2: block).
func TestHandleEachFailsClosed(t *testing.T) {
	ctx := context.Background()
	pre := payload(t, "pre_bash_gh")
	for _, c := range []struct {
		names   []string
		payload []byte
		want    string
	}{
		{nil, pre, "no hook named"},
		{[]string{"nope"}, pre, "unknown hook"},
		{[]string{"ssrf-pretool", "ssrf-pretool"}, pre, "named twice"},
		{[]string{"ssrf-pretool", "canary-posttool"}, pre, "one event per process"},
		{postNames, pre, `payload is for event "PreToolUse"`},
		{preNames, []byte("{"), "hook each:"},
	} {
		var out bytes.Buffer
		_, err := HandleEach(ctx, c.names, bytes.NewReader(c.payload), &out, &Env{})
		if err == nil || !strings.Contains(err.Error(), c.want) || out.Len() != 0 {
			t.Errorf("%v: err %v out %q, want %q", c.names, err, out.String(), c.want)
		}
	}
	env := &Env{Secrets: fakeScanner{err: errors.New("scanner down")}}
	_, err := HandleEach(ctx, postNames, bytes.NewReader(payload(t, "post_bash_issue_ok")), &bytes.Buffer{}, env)
	if err == nil || !strings.Contains(err.Error(), "secret-redact-posttool: scanner down") {
		t.Errorf("scanner error: %v", err)
	}
}
