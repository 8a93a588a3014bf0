package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
)

type deltaLog struct {
	deltas []model.Delta
	at     []time.Time
}

func (d *deltaLog) add(x model.Delta) {
	d.deltas = append(d.deltas, x)
	d.at = append(d.at, time.Now())
}

func (d *deltaLog) text(kind model.DeltaKind) string {
	var b strings.Builder
	for _, x := range d.deltas {
		if x.Kind == kind {
			b.WriteString(x.Text)
		}
	}
	return b.String()
}

func (d *deltaLog) calls() []model.Delta {
	var out []model.Delta
	for _, x := range d.deltas {
		if x.Kind == model.DeltaToolCall {
			out = append(out, x)
		}
	}
	return out
}

func hiRequest(onDelta func(model.Delta)) *model.Request {
	return &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: []model.Block{model.TextBlock("hi")}}}, MaxTokens: 100, OnDelta: onDelta}
}

// TestStreamDeltasArriveBeforeReturn: with 60 ms between events, the
// first delta is seen long before Complete returns, and deltas arrive
// spread out in time, in order.
func TestStreamDeltasArriveBeforeReturn(t *testing.T) {
	const delay = 60 * time.Millisecond
	for _, api := range dialects {
		t.Run(string(api), func(t *testing.T) {
			reply := &modeltest.Reply{Text: "Streaming works well.", ToolCalls: []model.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"ls"}`}}, InputTokens: 11, OutputTokens: 7}
			srv := modeltest.New(t, api, modeltest.Step{Reply: reply})
			srv.SetDeltaDelay(delay)
			var calls []model.Call
			c := newClient(t, srv, srv.Config(), &calls, &sleeps{})
			log := &deltaLog{}
			start := time.Now()
			resp, err := c.Complete(context.Background(), hiRequest(log.add))
			end := time.Now()
			if err != nil {
				t.Fatal(err)
			}
			if len(log.deltas) < 4 {
				t.Fatalf("%d deltas, want several: %+v", len(log.deltas), log.deltas)
			}
			if first := log.at[0]; end.Sub(first) < 3*delay {
				t.Fatalf("first delta %s after start, call returned %s after start: deltas did not arrive before the turn ended", first.Sub(start), end.Sub(start))
			}
			if spread := log.at[len(log.at)-1].Sub(log.at[0]); spread < 2*delay {
				t.Fatalf("deltas spread over %s only", spread)
			}
			if got := log.text(model.DeltaText); got != reply.Text || resp.Message.Text() != reply.Text {
				t.Fatalf("text deltas %q, response %q", got, resp.Message.Text())
			}
			if tc := log.calls(); len(tc) != 1 || tc[0].ID != "c1" || tc[0].Name != "bash" || tc[0].Index != 0 {
				t.Fatalf("tool call deltas %+v", tc)
			}
			if last := log.deltas[len(log.deltas)-1]; last.Kind != model.DeltaToolCall {
				t.Fatalf("deltas out of order: last is %+v", last)
			}
			if len(calls) != 1 || !calls[0].Stream || calls[0].Status != 200 || calls[0].ResponseBytes == 0 ||
				calls[0].FirstEventMS <= 0 || calls[0].DurationMS < calls[0].FirstEventMS+2*ms(delay) || calls[0].OutputTokens != 7 {
				t.Fatalf("call record %+v", calls)
			}
		})
	}
}

func ms(d time.Duration) float64 { return float64(d.Milliseconds()) }

// TestStreamEqualsNonStreaming: the assembled Response of a stream is the
// Response of the same answer sent as one body.
func TestStreamEqualsNonStreaming(t *testing.T) {
	replies := map[string]*modeltest.Reply{
		"text":       {Text: "Hello, wörld — done.", InputTokens: 3, OutputTokens: 4},
		"tool calls": {Text: "Let me look.", ToolCalls: []model.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"internal/model/client.go","limit":200}`}, {ID: "c2", Name: "bash", Arguments: `{"command":"go test ./..."}`}}, InputTokens: 30, OutputTokens: 20},
		"calls only": {ToolCalls: []model.ToolCall{{ID: "c9", Name: "bash", Arguments: `{"command":"echo \"a b\""}`}}, OutputTokens: 9},
		"max tokens": {Text: "cut he", Stop: model.StopMaxTokens, OutputTokens: 100},
		"other stop": {Text: "no", Stop: model.StopOther},
		"bad args":   {ToolCalls: []model.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command": "ls"`}}},
	}
	for _, api := range dialects {
		for name, r := range replies {
			t.Run(string(api)+"/"+name, func(t *testing.T) {
				plain := modeltest.New(t, api, modeltest.Step{Reply: r})
				streamed := modeltest.New(t, api, modeltest.Step{Reply: r})
				want, err := newClient(t, plain, plain.Config(), nil, &sleeps{}).Complete(context.Background(), hiRequest(nil))
				if err != nil {
					t.Fatal(err)
				}
				log := &deltaLog{}
				got, err := newClient(t, streamed, streamed.Config(), nil, &sleeps{}).Complete(context.Background(), hiRequest(log.add))
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					g, _ := json.Marshal(got)
					w, _ := json.Marshal(want)
					t.Fatalf("streamed response differs:\n got %s\nwant %s", g, w)
				}
				if len(r.ToolCalls) > 0 && len(r.ToolCalls[0].Arguments) <= modeltest.PieceSize {
					t.Fatal("arguments too short to be split")
				}
				if log.text(model.DeltaText) != r.Text || len(log.calls()) != len(r.ToolCalls) {
					t.Fatalf("deltas %+v", log.deltas)
				}
				if !srv(streamed).Stream || srv(plain).Stream {
					t.Fatal("stream flag not sent as asked")
				}
			})
		}
	}
}

