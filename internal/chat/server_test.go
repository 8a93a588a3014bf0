package chat

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
	"github.com/fullsend-ai/fullsend/internal/syncbuf"
)

// pipeServer runs a Server on an in-memory pipe: send writes request
// lines, next reads envelopes (each validated against the schema).
type pipeServer struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan []byte
	done  chan error
	srv   *Server
}

func startServer(t *testing.T, o Options) *pipeServer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &pipeServer{t: t, in: inW, lines: make(chan []byte, 64), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			p.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(p.lines)
	}()
	if o.Store == nil {
		o.Store = NewMemoryStore(0)
	}
	p.srv = NewServer(o)
	go func() {
		err := p.srv.Serve(context.Background(), inR, outW)
		outW.Close()
		p.done <- err
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return p
}

func (p *pipeServer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

func (p *pipeServer) next() Envelope {
	p.t.Helper()
	var line []byte
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatal("no envelope: the server ended")
		}
		line = l
	case <-time.After(10 * time.Second):
		p.t.Fatal("no envelope within 10s")
	}
	if err := ValidateLine(PartEnvelope, line); err != nil {
		p.t.Fatal(err)
	}
	var e Envelope
	if err := json.Unmarshal(line, &e); err != nil {
		p.t.Fatalf("envelope %s: %v", line, err)
	}
	return e
}

// until reads envelopes up to and including the first of type typ.
func (p *pipeServer) until(typ string) []Envelope {
	p.t.Helper()
	var out []Envelope
	for {
		e := p.next()
		out = append(out, e)
		if e.Type == typ {
			return out
		}
	}
}

func (p *pipeServer) close() {
	p.t.Helper()
	p.in.Close()
	for line := range p.lines {
		p.t.Errorf("unexpected envelope after EOF: %s", line)
	}
	if err := <-p.done; err != nil {
		p.t.Fatal(err)
	}
}

// echoRun answers each turn with a text event naming the message.
func echoRun(_ context.Context, t TurnInput) (*runtime.Outcome, error) {
	t.Emit(runtime.Event{Time: time.Now(), Kind: runtime.EventText, Text: "echo: " + t.Text, Turn: 1})
	return &runtime.Outcome{StopReason: runtime.StopCompleted, Turns: 1, InputTokens: 10, OutputTokens: 3}, nil
}

func TestMalformedLinesAnsweredAndStreamGoesOn(t *testing.T) {
	p := startServer(t, Options{Run: echoRun})
	for _, tc := range []struct{ line, want string }{
		{`{not json`, "malformed request"},
		{`{"type":"frobnicate","session":"s1"}`, `unknown request type "frobnicate"`},
		{`{"session":"s1"}`, "no type"},
		{`{"type":"user_message","session":"s1","text":""}`, "empty text"},
		{`{"type":"user_message","session":"../x","text":"hi"}`, `session "../x"`},
		{`{"type":"history","session":"s1","extra":1}`, "unknown field"},
		{`{"type":"history","session":"s1"} {"type":"history","session":"s1"}`, "more than one JSON value"},
		{`{"type":"cancel","session":"s1"}`, "no turn in flight"},
		{`{"type":"user_message","session":"s1","text":"hi","images":["a.png"]}`, "images are not accepted"},
	} {
		p.send(tc.line)
		e := p.next()
		if e.Type != EnvError || !strings.Contains(e.Error, tc.want) {
			t.Errorf("%s: got %+v, want error containing %q", tc.line, e, tc.want)
		}
	}
	p.send("")
	p.send(`{"type":"user_message","session":"s1","text":"hello"}`)
	got := p.until(EnvTurnEnd)
	if len(got) != 3 || got[0].Type != EnvTurnStart || got[0].Text != "hello" || got[1].Event.Text != "echo: hello" ||
		got[2].StopReason != runtime.StopCompleted || got[2].Turn != 1 || got[2].Usage.OutputTokens != 3 {
		t.Fatalf("turn: %+v", got)
	}
	p.close()
}

func TestLineTooLong(t *testing.T) {
	p := startServer(t, Options{Run: echoRun})
	go func() {
		p.send(`{"type":"history","session":"s1","x":"` + strings.Repeat("a", MaxLine+10) + `"}`)
		p.send(`{"type":"history","session":"s1"}`)
	}()
	if e := p.next(); e.Type != EnvError || !strings.Contains(e.Error, "longer than") {
		t.Fatalf("got %+v", e)
	}
	if e := p.next(); e.Type != EnvHistoryEnd || *e.Turns != 0 {
		t.Fatalf("got %+v", e)
	}
	p.close()
}

