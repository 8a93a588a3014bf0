package model

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func readAll(r *sseReader) ([]sseEvent, error) {
	var out []sseEvent
	for {
		ev, err := r.next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name, in string
		want     []sseEvent
		wantErr  string
	}{
		{name: "lf", in: "event: a\ndata: 1\n\ndata: 2\n\n", want: []sseEvent{{"a", []byte("1")}, {"", []byte("2")}}},
		{name: "crlf", in: "event: a\r\ndata: 1\r\n\r\n", want: []sseEvent{{"a", []byte("1")}}},
		{name: "comments and ids", in: ": keep-alive\nid: 7\nretry: 10\nfoo: bar\ndata:x\n\n", want: []sseEvent{{"", []byte("x")}}},
		{name: "multi-line data", in: "data: a\ndata:  b\ndata\n\n", want: []sseEvent{{"", []byte("a\n b\n")}}},
		{name: "blank lines only", in: "\n\n: c\n\n", want: nil},
		{name: "name without data is dropped", in: "event: ping\n\ndata: y\n\n", want: []sseEvent{{"", []byte("y")}}},
		{name: "empty", in: "", want: nil},
		{name: "bare cr", in: "data: a\rb\n\n", wantErr: "bare CR"},
		{name: "ends inside a line", in: "data: a", wantErr: "stream ended inside a line"},
		{name: "ends inside an event", in: "data: a\n", wantErr: "stream ended inside an event"},
		{name: "line too long", in: "data: " + strings.Repeat("x", 40) + "\n\n", wantErr: "line longer than 32 bytes"},
		{name: "event too large", in: strings.Repeat("data: xxxxxxxxxx\n", 4) + "\n", wantErr: "event data larger than 32 bytes"},
		{name: "stream too large", in: strings.Repeat("data: x\n\n", 20), wantErr: "stream larger than 100 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(newSSEReader(strings.NewReader(tt.in), 32, 100))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			for i := range got {
				if got[i].name != tt.want[i].name || string(got[i].data) != string(tt.want[i].data) {
					t.Fatalf("event %d = %q, want %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestSSEReaderSmallBuffer: lines longer than the bufio buffer are
// assembled from fragments.
func TestSSEReaderSmallBuffer(t *testing.T) {
	long := strings.Repeat("y", 200<<10)
	got, err := readAll(newSSEReader(strings.NewReader("data: "+long+"\r\n\r\n"), 1<<20, 1<<20))
	if err != nil || len(got) != 1 || string(got[0].data) != long {
		t.Fatalf("err %v, %d events", err, len(got))
	}
}

// FuzzSSEReader: any input ends in events or one error, never a panic;
// limits always hold, and every event has data.
func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{
		"event: a\ndata: 1\n\n", "data: a\r\ndata: b\r\n\r\n", ": c\nid: 1\n\n", "data: a\rb\n\n",
		"data: [DONE]\n\n", "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", "data", "\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const maxEvent, maxTotal = 64, 256
		r := newSSEReader(strings.NewReader(string(data)), maxEvent, maxTotal)
		for n := 0; ; n++ {
			ev, err := r.next()
			if r.total > maxTotal+64<<10 || len(r.line) > maxEvent+2 {
				t.Fatalf("read %d bytes, line of %d: past the limits", r.total, len(r.line))
			}
			if err != nil {
				if errors.Is(err, io.EOF) && len(data) > maxTotal {
					t.Fatalf("clean end after %d bytes of %d", r.total, len(data))
				}
				return
			}
			if len(ev.data) > maxEvent || len(ev.data) == 0 && !strings.Contains(string(data), "data") {
				t.Fatalf("event %q", ev)
			}
			if n > len(data) {
				t.Fatal("more events than input bytes")
			}
		}
	})
}

// FuzzStreamDecoders: any event sequence never panics the dialect
// decoders, and an assembled response is well formed.
func FuzzStreamDecoders(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\",\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"bash\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\"}}\n\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\ndata: {\"type\":\"message_stop\"}\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, mk := range []func(*deltaSink) streamDecoder{
			func(s *deltaSink) streamDecoder { return &oaStream{sink: s, callIdx: map[int]int{}} },
			func(s *deltaSink) streamDecoder { return &anStream{sink: s, blocks: map[int]*anStreamBlock{}} },
		} {
			calls := 0
			dec := mk(&deltaSink{secret: "sk-fuzz-key", fn: func(d Delta) {
				if d.Kind == DeltaToolCall {
					calls++
				}
			}})
			r := newSSEReader(strings.NewReader(string(data)), 1<<10, 1<<14)
			for {
				ev, err := r.next()
				if err != nil {
					break
				}
				done, err := dec.event(ev)
				if err != nil || !done {
					if err != nil {
						break
					}
					continue
				}
				resp, err := dec.response()
				if err != nil {
					break
				}
				if resp.Message.Role != RoleAssistant || len(resp.Message.ToolCalls) != calls {
					t.Fatalf("response %+v after %d tool-call deltas", resp, calls)
				}
				if len(resp.Message.ToolCalls) > 0 && resp.StopReason == StopEnd {
					t.Fatal("tool calls with stop reason end")
				}
				break
			}
		}
	})
}