func srv(s *modeltest.Server) modeltest.Received { return s.Requests()[0] }

// TestStreamRequestBody: only a streaming request carries the stream
// fields; the non-streaming body is unchanged.
func TestStreamRequestBody(t *testing.T) {
	for _, api := range dialects {
		t.Run(string(api), func(t *testing.T) {
			s := modeltest.New(t, api, modeltest.Say("a"), modeltest.Say("b"))
			c := newClient(t, s, s.Config(), nil, &sleeps{})
			if _, err := c.Complete(context.Background(), hiRequest(nil)); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Complete(context.Background(), hiRequest(func(model.Delta) {})); err != nil {
				t.Fatal(err)
			}
			plain, streamed := s.Requests()[0], s.Requests()[1]
			if strings.Contains(string(plain.Body), "stream_options") || strings.Contains(string(plain.Body), `"stream":true`) {
				t.Fatalf("non-streaming body %s", plain.Body)
			}
			if api == model.APIAnthropic && strings.Contains(string(plain.Body), `"stream"`) {
				t.Fatalf("non-streaming anthropic body %s", plain.Body)
			}
			if !streamed.Stream || (api == model.APIOpenAI) != streamed.IncludeUsage {
				t.Fatalf("streaming body %s", streamed.Body)
			}
			if plain.Header.Get("Accept") != "application/json" || streamed.Header.Get("Accept") != "text/event-stream" {
				t.Fatalf("accept headers %q %q", plain.Header.Get("Accept"), streamed.Header.Get("Accept"))
			}
		})
	}
}