// blockingRun waits for its context (or release) and streams a delta.
type blockingRun struct {
	srv     func() *Server
	started chan string
	release chan struct{}
}

func (b *blockingRun) run(ctx context.Context, t TurnInput) (*runtime.Outcome, error) {
	b.srv().Delta(native.Delta{Delta: model.Delta{Kind: model.DeltaText, Text: "child text"}, Turn: 1, Depth: 1})
	b.srv().Delta(native.Delta{Delta: model.Delta{Kind: model.DeltaText, Text: "thinking"}, Turn: 1})
	b.started <- t.Session
	select {
	case <-ctx.Done():
		return &runtime.Outcome{StopReason: runtime.StopCanceled, Turns: 1}, &runtime.Error{Runtime: "native", Op: "run", Err: ctx.Err()}
	case <-b.release:
		return &runtime.Outcome{StopReason: runtime.StopCompleted, Turns: 1}, nil
	}
}

func TestBusySessionAndCancel(t *testing.T) {
	var p *pipeServer
	b := &blockingRun{srv: func() *Server { return p.srv }, started: make(chan string, 4), release: make(chan struct{})}
	p = startServer(t, Options{Run: b.run})
	p.send(`{"type":"user_message","session":"s1","text":"long task"}`)
	if e := p.next(); e.Type != EnvTurnStart {
		t.Fatalf("got %+v", e)
	}
	if e := p.next(); e.Type != EnvEvent || e.Event.Kind != "delta" || e.Event.Delta != "text" || e.Event.Text != "thinking" {
		t.Fatalf("delta: %+v", e)
	}
	<-b.started
	// A second message for the busy session is queued behind its turn
	// (no envelope yet); cancel drops it, below.
	p.send(`{"type":"user_message","session":"s1","text":"again"}`)
	// Another session waits for its place (turns are serialized) and can
	// be canceled while it waits.
	p.send(`{"type":"user_message","session":"s2","text":"queued"}`)
	if e := p.next(); e.Type != EnvTurnStart || e.Session != "s2" || e.Turn != 1 {
		t.Fatalf("queued: %+v", e)
	}
	p.send(`{"type":"cancel","session":"s2"}`)
	if e := p.next(); e.Type != EnvTurnEnd || e.Session != "s2" || e.StopReason != runtime.StopCanceled {
		t.Fatalf("queued cancel: %+v", e)
	}
	p.send(`{"type":"cancel","session":"s1"}`)
	if e := p.next(); e.Type != EnvError || e.Session != "s1" || !strings.Contains(e.Error, "1 queued user_message(s) of session s1 dropped") {
		t.Fatalf("cancel with a queued message: %+v", e)
	}
	e := p.next()
	if e.Type != EnvTurnEnd || e.Session != "s1" || e.StopReason != runtime.StopCanceled || e.Error != "" {
		t.Fatalf("cancel: %+v", e)
	}
	// The session is free again; history replays the stored turn (the
	// delta was streamed, not stored).
	p.send(`{"type":"history","session":"s1"}`)
	h := p.until(EnvHistoryEnd)
	if len(h) != 3 || h[0].Type != EnvTurnStart || !h[0].Replay || h[1].Type != EnvTurnEnd || h[1].StopReason != runtime.StopCanceled || *h[2].Turns != 1 || *h[2].Events != 0 {
		t.Fatalf("history: %+v", h)
	}
	go func() { b.release <- struct{}{} }()
	p.send(`{"type":"user_message","session":"s1","text":"second"}`)
	got := p.until(EnvTurnEnd)
	if last := got[len(got)-1]; last.Turn != 2 || last.StopReason != runtime.StopCompleted {
		t.Fatalf("second turn: %+v", got)
	}
	<-b.started
	// The canceled queued turn keeps its number.
	go func() { b.release <- struct{}{} }()
	p.send(`{"type":"user_message","session":"s2","text":"again"}`)
	got = p.until(EnvTurnEnd)
	if last := got[len(got)-1]; last.Session != "s2" || last.Turn != 2 {
		t.Fatalf("s2 second turn: %+v", got)
	}
	<-b.started
	p.close()
}

