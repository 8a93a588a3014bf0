//go:build unix

package cli

import (
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
)

// TestRunCompactTokens: `fullsend run --compact-tokens N` compacts once a
// call's input reaches N: the next request carries the summary instead of
// the dropped turns, and `runs show --transcript` prints the compaction
// and the workspace snapshots.
func TestRunCompactTokens(t *testing.T) {
	needLocalSandbox(t)
	call := func(id, cmd string, in int64) modeltest.Step {
		s := modeltest.Call(id, native.ToolBash, map[string]string{"command": cmd})
		s.Reply.InputTokens = in
		return s
	}
	srv := modeltest.New(t, model.APIAnthropic,
		call("c1", "echo early-output", 100),
		call("c2", "echo middle-output", 200),
		call("c3", "echo late-output", 3000),
		modeltest.Say("SUMMARY-OF-EARLY-TURNS"),
		modeltest.Call("c4", native.ToolWriteFile, map[string]string{"path": resultInSbox, "content": helloResult}),
		modeltest.Say("done"),
	)
	setModelEnv(t, model.APIAnthropic, srv.URL)
	ws := t.TempDir()
	if code, out, errs := runCLI(t, "--workspace", ws, "run", "--runtime", "native", "--compact-tokens", "2000", "--target-repo", "none", helloHarness); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	reqs := srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d requests, want 6", len(reqs))
	}
	after := reqs[4].Decoded.Messages
	if !strings.Contains(after[0].Text(), "SUMMARY-OF-EARLY-TURNS") || mentions(after, "early-output") || !mentions(after, "late-output") {
		t.Fatalf("request after the compaction: %d messages, first %q", len(after), after[0].Text())
	}
	code, out, errs := runCLI(t, "--workspace", ws, "runs", "show", "--transcript", "latest")
	if code != 0 {
		t.Fatalf("runs show --transcript: exit %d\n%s", code, errs)
	}
	for _, want := range []string{"[compacted] 2 earlier messages replaced by a summary at 3000 input tokens (whole tool outputs kept: tool-outputs/1.txt)", "  SUMMARY-OF-EARLY-TURNS", "[workspace snapshot] snapshots/"} {
		if !strings.Contains(out, want) {
			t.Errorf("transcript lacks %q:\n%s", want, out)
		}
	}
}

// mentions reports whether a message of msgs holds s in its text or a
// tool call's arguments.
func mentions(msgs []model.Message, s string) bool {
	for _, m := range msgs {
		if strings.Contains(m.Text(), s) {
			return true
		}
		for _, c := range m.ToolCalls {
			if strings.Contains(c.Arguments, s) {
				return true
			}
		}
	}
	return false
}
