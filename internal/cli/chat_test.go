//go:build unix

package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/chat"
	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	runpkg "github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
)

// chatProc is `fullsend chat` running as a subprocess (the test binary
// acting as the CLI); every line it writes is checked against the
// protocol schema.
type chatProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *strings.Builder
}

func startChat(t *testing.T, args ...string) *chatProc {
	t.Helper()
	var err error
	p := &chatProc{t: t, cmd: exec.Command(cliBinary(t), args...), lines: make(chan string, 1024), stderr: &strings.Builder{}}
	p.cmd.Stderr = p.stderr
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	return p
}

func (p *chatProc) send(line string) {
	p.t.Helper()
	if err := chat.ValidateLine(chat.PartRequest, []byte(line)); err != nil {
		p.t.Fatal(err)
	}
	p.sendRaw(line)
}

// sendRaw writes a line, valid or not.
func (p *chatProc) sendRaw(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// until reads envelopes up to and including the first of type typ.
func (p *chatProc) until(typ string) []chat.Envelope {
	p.t.Helper()
	var out []chat.Envelope
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("chat ended before %s; stderr:\n%s", typ, p.stderr.String())
			}
			if err := chat.ValidateLine(chat.PartEnvelope, []byte(line)); err != nil {
				p.t.Fatal(err)
			}
			var e chat.Envelope
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				p.t.Fatal(err)
			}
			out = append(out, e)
			if e.Type == typ {
				return out
			}
		case <-timeout:
			p.t.Fatalf("no %s envelope; stderr:\n%s", typ, p.stderr.String())
		}
	}
}

// finish closes stdin and waits for exit 0 with nothing more on stdout.
func (p *chatProc) finish() {
	p.t.Helper()
	p.stdin.Close()
	for line := range p.lines {
		p.t.Errorf("unexpected envelope after EOF: %s", line)
	}
	if err := p.cmd.Wait(); err != nil {
		p.t.Fatalf("chat: %v\nstderr:\n%s", err, p.stderr.String())
	}
}

func kinds(es []chat.Envelope) []string {
	var out []string
	for _, e := range es {
		k := e.Type
		if e.Event != nil {
			k += ":" + e.Event.Kind
		}
		out = append(out, k)
	}
	return out
}

