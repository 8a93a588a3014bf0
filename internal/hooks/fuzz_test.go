package hooks

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func FuzzCommandNames(f *testing.F) {
	for _, s := range []string{"gh issue view 1 | jq .", "A=1 B=2 /usr/bin/gh x; jq", `echo "$(id)"`, "a && b || c &", "x 2>&1 >out <in", `'q'"w"\e`, "cat <(ls)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		names, err := commandNames(cmd)
		if err != nil {
			if names != nil {
				t.Fatalf("names %q with error %v", names, err)
			}
			return
		}
		if len(names) == 0 {
			t.Fatal("no names and no error")
		}
		// without quoting or escapes, a substitution is always live
		if !strings.ContainsAny(cmd, `'\`) && (strings.Contains(cmd, "$(") || strings.Contains(cmd, "`")) {
			t.Fatalf("substitution accepted in %q", cmd)
		}
	})
}

func FuzzHandle(f *testing.F) {
	f.Add(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"curl http://10.0.0.1/"}}`)
	f.Add(`{"hook_event_name":"PostToolUse","tool_name":"Read","tool_response":{"file":{"content":"x\u202e"}}}`)
	f.Fuzz(func(t *testing.T, payload string) {
		for _, h := range all {
			var out bytes.Buffer
			v, err := Handle(context.Background(), h.Name, strings.NewReader(payload), &out, &Env{Getenv: func(string) string { return "" }})
			if err != nil && out.Len() != 0 {
				t.Fatalf("%s wrote a response and failed", h.Name)
			}
			if v.Block != (out.Len() != 0) {
				t.Fatalf("%s: verdict %+v but output %q", h.Name, v, out.String())
			}
			if v.Block && v.Reason == "" {
				t.Fatalf("%s blocked without a reason", h.Name)
			}
		}
	})
}

// FuzzParseAllowlist: whatever parses renders to a canonical form that
// parses back to the same rules and holds no byte a single-quoted shell
// word (the hook command line in settings.json) could be broken by.
func FuzzParseAllowlist(f *testing.F) {
	for _, s := range []string{"Bash(gh,curl,jq), Skill", "Read,Bash(gh:*)", "mcp__x__*", "Bash(", "Bash(g'h)", " , ", "Bash(python3,g++)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rules, err := ParseAllowlist(s)
		if err != nil {
			return
		}
		canon := FormatAllowlist(rules)
		for i := 0; i < len(canon); i++ {
			c := canon[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_-.+*(),", c) >= 0) {
				t.Fatalf("%q renders as %q with byte %q", s, canon, c)
			}
		}
		again, err := ParseAllowlist(canon)
		if err != nil || FormatAllowlist(again) != canon || len(again) != len(rules) {
			t.Fatalf("%q → %q → %v %v", s, canon, again, err)
		}
	})
}
