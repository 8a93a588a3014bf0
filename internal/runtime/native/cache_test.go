package native

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/spantest"
	"github.com/fullsend-ai/fullsend/internal/trace"
)

// cacheScript is three turns whose answers report prompt-cache counts the
// way each dialect does.
func cacheScript() []modeltest.Step {
	return []modeltest.Step{
		{Reply: &modeltest.Reply{ToolCalls: []model.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"cat README.md"}`}}, InputTokens: 100, OutputTokens: 10, CacheCreationTokens: 900}},
		{Reply: &modeltest.Reply{ToolCalls: []model.ToolCall{{ID: "c2", Name: "list_dir", Arguments: `{"path":"."}`}}, InputTokens: 50, OutputTokens: 10, CacheReadTokens: 900, CacheCreationTokens: 120}},
		{Reply: &modeltest.Reply{Text: "done", InputTokens: 30, OutputTokens: 5, CacheReadTokens: 1020}},
	}
}

// TestPromptCacheNative: a native run against the fake model, streamed and
// not, in both dialects. Anthropic requests carry cache breakpoints on the
// system prompt, the last tool, the newest message and the previous
// turn's last message (where the previous request put its own), never
// more than the API allows; OpenAI requests carry none and keep the exact
// same tools and system prompt bytes, each request extending the one
// before (what automatic prefix caching needs). The cached-token counts
// reach the outcome, the usage and result events, calls.jsonl, the
// transcript and the chat spans.
func TestPromptCacheNative(t *testing.T) {
	for _, api := range dialects {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", api, stream), func(t *testing.T) {
				exp := spantest.Record(t)
				h := newHarnessEnv(t, api, cacheScript()...)
				if stream {
					h.rt.o.OnDelta = func(Delta) {}
				}
				ctx, agent := trace.Start(context.Background(), "invoke_agent a")
				out, err := h.run(ctx, h.input(nil))
				agent.End()
				if err != nil {
					t.Fatal(err)
				}
				reqs := h.srv.Requests()
				if len(reqs) != 3 {
					t.Fatalf("%d requests", len(reqs))
				}
				for i, r := range reqs {
					if r.Stream != stream {
						t.Fatalf("request %d: stream %v", i+1, r.Stream)
					}
				}
				if api == model.APIAnthropic {
					checkAnthropicBreakpoints(t, reqs)
				} else {
					checkOpenAIPrefix(t, reqs)
				}
				checkCacheCounts(t, h, api, out)
				checkCacheSpans(t, exp.GetSpans(), api)
			})
		}
	}
}

func checkAnthropicBreakpoints(t *testing.T, reqs []modeltest.Received) {
	t.Helper()
	var prevLast string
	for i, r := range reqs {
		var body struct {
			Tools    []json.RawMessage `json:"tools"`
			Messages []struct {
				Role    string            `json:"role"`
				Content []json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		n := len(body.Messages)
		last := fmt.Sprintf("messages[%d].content[%d]", n-1, len(body.Messages[n-1].Content)-1)
		want := []string{fmt.Sprintf("tools[%d]", len(body.Tools)-1), "system[0]"}
		if i > 0 {
			// The previous request's last message is where it put its
			// breakpoint: this request reads that cached prefix.
			want = append(want, prevLast)
		}
		want = append(want, last)
		if !reflect.DeepEqual(r.CacheBreakpoints, want) {
			t.Fatalf("request %d: breakpoints %q, want %q", i+1, r.CacheBreakpoints, want)
		}
		if len(r.CacheBreakpoints) > model.MaxCacheBreakpoints {
			t.Fatalf("request %d: %d breakpoints", i+1, len(r.CacheBreakpoints))
		}
		if !strings.HasPrefix(r.Decoded.System, "You are an autonomous agent") {
			t.Fatalf("request %d: system prompt %.60q", i+1, r.Decoded.System)
		}
		prevLast = last
	}
}

// checkOpenAIPrefix: no cache_control anywhere; tools and system message
// byte-identical across requests; each request's messages begin with the
// previous request's messages, byte for byte.
func checkOpenAIPrefix(t *testing.T, reqs []modeltest.Received) {
	t.Helper()
	type body struct {
		Tools    json.RawMessage   `json:"tools"`
		Messages []json.RawMessage `json:"messages"`
	}
	var prev body
	for i, r := range reqs {
		if len(r.CacheBreakpoints) != 0 {
			t.Fatalf("request %d: openai request carries cache_control at %q", i+1, r.CacheBreakpoints)
		}
		var b body
		if err := json.Unmarshal(r.Body, &b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(r.Body, []byte(`{"model":"fake-model","messages":[{"role":"system"`)) {
			t.Fatalf("request %d does not start with the system message: %.80s", i+1, r.Body)
		}
		if i > 0 {
			if !bytes.Equal(b.Tools, prev.Tools) {
				t.Fatalf("request %d: tools differ from the previous request's", i+1)
			}
			if len(b.Messages) <= len(prev.Messages) {
				t.Fatalf("request %d: %d messages after %d", i+1, len(b.Messages), len(prev.Messages))
			}
			for j, m := range prev.Messages {
				if !bytes.Equal(m, b.Messages[j]) {
					t.Fatalf("request %d: message %d changed:\n%s\nwas\n%s", i+1, j, b.Messages[j], m)
				}
			}
		}
		prev = b
	}
}

func checkCacheCounts(t *testing.T, h *harnessEnv, api model.API, out *runtime.Outcome) {
	t.Helper()
	// Usage as each dialect normalises it: OpenAI's prompt_tokens already
	// counts cached tokens, Anthropic's input_tokens does not.
	type turn struct{ in, read, write int64 }
	want := []turn{{100, 0, 0}, {50, 900, 0}, {30, 1020, 0}}
	if api == model.APIAnthropic {
		want = []turn{{1000, 0, 900}, {1070, 900, 120}, {1050, 1020, 0}}
	}
	var sum turn
	for _, w := range want {
		sum.in, sum.read, sum.write = sum.in+w.in, sum.read+w.read, sum.write+w.write
	}
	if out.InputTokens != sum.in || out.CacheReadInputTokens != sum.read || out.CacheCreationInputTokens != sum.write {
		t.Fatalf("outcome %+v, want %+v", out, sum)
	}
	var usage []turn
	var result *runtime.Event
	for i, e := range h.events {
		switch e.Kind {
		case runtime.EventUsage:
			usage = append(usage, turn{e.InputTokens, e.CacheReadInputTokens, e.CacheCreationInputTokens})
		case runtime.EventResult:
			result = &h.events[i]
		}
	}
	if !reflect.DeepEqual(usage, want) {
		t.Fatalf("usage events %+v, want %+v", usage, want)
	}
	if result == nil || result.CacheReadInputTokens != sum.read || result.CacheCreationInputTokens != sum.write {
		t.Fatalf("result event %+v", result)
	}
	data, err := os.ReadFile(filepath.Join(h.runDir, CallsFile))
	if err != nil {
		t.Fatal(err)
	}
	var calls []turn
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var c model.Call
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, turn{c.InputTokens, c.CacheReadInputTokens, c.CacheCreationInputTokens})
	}
	if !reflect.DeepEqual(calls, want) {
		t.Fatalf("calls.jsonl %+v, want %+v", calls, want)
	}
	var recs []turn
	for _, r := range readRecords(t, h.runDir) {
		if r.Usage != nil {
			recs = append(recs, turn{r.Usage.InputTokens, r.Usage.CacheReadInputTokens, r.Usage.CacheCreationInputTokens})
		}
	}
	if !reflect.DeepEqual(recs, want) {
		t.Fatalf("transcript usage %+v, want %+v", recs, want)
	}
	// The transcript replays to the same totals (what --resume counts from).
	st, err := LoadState(h.runDir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Usage.CacheReadInputTokens != sum.read || st.Usage.CacheCreationInputTokens != sum.write || st.Usage.InputTokens != sum.in {
		t.Fatalf("replayed usage %+v, want %+v", st.Usage, sum)
	}
}

func checkCacheSpans(t *testing.T, spans tracetest.SpanStubs, api model.API) {
	t.Helper()
	var reads, writes []int64
	for _, s := range spans {
		if s.Name != "chat fake-model" {
			continue
		}
		var r, w int64
		for _, kv := range s.Attributes {
			switch kv.Key {
			case "gen_ai.usage.cache_read.input_tokens":
				r = kv.Value.AsInt64()
			case "gen_ai.usage.cache_creation.input_tokens":
				w = kv.Value.AsInt64()
			}
		}
		reads, writes = append(reads, r), append(writes, w)
	}
	wantR, wantW := []int64{0, 900, 1020}, []int64{0, 0, 0}
	if api == model.APIAnthropic {
		wantW = []int64{900, 120, 0}
	}
	if !reflect.DeepEqual(reads, wantR) || !reflect.DeepEqual(writes, wantW) {
		t.Fatalf("chat spans: cache reads %v writes %v, want %v %v", reads, writes, wantR, wantW)
	}
}
