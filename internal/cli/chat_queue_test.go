//go:build unix

package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/chat"
	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
)

// TestChatTypeAhead: a client pipes three messages for one session while
// the first turn is still waiting for the model. None is refused: they
// run as turns 1, 2, 3 in order, and each turn's model request carries the
// earlier messages and answers in order.
func TestChatTypeAhead(t *testing.T) {
	needLocalSandbox(t)
	gate := make(chan struct{})
	srv := modeltest.NewFunc(t, model.APIOpenAI, func(i int, _ modeltest.Received) modeltest.Step {
		if i == 0 {
			<-gate // hold turn 1 until every message was sent
		}
		return modeltest.Say(fmt.Sprintf("answer %d.", i+1))
	})
	setModelEnv(t, model.APIOpenAI, srv.URL+"/v1")
	p := startChat(t, "--workspace", t.TempDir(), "chat", "--target-repo", "none", helloHarness)
	for i := 1; i <= 3; i++ {
		p.send(fmt.Sprintf(`{"type":"user_message","session":"s1","text":"message %d"}`, i))
	}
	first := p.until(chat.EnvTurnStart) // turn 1 began; 2 and 3 are read while it runs
	close(gate)
	for i := 1; i <= 3; i++ {
		got := p.until(chat.EnvTurnEnd)
		if i == 1 {
			got = append(first, got...)
		}
		for _, e := range got {
			if e.Type == chat.EnvError {
				t.Fatalf("turn %d: error envelope %q", i, e.Error)
			}
			if e.Type == chat.EnvTurnStart && (e.Turn != i || e.Text != fmt.Sprintf("message %d", i)) {
				t.Fatalf("turn_start %+v, want turn %d", e, i)
			}
		}
		if end := got[len(got)-1]; end.Turn != i || end.StopReason != "completed" || !hasEvent(got, "text", fmt.Sprintf("answer %d.", i)) {
			t.Fatalf("turn %d: %+v\n%v", i, end, kinds(got))
		}
	}
	p.finish()
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("model saw %d requests, want 3", len(reqs))
	}
	var got []string
	for _, m := range reqs[2].Decoded.Messages {
		got = append(got, string(m.Role)+":"+modelText(m))
	}
	want := "user:message 1|assistant:answer 1.|user:message 2|assistant:answer 2.|user:message 3"
	if strings.Join(got, "|") != want {
		t.Fatalf("third turn's messages:\n%s\nwant %s", strings.Join(got, "|"), want)
	}
}