// TestStreamFaults: every broken stream is one clear error naming the
// endpoint, after the deltas that did arrive, with no retry.
func TestStreamFaults(t *testing.T) {
	faults := []struct {
		name  string
		fault modeltest.Fault
		want  string
	}{
		{"cut", modeltest.FaultCut, "stream broken after"},
		{"malformed", modeltest.FaultMalformed, "bad response: stream at byte"},
		{"error event", modeltest.FaultError, "server error:"},
		{"oversize", modeltest.FaultOversize, "line longer than 4194304 bytes"},
		{"no final event", modeltest.FaultNoFinal, "stream ended before its final event"},
	}
	for _, api := range dialects {
		for _, f := range faults {
			t.Run(string(api)+"/"+f.name, func(t *testing.T) {
				reply := &modeltest.Reply{Text: strings.Repeat("partial answer here, then trouble. ", 4), OutputTokens: 3}
				s := modeltest.New(t, api, modeltest.Step{Reply: reply, Fault: f.fault})
				var calls []model.Call
				sl := &sleeps{}
				c := newClient(t, s, withKey(s.Config()), &calls, sl)
				log := &deltaLog{}
				resp, err := c.Complete(context.Background(), hiRequest(log.add))
				if err == nil || resp != nil {
					t.Fatalf("no error: %+v", resp)
				}
				msg := err.Error()
				t.Log(msg)
				if !strings.Contains(msg, f.want) || !strings.Contains(msg, "model API "+s.Config().Endpoint()) || strings.Contains(msg, testKey) || strings.Contains(msg, "\n") {
					t.Fatalf("error %q, want %q naming the endpoint", msg, f.want)
				}
				if f.fault == modeltest.FaultError && api == model.APIAnthropic && !strings.Contains(msg, "overloaded_error: Overloaded") {
					t.Fatalf("error event message lost: %q", msg)
				}
				if len(log.deltas) == 0 {
					t.Fatal("no delta before the fault")
				}
				if len(s.Requests()) != 1 || len(calls) != 1 || calls[0].WillRetry || len(sl.got) != 0 {
					t.Fatalf("retried after the first byte: %d requests, calls %+v", len(s.Requests()), calls)
				}
				if !calls[0].Stream || calls[0].Status != 200 || calls[0].ResponseBytes == 0 || calls[0].Error == "" || strings.Contains(calls[0].Error, testKey) {
					t.Fatalf("call record %+v", calls[0])
				}
			})
		}
	}
}

// TestStreamRetryBeforeFirstByte: a 429 and a 200 that dies before its
// first byte are retried; the answer's deltas are delivered once.
func TestStreamRetryBeforeFirstByte(t *testing.T) {
	for _, api := range dialects {
		t.Run(string(api), func(t *testing.T) {
			empty := modeltest.Step{Handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			}}
			s := modeltest.New(t, api, modeltest.Status(429, map[string]string{"Retry-After": "2"}), empty, modeltest.Say("once only"))
			var calls []model.Call
			sl := &sleeps{}
			c := newClient(t, s, s.Config(), &calls, sl)
			log := &deltaLog{}
			resp, err := c.Complete(context.Background(), hiRequest(log.add))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Attempts != 3 || log.text(model.DeltaText) != "once only" {
				t.Fatalf("attempts %d, deltas %q", resp.Attempts, log.text(model.DeltaText))
			}
			if len(calls) != 3 || !calls[0].WillRetry || calls[0].RetryAfterMS != 2000 || !calls[1].WillRetry || !calls[1].Stream || calls[1].ResponseBytes != 0 || !calls[2].Stream {
				t.Fatalf("calls %+v", calls)
			}
			if len(sl.got) != 2 || sl.got[0] != 2*time.Second {
				t.Fatalf("sleeps %v", sl.got)
			}
		})
	}
}