// TestChatSessionSurvivesRestart is the done-when: two turns in
// one session, the process restarted on the same session database,
// history replays both, and a third turn continues the conversation (the
// model receives the earlier messages).
func TestChatSessionSurvivesRestart(t *testing.T) {
	needLocalSandbox(t)
	srv := modeltest.NewFunc(t, model.APIOpenAI, func(i int, r modeltest.Received) modeltest.Step {
		switch i {
		case 0:
			return modeltest.Say("Noted: pineapple.")
		case 1:
			return modeltest.Call("c1", native.ToolBash, map[string]string{"command": "echo chat-tool-ran"})
		case 2:
			return modeltest.Say("The tool ran.")
		default:
			return modeltest.Say("The word was pineapple.")
		}
	})
	setModelEnv(t, model.APIOpenAI, srv.URL+"/v1")
	ws := t.TempDir()
	db := filepath.Join(t.TempDir(), "sessions.db")
	args := []string{"--workspace", ws, "chat", "--session-db", db, "--target-repo", "none", helloHarness}

	p := startChat(t, args...)
	p.send(`{"type":"user_message","session":"s1","text":"Remember the word pineapple."}`)
	t1 := p.until(chat.EnvTurnEnd)
	end := t1[len(t1)-1]
	if end.Turn != 1 || end.StopReason != "completed" || end.Usage.ModelTurns != 1 {
		t.Fatalf("turn 1: %+v\n%v", end, kinds(t1))
	}
	if !hasEvent(t1, "delta", "Noted") || !hasEvent(t1, "text", "Noted: pineapple.") {
		t.Errorf("turn 1 events: %v", kinds(t1))
	}
	p.send(`{"type":"user_message","session":"s1","text":"Run a command."}`)
	t2 := p.until(chat.EnvTurnEnd)
	if end := t2[len(t2)-1]; end.Turn != 2 || end.StopReason != "completed" || end.Usage.ToolCalls != 1 {
		t.Fatalf("turn 2: %+v\n%v", end, kinds(t2))
	}
	if !hasEvent(t2, "tool_call", "echo chat-tool-ran") || !hasEvent(t2, "tool_result", "chat-tool-ran") {
		t.Errorf("turn 2 events: %v", kinds(t2))
	}
	p.sendRaw(`{"type":"bogus","session":"s1"}`)
	if e := p.until(chat.EnvError); !strings.Contains(e[len(e)-1].Error, "bogus") {
		t.Errorf("error envelope: %+v", e)
	}
	p.finish()
	if st, err := os.Stat(db); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("session db: %v", err)
	}

	p = startChat(t, args...)
	p.send(`{"type":"history","session":"s1"}`)
	h := p.until(chat.EnvHistoryEnd)
	hend := h[len(h)-1]
	if *hend.Turns != 2 || *hend.Dropped != 0 || *hend.Events == 0 {
		t.Fatalf("history end: %+v", hend)
	}
	var starts []string
	for _, e := range h[:len(h)-1] {
		if !e.Replay {
			t.Errorf("history envelope not marked replay: %+v", e)
		}
		if e.Type == chat.EnvTurnStart {
			starts = append(starts, e.Text)
		}
	}
	if strings.Join(starts, "|") != "Remember the word pineapple.|Run a command." || !hasEvent(h, "tool_result", "chat-tool-ran") || !hasEvent(h, "text", "The tool ran.") {
		t.Fatalf("history: %v %v", starts, kinds(h))
	}
	p.send(`{"type":"user_message","session":"s1","text":"Which word?"}`)
	t3 := p.until(chat.EnvTurnEnd)
	t.Logf("turn 3 envelopes: %v", kinds(t3))
	if end := t3[len(t3)-1]; end.Turn != 3 || end.StopReason != "completed" {
		t.Fatalf("turn 3: %+v", end)
	}
	p.finish()

	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("model saw %d requests, want 4", len(reqs))
	}
	var got []string
	for _, m := range reqs[3].Decoded.Messages {
		s := string(m.Role) + ":" + modelText(m)
		for _, c := range m.ToolCalls {
			s += "[call " + c.Name + "]"
		}
		got = append(got, s)
	}
	want := []string{"user:Remember the word pineapple.", "assistant:Noted: pineapple.", "user:Run a command.",
		"assistant:[call bash]", "tool:", "assistant:The tool ran.", "user:Which word?"}
	if len(got) != len(want) {
		t.Fatalf("third turn's messages:\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("message %d: %q, want prefix %q", i, got[i], want[i])
		}
	}
	if reqs[3].Decoded.System != reqs[0].Decoded.System {
		t.Error("the restarted session has another system prompt")
	}
}

// TestChatInterrupted: SIGINT while stdin stays open ends the process
// (exit 130), its sandbox torn down.
func TestChatInterrupted(t *testing.T) {
	needLocalSandbox(t)
	srv := modeltest.NewFunc(t, model.APIOpenAI, func(int, modeltest.Received) modeltest.Step { return modeltest.Say("hi") })
	setModelEnv(t, model.APIOpenAI, srv.URL+"/v1")
	ws := t.TempDir()
	p := startChat(t, "--workspace", ws, "chat", "--target-repo", "none", helloHarness)
	p.send(`{"type":"user_message","session":"s1","text":"hello"}`)
	p.until(chat.EnvTurnEnd)
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Fatalf("exit: %v\nstderr:\n%s", err, p.stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("chat did not stop on SIGINT")
	}
	rep := onlyRun(t, ws)
	if rep.Status != runpkg.StatusCanceled || rep.Events.Turns != 1 {
		t.Errorf("report: status %s turns %d", rep.Status, rep.Events.Turns)
	}
}

func modelText(m model.Message) string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == model.BlockText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

func hasEvent(es []chat.Envelope, kind, text string) bool {
	for _, e := range es {
		if e.Event != nil && e.Event.Kind == kind && strings.Contains(e.Event.Text, text) {
			return true
		}
	}
	return false
}

func TestChatUsage(t *testing.T) {
	for _, args := range [][]string{
		{"chat", "--runtime", "claude", helloHarness},
		{"chat", "--image", "x.png", helloHarness},
		{"chat", "--max-memory-events", "0", helloHarness},
		{"chat", "--session-db", "x.db", "--max-memory-events", "5", helloHarness},
	} {
		code, _, errs := runCLI(t, args...)
		if code != 2 || len(errorLines(errs)) != 1 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.db")
	if err := os.WriteFile(bad, []byte(strings.Repeat("not sqlite\n", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "--workspace", dir, "chat", "--session-db", bad, helloHarness)
	if code != 1 || out != "" || !strings.Contains(oneStderrLine(t, errs), "session database "+bad) {
		t.Errorf("bad db: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
