package chat

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/runtime"
)

// TestTypeAheadQueued: messages for a session whose turn runs wait behind
// it and run in order, each its own turn, none answered with an error;
// past MaxQueued one more is refused; another session is not held up by
// the queue beyond the one-turn-at-a-time rule.
func TestTypeAheadQueued(t *testing.T) {
	var p *pipeServer
	b := &blockingRun{srv: func() *Server { return p.srv }, started: make(chan string, MaxQueued+4), release: make(chan struct{})}
	var texts []string
	p = startServer(t, Options{Run: func(ctx context.Context, in TurnInput) (*runtime.Outcome, error) {
		texts = append(texts, in.Text) // turns run one at a time
		return b.run(ctx, in)
	}})
	p.send(`{"type":"user_message","session":"s1","text":"m0"}`)
	if e := p.next(); e.Type != EnvTurnStart || e.Turn != 1 {
		t.Fatalf("got %+v", e)
	}
	p.next() // the delta
	<-b.started
	for i := 1; i <= MaxQueued; i++ {
		p.send(fmt.Sprintf(`{"type":"user_message","session":"s1","text":"m%d"}`, i))
	}
	p.send(`{"type":"user_message","session":"s1","text":"one too many"}`)
	if e := p.next(); e.Type != EnvError || e.Session != "s1" || !strings.Contains(e.Error, fmt.Sprintf("at most %d", MaxQueued)) {
		t.Fatalf("over the queue bound: %+v", e)
	}
	for i := 0; i <= MaxQueued; i++ {
		go func() { b.release <- struct{}{} }()
		got := p.until(EnvTurnEnd)
		end := got[len(got)-1]
		if end.Turn != i+1 || end.StopReason != runtime.StopCompleted {
			t.Fatalf("turn %d: %+v", i+1, got)
		}
		for _, e := range got {
			if e.Type == EnvError {
				t.Fatalf("turn %d: error envelope %q", i+1, e.Error)
			}
		}
		if i < MaxQueued {
			// The next turn_start follows this turn_end.
			if e := p.next(); e.Type != EnvTurnStart || e.Turn != i+2 || e.Text != fmt.Sprintf("m%d", i+1) {
				t.Fatalf("after turn %d: %+v", i+1, e)
			}
			p.next() // its delta
			<-b.started
		}
	}
	if want := "m0"; texts[0] != want || len(texts) != MaxQueued+1 || texts[MaxQueued] != fmt.Sprintf("m%d", MaxQueued) {
		t.Fatalf("turns ran %v", texts)
	}
	for i, s := range texts {
		if s != fmt.Sprintf("m%d", i) {
			t.Fatalf("turn %d ran %q: out of order %v", i+1, s, texts)
		}
	}
	p.close()
}

// TestSchemaStatesTheQueue: the protocol schema states the queue's bound
// and what cancel does to it, as the server applies them.
func TestSchemaStatesTheQueue(t *testing.T) {
	s := string(Schema)
	if !strings.Contains(s, fmt.Sprintf("at most %d per session, in order", MaxQueued)) || !strings.Contains(s, "cancel stops its turn in flight and drops the user messages queued behind it") {
		t.Fatal("protocol.schema.json does not describe the per-session queue")
	}
}
