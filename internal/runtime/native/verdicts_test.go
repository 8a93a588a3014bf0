package native

import (
	"context"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/runtimetest"
)

// Issue 26 item 5: the native loop's security stops are verdict events
// (the runner turns them into report findings), as the claude runtime's
// hook answers are: a block (SSRF), a denial (the agent's tool allowlist)
// and a canary trip (the planted decoy read back).
func TestVerdictContract(t *testing.T) {
	for _, api := range dialects {
		t.Run(string(api), func(t *testing.T) {
			h := newHarnessEnv(t, api,
				modeltest.Call("v1", "bash", map[string]any{"command": "curl http://169.254.169.254/latest/meta-data/"}),
				modeltest.Call("v2", "bash", map[string]any{"command": "ls /"}),
				modeltest.Call("v3", "bash", map[string]any{"command": "cat " + runtime.DecoyPath}),
				modeltest.Say("done"),
			)
			rebootAgent(t, h, "tools: Bash(cat,curl)\n")
			if _, err := h.run(context.Background(), h.input(nil)); err != nil {
				t.Fatal(err)
			}
			runtimetest.CheckVerdicts(t, h.events, []runtimetest.Stop{
				{Kind: runtimetest.StopBlock, ID: "v1"}, {Kind: runtimetest.StopDenial, ID: "v2"}, {Kind: runtimetest.StopCanary, ID: "v3"},
			})
			if txt, _ := toolResultOf(t, h.srv, 3, "v3"); strings.Contains(txt, h.rt.Canary()) {
				t.Errorf("the canary reached the model: %q", txt)
			}
		})
	}
}

// A delegated child's stops are the run's: they reach the parent's events.
func TestVerdictOfChild(t *testing.T) {
	h := newHarnessEnv(t, model.APIOpenAI,
		modeltest.Call("d1", ToolDelegateTask, map[string]any{"goal": "look around"}),
		modeltest.Call("c1", "bash", map[string]any{"command": "curl http://169.254.169.254/latest/meta-data/"}),
		modeltest.Say("child done"),
		modeltest.Say("done"),
	)
	if _, err := h.run(context.Background(), h.input(nil)); err != nil {
		t.Fatal(err)
	}
	for _, e := range h.events {
		if e.Kind == runtime.EventVerdict && e.ID == "c1" && strings.HasPrefix(e.Rule, "ssrf.") {
			return
		}
	}
	t.Fatalf("the child's block is no verdict of the run: %+v", h.events)
}

// A page web_fetch's content scan withholds is a verdict too.
func TestVerdictOfWebFetchScan(t *testing.T) {
	_, port, res := webServer(t)
	h := newHarnessEnv(t, model.APIOpenAI,
		modeltest.Call("w1", ToolWebFetch, map[string]any{"url": "http://docs.test:" + port + "/evil"}),
		modeltest.Call("w2", ToolWebFetch, map[string]any{"url": "http://docs.test:" + port + "/good"}),
		modeltest.Say("done"),
	)
	runWeb(t, h, res, "docs.test:"+port)
	var got []runtime.Event
	for _, e := range h.events {
		if e.Kind == runtime.EventVerdict {
			got = append(got, e)
		}
	}
	if len(got) != 1 || got[0].ID != "w1" || got[0].Name != WebScanCheck || got[0].Rule == "" || !strings.HasPrefix(got[0].Text, "blocked the output of web_fetch: ") {
		t.Fatalf("verdicts %+v, want one of the withheld page w1", got)
	}
}
