package run

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/spantest"
	"github.com/fullsend-ai/fullsend/internal/trace"
)

// TestPromptCacheCounts: the prompt-cache counts of the iterations'
// outcomes add up in report.json's events (additive keys, left out when
// zero) and reach the invoke_agent and run spans under the GenAI names.
// Not parallel: it installs the global tracer provider.
func TestPromptCacheCounts(t *testing.T) {
	exp := spantest.Record(t)
	x := &execution{report: &Report{}}
	plain, _ := json.Marshal(x.report.Events)
	if strings.Contains(string(plain), "cache_") {
		t.Fatalf("events without cache counts: %s", plain)
	}
	ctx, run := trace.Start(context.Background(), "run")
	for _, o := range []*runtime.Outcome{
		{InputTokens: 1000, OutputTokens: 10, CacheCreationInputTokens: 900},
		{InputTokens: 1100, OutputTokens: 5, CacheReadInputTokens: 900, CacheCreationInputTokens: 100},
	} {
		_, agent := trace.Start(ctx, "invoke_agent a")
		x.count(o)
		traceOutcome(agent, o)
		agent.End()
	}
	x.traceFinish(run, nil)
	run.End()
	b, _ := json.Marshal(x.report.Events)
	for _, want := range []string{`"input_tokens":2100`, `"cache_read_input_tokens":900`, `"cache_creation_input_tokens":1000`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("events %s lack %s", b, want)
		}
	}
	got := map[string][]int64{}
	for _, s := range exp.GetSpans() {
		for _, kv := range s.Attributes {
			if strings.HasPrefix(string(kv.Key), "gen_ai.usage.cache_") {
				got[s.Name+" "+string(kv.Key)] = append(got[s.Name+" "+string(kv.Key)], kv.Value.AsInt64())
			}
		}
	}
	want := map[string][]int64{
		"invoke_agent a gen_ai.usage.cache_creation.input_tokens": {900, 100},
		"invoke_agent a gen_ai.usage.cache_read.input_tokens":     {900},
		"run gen_ai.usage.cache_creation.input_tokens":            {1000},
		"run gen_ai.usage.cache_read.input_tokens":                {900},
	}
	if len(got) != len(want) {
		t.Fatalf("cache attributes %v, want %v", got, want)
	}
	for k, v := range want {
		if len(got[k]) != len(v) || got[k][0] != v[0] || got[k][len(v)-1] != v[len(v)-1] {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}