// TestStreamJSONFallback: a server that ignores "stream": true and sends
// one JSON body still gives the answer, delivered as whole deltas.
func TestStreamJSONFallback(t *testing.T) {
	for _, api := range dialects {
		t.Run(string(api), func(t *testing.T) {
			ref := modeltest.New(t, api, modeltest.Call("c1", "bash", map[string]string{"command": "ls"}))
			want, err := newClient(t, ref, ref.Config(), nil, &sleeps{}).Complete(context.Background(), hiRequest(nil))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(map[string]any{"id": "x", "choices": []any{map[string]any{"message": map[string]any{"content": "plain"}, "finish_reason": "stop"}}})
			if api == model.APIAnthropic {
				body, _ = json.Marshal(map[string]any{"id": "x", "type": "message", "content": []any{map[string]any{"type": "text", "text": "plain"}}, "stop_reason": "end_turn"})
			}
			s := modeltest.New(t, api, modeltest.Step{Status: 200, Header: map[string]string{"Content-Type": "application/json"}, Body: string(body)})
			var calls []model.Call
			log := &deltaLog{}
			resp, err := newClient(t, s, s.Config(), &calls, &sleeps{}).Complete(context.Background(), hiRequest(log.add))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Text() != "plain" || log.text(model.DeltaText) != "plain" || calls[0].Stream || want.Message.ToolCalls[0].Name != "bash" {
				t.Fatalf("resp %+v deltas %+v calls %+v", resp, log.deltas, calls)
			}
		})
	}
}

// TestStreamRedactsKey: the key never reaches a delta, even split across
// events, and the text around it is kept.
func TestStreamRedactsKey(t *testing.T) {
	for _, api := range dialects {
		t.Run(string(api), func(t *testing.T) {
			text := "my key is " + testKey + " and again " + testKey + "!"
			s := modeltest.New(t, api, modeltest.Step{Reply: &modeltest.Reply{Text: text,
				ToolCalls: []model.ToolCall{{ID: "c1", Name: "bash", Arguments: `{}`}}}})
			c := newClient(t, s, withKey(s.Config()), nil, &sleeps{})
			log := &deltaLog{}
			resp, err := c.Complete(context.Background(), hiRequest(log.add))
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range log.deltas {
				if strings.Contains(d.Text, testKey[:8]) {
					t.Fatalf("delta carries key material: %+v", d)
				}
			}
			if got, want := log.text(model.DeltaText), "my key is [redacted] and again [redacted]!"; got != want {
				t.Fatalf("deltas %q, want %q", got, want)
			}
			if resp.Message.Text() != text {
				t.Fatalf("assembled text changed: %q", resp.Message.Text())
			}
			if last := log.deltas[len(log.deltas)-1]; last.Kind != model.DeltaToolCall {
				t.Fatalf("held-back text not flushed before the tool call: %+v", log.deltas)
			}
		})
	}
}

// TestStreamCancel: cancelling mid-stream returns the context's error.
func TestStreamCancel(t *testing.T) {
	s := modeltest.New(t, model.APIOpenAI, modeltest.Step{Reply: &modeltest.Reply{Text: strings.Repeat("word ", 40)}})
	s.SetDeltaDelay(20 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newClient(t, s, s.Config(), nil, &sleeps{})
	n := 0
	_, err := c.Complete(ctx, hiRequest(func(model.Delta) {
		if n++; n == 2 {
			cancel()
		}
	}))
	if !errors.Is(err, context.Canceled) || len(s.Requests()) != 1 {
		t.Fatalf("err %v after %d requests", err, len(s.Requests()))
	}
}

// BenchmarkComplete compares a plain and a streamed call of the same
// answer (about 2 KB of text and a tool call) on loopback, no delay.
func BenchmarkComplete(b *testing.B) {
	reply := &modeltest.Reply{Text: strings.Repeat("lorem ipsum ", 170), ToolCalls: []model.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"go test ./internal/model/..."}`}}, OutputTokens: 500}
	for _, api := range dialects {
		for _, stream := range []bool{false, true} {
			name := string(api) + "/plain"
			if stream {
				name = string(api) + "/stream"
			}
			b.Run(name, func(b *testing.B) {
				s := modeltest.NewFunc(b, api, func(int, modeltest.Received) modeltest.Step { return modeltest.Step{Reply: reply} })
				c, err := model.New(s.Config(), model.Options{})
				if err != nil {
					b.Fatal(err)
				}
				var onDelta func(model.Delta)
				if stream {
					onDelta = func(model.Delta) {}
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := c.Complete(context.Background(), hiRequest(onDelta)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