// TestStreamDecoderRules: the dialect decoders refuse streams that break
// the event grammar.
func TestStreamDecoderRules(t *testing.T) {
	const (
		start = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\n"
		text0 = "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
		stop  = "data: {\"type\":\"message_stop\"}\n\n"
	)
	tests := []struct {
		name, api, in, want string
	}{
		{"openai no choices", "openai", "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1}}\n\ndata: [DONE]\n\n", "no choices in stream"},
		{"openai bad chunk", "openai", "data: [1,2]\n\n", "decoding chunk"},
		{"openai error chunk", "openai", "data: {\"error\":{\"message\":\"boom\"}}\n\n", "server error: boom"},
		{"anthropic name mismatch", "anthropic", "event: message_stop\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n", `event "message_stop" carries data of type "message_start"`},
		{"anthropic before start", "anthropic", text0, "content_block_start before message_start"},
		{"anthropic start twice", "anthropic", start + start, "bad message_start"},
		{"anthropic delta to unopened block", "anthropic", start + "data: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", "block 3, which is not open"},
		{"anthropic delta type mismatch", "anthropic", start + text0 + "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\n", "input_json_delta for a text block"},
		{"anthropic block started twice", "anthropic", start + text0 + text0, "content block 0 started twice"},
		{"anthropic block never stopped", "anthropic", start + text0 + stop, "content block 0 never stopped"},
		{"anthropic stop of closed block", "anthropic", start + text0 + "data: {\"type\":\"content_block_stop\",\"index\":0}\n\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n", "not open"},
		{"anthropic error event", "anthropic", start + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"x\"}}\n\n", "server error: api_error: x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &deltaSink{fn: func(Delta) {}}
			var dec streamDecoder = &oaStream{sink: sink, callIdx: map[int]int{}}
			if tt.api == "anthropic" {
				dec = &anStream{sink: sink, blocks: map[int]*anStreamBlock{}}
			}
			r := newSSEReader(strings.NewReader(tt.in), 1<<10, 1<<14)
			var err error
			for err == nil {
				var ev sseEvent
				if ev, err = r.next(); err != nil {
					break
				}
				var done bool
				if done, err = dec.event(ev); done {
					_, err = dec.response()
					break
				}
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}

// TestStreamErrorBounded: an error event's text is cut to an excerpt on
// one line.
func TestStreamErrorBounded(t *testing.T) {
	c, err := New(Config{API: APIOpenAI, BaseURL: "http://127.0.0.1:1/v1", Model: "m", Auth: AuthNone}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := c.streamError(&Call{}, 10, errors.New("server error: "+strings.Repeat("long\nline ", 1000)))
	if msg := e.Error(); len(msg) > MaxErrorExcerpt+200 || strings.Contains(msg, "\n") {
		t.Fatalf("error of %d bytes: %.200q", len(msg), msg)
	}
}

// TestOpenAIStreamReasoning: reasoning_content wins over reasoning, as in
// a plain answer, so a server sending both is not doubled.
func TestOpenAIStreamReasoning(t *testing.T) {
	var got []Delta
	d := &oaStream{sink: &deltaSink{fn: func(x Delta) { got = append(got, x) }}, callIdx: map[int]int{}}
	for _, data := range []string{
		`{"choices":[{"index":0,"delta":{"reasoning_content":"think","reasoning":"think"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`, `[DONE]`,
	} {
		if _, err := d.event(sseEvent{data: []byte(data)}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := d.response()
	if err != nil || resp.Message.Reasoning != "think" || resp.Message.Text() != "ok" || len(got) != 2 || got[0].Kind != DeltaReasoning || got[0].Text != "think" {
		t.Fatalf("resp %+v, deltas %+v, err %v", resp, got, err)
	}
}

// BenchmarkReadStream: the client's cost of reading and assembling an
// openai stream of 400 text events and a tool call (no network).
func BenchmarkReadStream(b *testing.B) {
	var body strings.Builder
	for i := 0; i < 400; i++ {
		body.WriteString(`data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"lorem"},"finish_reason":null}]}` + "\n\n")
	}
	body.WriteString(`data: {"id":"x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},"finish_reason":"tool_calls"}]}` + "\n\n")
	body.WriteString(`data: {"id":"x","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":400}}` + "\n\ndata: [DONE]\n\n")
	data := body.String()
	c, err := New(Config{API: APIOpenAI, BaseURL: "http://127.0.0.1:1/v1", Model: "m", Auth: AuthBearer, Key: "sk-bench-key-0123456789"}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		resp, _, err := c.readStream(context.Background(), strings.NewReader(data), func(Delta) {}, &Call{}, time.Now())
		if err != nil || len(resp.Message.ToolCalls) != 1 {
			b.Fatal(err)
		}
	}
}