func TestServeStopsWhenContextEnds(t *testing.T) {
	inR, inW := io.Pipe() // input stays open, as a terminal's would
	defer inW.Close()
	started := make(chan struct{})
	srv := NewServer(Options{Store: NewMemoryStore(0), Run: func(ctx context.Context, _ TurnInput) (*runtime.Outcome, error) {
		close(started)
		<-ctx.Done()
		return &runtime.Outcome{StopReason: runtime.StopCanceled}, ctx.Err()
	}})
	ctx, cancel := context.WithCancel(context.Background())
	var out syncbuf.Buffer
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, inR, &out) }()
	go io.WriteString(inW, `{"type":"user_message","session":"s1","text":"hi"}`+"\n")
	<-started
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if got := out.String(); !strings.Contains(got, `"type":"turn_end","session":"s1","turn":1,"stop_reason":"canceled"`) {
		t.Fatalf("output: %s", got)
	}
}

func TestTurnErrorIsReportedAndRedacted(t *testing.T) {
	p := startServer(t, Options{
		Run: func(_ context.Context, t TurnInput) (*runtime.Outcome, error) {
			t.Emit(runtime.Event{Kind: runtime.EventText, Text: "key sk-secret-123 leaked"})
			return &runtime.Outcome{StopReason: runtime.StopError}, errors.New("model said sk-secret-123\nno")
		},
		Redact: func(s string) string { return model.Redact(s, "sk-secret-123") },
	})
	p.send(`{"type":"user_message","session":"s1","text":"my key is sk-secret-123"}`)
	got := p.until(EnvTurnEnd)
	raw, _ := json.Marshal(got)
	if strings.Contains(string(raw), "sk-secret-123") {
		t.Fatalf("key in envelopes: %s", raw)
	}
	if last := got[len(got)-1]; last.StopReason != runtime.StopError || !strings.Contains(last.Error, "model said") || strings.Contains(last.Error, "\n") {
		t.Fatalf("turn_end: %+v", last)
	}
	p.close()
}

func TestEOFWaitsForTurnInFlight(t *testing.T) {
	var mu sync.Mutex
	ran := false
	p := startServer(t, Options{Run: func(ctx context.Context, t TurnInput) (*runtime.Outcome, error) {
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		ran = true
		mu.Unlock()
		return &runtime.Outcome{StopReason: runtime.StopCompleted}, nil
	}})
	p.send(`{"type":"user_message","session":"s1","text":"hi"}`)
	p.in.Close()
	got := p.until(EnvTurnEnd)
	if got[len(got)-1].StopReason != runtime.StopCompleted {
		t.Fatalf("got %+v", got)
	}
	if err := <-p.done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !ran {
		t.Fatal("turn did not finish")
	}
}

func TestSchemaRefusesWhatTheProtocolForbids(t *testing.T) {
	for _, bad := range []string{
		`{"type":"turn_end","session":"s1","turn":1,"usage":{"model_turns":0,"tool_calls":0,"input_tokens":0,"output_tokens":0}}`,
		`{"type":"event","session":"s1","turn":1,"event":{"time":"2026-01-01T00:00:00Z","kind":"delta"}}`,
		`{"type":"error"}`,
		`{"type":"event","session":"../x","turn":1,"event":{"time":"2026-01-01T00:00:00Z","kind":"text"}}`,
	} {
		if ValidateLine(PartEnvelope, []byte(bad)) == nil {
			t.Errorf("schema accepted %s", bad)
		}
	}
	if err := ValidateLine(PartRequest, []byte(`{"type":"user_message","session":"a","text":"x","images":["p.png"]}`)); err != nil {
		t.Error(err)
	}
	if ValidateLine(PartRequest, []byte(`{"type":"cancel","session":"a","text":"x"}`)) == nil {
		t.Error("schema accepted cancel with text")
	}
}

// TestNextMessageRightAfterTurnEnd: a client that sends its next message as
// soon as it reads turn_end finds the session free (the session is released
// before turn_end is written), turn after turn.
func TestNextMessageRightAfterTurnEnd(t *testing.T) {
	p := startServer(t, Options{Run: echoRun})
	for i := 0; i < 200; i++ {
		p.send(`{"type":"user_message","session":"s1","text":"m"}`)
		for _, e := range p.until(EnvTurnEnd) {
			if e.Type == EnvError {
				t.Fatalf("message %d: %s", i+1, e.Error)
			}
		}
	}
	p.close()
}
