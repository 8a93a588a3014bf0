package claude

import (
	"os"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/runtime"
)

func FuzzParser(f *testing.F) {
	for _, name := range []string{rec("tool_use"), rec("hook_denied"), rec("max_turns"), rec("api_error"), rec("api_retry")} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var calls, results int
		p := NewParser(func(e runtime.Event) {
			if len(e.Text) > runtime.MaxEventText+64 {
				t.Fatalf("event text of %d bytes", len(e.Text))
			}
			switch e.Kind {
			case runtime.EventToolCall:
				calls++
			case runtime.EventResult:
				results++
			}
		})
		w := &lineWriter{p: p}
		w.Write(data)
		w.Flush()
		out, saw := p.Outcome()
		if out.ToolCalls != calls || out.Turns < 0 {
			t.Fatalf("outcome %+v vs %d tool call events", out, calls)
		}
		if saw != (results > 0) {
			t.Fatalf("sawResult %v with %d result events", saw, results)
		}
	})
}
