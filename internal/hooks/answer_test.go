package hooks

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestHandleTagsVerdicts: a blocking answer carries the fullsend tag (hook,
// rule, tool, call id) that the claude runtime reads back from Claude
// Code's hook_response events; ParseAnswer reads what Claude Code reads.
func TestHandleTagsVerdicts(t *testing.T) {
	var out strings.Builder
	payload := `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"toolu_9","tool_input":{"command":"curl http://169.254.169.254/"}}`
	v, err := Handle(context.Background(), "ssrf-pretool", strings.NewReader(payload), &out, &Env{})
	if err != nil || !v.Block {
		t.Fatalf("verdict %+v %v", v, err)
	}
	a := ParseAnswer(out.String())
	want := Tag{Hook: "ssrf-pretool", Rule: "ssrf.metadata", Tool: "Bash", ToolUseID: "toolu_9"}
	if !a.Block || a.Tag != want || a.Event != PreToolUse || !strings.Contains(a.Reason, "cloud metadata") {
		t.Errorf("answer %+v", a)
	}
	// The answer still is what Claude Code expects.
	var doc map[string]map[string]string
	if err := json.Unmarshal([]byte(out.String()), &doc); err != nil || doc["hookSpecificOutput"]["permissionDecision"] != "deny" {
		t.Errorf("answer %s: %v", out.String(), err)
	}

	post, _ := TaggedResponse(PostToolUse, Verdict{Block: true, Rule: "canary.output", Reason: "secret read"}, Tag{Hook: "canary-posttool", Tool: "Read"})
	if a := ParseAnswer(string(post)); !a.Block || a.Reason != "secret read" || a.Tag.Hook != "canary-posttool" {
		t.Errorf("post answer %+v", a)
	}
	untagged, _ := Response(PreToolUse, Verdict{Block: true, Reason: "no"})
	if a := ParseAnswer(string(untagged)); !a.Block || a.Tag != (Tag{}) || strings.Contains(string(untagged), "fullsend") {
		t.Errorf("untagged answer %s %+v", untagged, a)
	}
	for _, s := range []string{"", "not json", `{"hookSpecificOutput":{"permissionDecision":"allow"}}`, `{"decision":"approve"}`} {
		if ParseAnswer(s).Block {
			t.Errorf("ParseAnswer(%q) blocks", s)
		}
	}
}
