package native

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
)

// TestChatContinuesWithEachMessage: the chat option starts the transcript
// with the first message and continues it with each later one (a new
// Runtime, as after a restart), with a fresh turn budget per message and
// images numbered after those already kept.
func TestChatContinuesWithEachMessage(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	h := newHarnessEnv(t, model.APIOpenAI,
		modeltest.Say("one"),
		modeltest.Call("c1", ToolListDir, map[string]string{"path": "."}), modeltest.Say("two"),
		modeltest.Say("three"))
	img := filepath.Join(t.TempDir(), "shot.png")
	writeHostFile(t, img, string(png))
	chat := func(text string, opts map[string]string) {
		t.Helper()
		in := h.input(map[string]string{OptChat: "true", OptMaxTurns: "2"})
		for k, v := range opts {
			in.Options[k] = v
		}
		in.Prompt = text
		out, err := h.run(context.Background(), in)
		if err != nil || out.StopReason != "completed" {
			t.Fatalf("%s: %+v %v", text, out, err)
		}
	}
	chat("first", map[string]string{OptImages: img})
	// Two model turns in this message: the budget of 2 is this message's,
	// not the conversation's (3 turns in all by then).
	chat("second", nil)
	// A new runtime (a restarted process) continues the same transcript.
	h.rt = New(Options{Getenv: func(k string) string { return h.env[k] }, Sleep: h.sleep})
	chat("third", map[string]string{OptImages: img})
	reqs := h.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	var got []string
	for _, m := range reqs[3].Decoded.Messages {
		text := ""
		if m.Role != model.RoleTool && len(m.Content) > 0 {
			text = m.Content[0].Text
		}
		got = append(got, string(m.Role)+":"+text)
	}
	want := "user:first|assistant:one|user:second|assistant:|tool:|assistant:two|user:third"
	if strings.Join(got, "|") != want {
		t.Fatalf("messages:\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	if !strings.Contains(reqs[3].Decoded.Messages[6].Text(), "[attached image 2:") {
		t.Errorf("third message: %s", mustJSON(reqs[3].Decoded.Messages[6]))
	}
	for _, f := range []string{"prompt-1.png", "prompt-2.png"} {
		if _, err := os.Stat(filepath.Join(h.runDir, ImagesDir, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := LoadState(h.runDir); err != nil {
		t.Fatal(err)
	}
}
