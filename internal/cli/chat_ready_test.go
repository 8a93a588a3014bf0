//go:build unix

package cli

import (
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/chat"
	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	"github.com/fullsend-ai/fullsend/internal/progress"
	"github.com/fullsend-ai/fullsend/internal/syncbuf"
)

// TestChatAnnouncesReady: once the sandbox is up, chat says on stderr that
// it reads requests, with one to copy.
func TestChatAnnouncesReady(t *testing.T) {
	needLocalSandbox(t)
	srv := modeltest.NewFunc(t, model.APIOpenAI, func(int, modeltest.Received) modeltest.Step { return modeltest.Say("hi") })
	setModelEnv(t, model.APIOpenAI, srv.URL+"/v1")
	p := startChat(t, "--workspace", t.TempDir(), "chat", "--target-repo", "none", helloHarness)
	p.send(`{"type":"user_message","session":"s1","text":"hello"}`)
	p.until(chat.EnvTurnEnd)
	p.finish()
	if !strings.Contains(p.stderr.String(), "\n"+chatReady+"\n") {
		t.Fatalf("stderr lacks the line\n%s\n%s", chatReady, p.stderr.String())
	}
}

// heldWriter: on a terminal, stdout's JSON line starts on a line of its
// own: the status line is erased before it and drawn again after it.
func TestChatStdoutClearsStatusLine(t *testing.T) {
	var term syncbuf.Buffer // stderr and stdout on one terminal
	pr := progress.New(&term, progress.Options{Mode: progress.Live})
	defer pr.Close()
	pr.Event(progress.Event{Kind: progress.PhaseStart, Name: "agent[1]"})
	before := len(term.String())
	if before == 0 {
		t.Fatal("no status line drawn")
	}
	if _, err := (heldWriter{w: &term, hold: pr.Hold}).Write([]byte(`{"type":"turn_end"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	out := term.String()[before:]
	i := strings.Index(out, `{"type":"turn_end"}`)
	if i <= 0 || !strings.Contains(out[:i], "\x1b[2K") {
		t.Fatalf("the JSON line was not preceded by erasing the status line: %q", out)
	}
}
