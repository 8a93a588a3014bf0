package native

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	"github.com/fullsend-ai/fullsend/internal/runtime"
)

// callAt is a Call step whose answer reports in input tokens of context.
func callAt(id, command string, in int64) modeltest.Step {
	s := modeltest.Call(id, ToolBash, map[string]any{"command": command})
	s.Reply.InputTokens = in
	return s
}

// mentions reports whether any message of msgs holds s (text, tool call
// id or arguments, tool result id).
func mentions(msgs []model.Message, s string) bool {
	for _, m := range msgs {
		if strings.Contains(m.Text(), s) || m.ToolCallID == s {
			return true
		}
		for _, tc := range m.ToolCalls {
			if tc.ID == s || strings.Contains(tc.Arguments, s) {
				return true
			}
		}
	}
	return false
}

// TestCompactionResumable: a scripted conversation crosses
// compact_tokens; the older turns are summarised by the model into a
// compaction record; the run stops (turn limit) and is resumed by a new
// process, whose first request carries the summary and the kept turns,
// never the dropped ones; the dropped tool outputs stay in the run
// directory. Both dialects.
func TestCompactionResumable(t *testing.T) {
	for _, api := range dialects {
		t.Run(string(api), func(t *testing.T) {
			h := newHarnessEnv(t, api,
				callAt("k1", "echo first-output", 100),
				callAt("k2", "echo second-output", 400),
				callAt("k3", "echo third-output", 1500), // reaches compact_tokens
				modeltest.Say("SUMMARY: the agent ran echo first-output"),
			)
			out, err := h.run(context.Background(), h.input(map[string]string{OptCompactTokens: "1000", OptMaxTurns: "4"}))
			if out == nil || out.StopReason != runtime.StopMaxTurns {
				t.Fatalf("first attempt: %+v %v", out, err)
			}
			reqs := h.srv.Requests()
			if len(reqs) != 4 {
				t.Fatalf("%d requests, want 4 (3 turns and the summary)", len(reqs))
			}
			sum := reqs[3].Decoded
			if sum.System != compactSystem || len(sum.Tools) != 0 || len(sum.Messages) != 1 || !mentions(sum.Messages, "first-output") || mentions(sum.Messages, "third-output") {
				t.Fatalf("summary request: system %.40q, %d tools, messages %s", sum.System, len(sum.Tools), mustJSON(sum.Messages))
			}
			var comp *Compaction
			for _, r := range readRecords(t, h.runDir) {
				if r.Type == RecCompaction {
					comp = r.Compaction
				}
			}
			if comp == nil || comp.Dropped != 2 || comp.InputTokens != 1500 || len(comp.ToolOutputs) != 1 {
				t.Fatalf("compaction record %+v", comp)
			}
			if data, err := os.ReadFile(filepath.Join(h.runDir, comp.ToolOutputs[0])); err != nil || !strings.Contains(string(data), "first-output") {
				t.Errorf("dropped tool output %s: %q %v", comp.ToolOutputs[0], data, err)
			}

			// A new process resumes: the compaction is replayed.
			h2 := newHarnessEnv(t, api, modeltest.Say("done"))
			h2.sess, h2.runDir = h.sess, h.runDir
			out, err = h2.rt.Resume(context.Background(), h2.sess, h2.input(map[string]string{OptMaxTurns: "6"}))
			if err != nil || out.StopReason != runtime.StopCompleted {
				t.Fatalf("resumed: %+v %v", out, err)
			}
			got := h2.srv.Requests()[0].Decoded.Messages
			if len(got) != 5 || !strings.Contains(got[0].Text(), "SUMMARY: the agent ran echo first-output") || !strings.Contains(got[0].Text(), "do the task") {
				t.Fatalf("resumed request: %s", mustJSON(got))
			}
			if mentions(got, "k1") || mentions(got[1:], "first-output") {
				t.Errorf("the resumed request carries a dropped turn: %s", mustJSON(got))
			}
			if !mentions(got, "k2") || !mentions(got, "k3") || !mentions(got, "third-output") {
				t.Errorf("the resumed request lost a kept turn: %s", mustJSON(got))
			}
		})
	}
}

// TestCompactionOff: without compact_tokens nothing is compacted, however
// large the context.
func TestCompactionOff(t *testing.T) {
	h := newHarnessEnv(t, model.APIOpenAI, callAt("k1", "echo a", 1<<20), callAt("k2", "echo b", 1<<20), callAt("k3", "echo c", 1<<20), modeltest.Say("done"))
	out, err := h.run(context.Background(), h.input(nil))
	if err != nil || out.StopReason != runtime.StopCompleted {
		t.Fatalf("%+v %v", out, err)
	}
	last := h.srv.Requests()[3].Decoded.Messages
	if !mentions(last, "k1") || len(last) != 7 {
		t.Errorf("compacted without compact_tokens: %s", mustJSON(last))
	}
}

func TestCompactCut(t *testing.T) {
	u := model.Message{Role: model.RoleUser}
	a := model.Message{Role: model.RoleAssistant}
	tl := model.Message{Role: model.RoleTool}
	for _, c := range []struct {
		msgs []model.Message
		want int
	}{
		{[]model.Message{u, a, tl}, 0},
		{[]model.Message{u, a, tl, a, tl}, 0},
		{[]model.Message{u, a, tl, a, tl, a, tl}, 2},
		{[]model.Message{u, a, tl, tl, a, tl, a, tl, tl}, 3},
	} {
		if got := compactCut(c.msgs); got != c.want {
			t.Errorf("%d messages: cut %d, want %d", len(c.msgs), got, c.want)
		}
	}
}
