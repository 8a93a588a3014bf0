package native

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	"github.com/fullsend-ai/fullsend/internal/runtime"
)

func streamScript() []modeltest.Step {
	return []modeltest.Step{
		{Reply: &modeltest.Reply{Text: "Checking the readme.", ToolCalls: []model.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"cat README.md"}`}}, InputTokens: 40, OutputTokens: 12}},
		{Reply: &modeltest.Reply{Text: "The readme says hello.", InputTokens: 60, OutputTokens: 6}},
	}
}

// normalised returns the transcript with times, durations and the
// server's base URL (each test server has its own port) cleared.
func normalised(t *testing.T, dir string) []string {
	var out []string
	for _, r := range readRecords(t, dir) {
		r.Time = time.Time{}
		if r.Model != nil {
			m := *r.Model
			m.BaseURL = ""
			r.Model = &m
		}
		if r.Tool != nil {
			tr := *r.Tool
			tr.DurationMS = 0
			r.Tool = &tr
		}
		out = append(out, mustJSON(r))
	}
	return out
}

// TestStreamingKeepsTranscript: a run with OnDelta streams (deltas arrive
// before the turn is recorded) and writes the same transcript, events and
// outcome as a run without it; calls.jsonl says which calls streamed.
func TestStreamingKeepsTranscript(t *testing.T) {
	const delay = 50 * time.Millisecond
	for _, api := range dialects {
		t.Run(string(api), func(t *testing.T) {
			plain := newHarnessEnv(t, api, streamScript()...)
			plainOut, err := plain.run(context.Background(), plain.input(nil))
			if err != nil {
				t.Fatal(err)
			}

			streamed := newHarnessEnv(t, api, streamScript()...)
			streamed.srv.SetDeltaDelay(delay)
			var deltas []Delta
			var at []time.Time
			streamed.rt.o.OnDelta = func(d Delta) {
				deltas = append(deltas, d)
				at = append(at, time.Now())
			}
			out, err := streamed.run(context.Background(), streamed.input(nil))
			if err != nil {
				t.Fatal(err)
			}

			if got, want := normalised(t, streamed.runDir), normalised(t, plain.runDir); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("transcripts differ:\n got %s\nwant %s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if out.Turns != plainOut.Turns || out.ToolCalls != plainOut.ToolCalls || out.InputTokens != plainOut.InputTokens || out.OutputTokens != plainOut.OutputTokens || out.StopReason != plainOut.StopReason {
				t.Fatalf("outcomes differ: %+v vs %+v", out, plainOut)
			}
			if len(streamed.events) != len(plain.events) {
				t.Fatalf("%d events streamed, %d not", len(streamed.events), len(plain.events))
			}
			for i, e := range streamed.events {
				p := plain.events[i]
				if e.Kind != p.Kind || e.Turn != p.Turn || (e.Kind != runtime.EventInfo && e.Text != p.Text) {
					t.Fatalf("event %d: %+v, without streaming %+v", i, e, p)
				}
			}

			var text [3]strings.Builder
			for _, d := range deltas {
				if d.Depth != 0 || d.Turn < 1 || d.Turn > 2 {
					t.Fatalf("delta %+v", d)
				}
				if d.Kind == model.DeltaText {
					text[d.Turn].WriteString(d.Text)
				}
			}
			if text[1].String() != "Checking the readme." || text[2].String() != "The readme says hello." {
				t.Fatalf("delta text %q / %q", text[1].String(), text[2].String())
			}
			// The first delta of turn 1 came well before turn 1 was recorded.
			var turn1 time.Time
			for _, e := range streamed.events {
				if e.Kind == runtime.EventTurn && e.Turn == 1 {
					turn1 = e.Time
					break
				}
			}
			if turn1.Sub(at[0]) < 2*delay {
				t.Fatalf("first delta %s before the turn event: not streamed", turn1.Sub(at[0]))
			}
			calls, _ := os.ReadFile(filepath.Join(streamed.runDir, CallsFile))
			plainCalls, _ := os.ReadFile(filepath.Join(plain.runDir, CallsFile))
			if strings.Count(string(calls), `"stream":true`) != 2 || strings.Contains(string(plainCalls), `"stream"`) {
				t.Fatalf("calls.jsonl:\n%s\nwithout streaming:\n%s", calls, plainCalls)
			}
			if !streamed.srv.Requests()[0].Stream || plain.srv.Requests()[0].Stream {
				t.Fatal("stream flag not as asked")
			}
		})
	}
}

// TestStreamFailureEndsRun: a stream cut mid-answer ends the run with a
// clear error and no retry.
func TestStreamFailureEndsRun(t *testing.T) {
	h := newHarnessEnv(t, model.APIAnthropic, modeltest.Step{Reply: &modeltest.Reply{Text: strings.Repeat("words ", 20)}, Fault: modeltest.FaultCut})
	n := 0
	h.rt.o.OnDelta = func(Delta) { n++ }
	out, err := h.run(context.Background(), h.input(nil))
	if err == nil || !strings.Contains(err.Error(), "stream broken after") || out.StopReason != runtime.StopError {
		t.Fatalf("err %v, outcome %+v", err, out)
	}
	if n == 0 || len(h.srv.Requests()) != 1 || len(h.sleeps) != 0 {
		t.Fatalf("%d deltas, %d requests, sleeps %v", n, len(h.srv.Requests()), h.sleeps)
	}
}
