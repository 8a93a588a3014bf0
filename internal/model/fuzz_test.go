package model

import "testing"

// FuzzDecodeResponse: server bodies never panic the decoders; a decoded
// response is always an assistant message with a normalised stop reason,
// and a failure returns no response.
func FuzzDecodeResponse(f *testing.F) {
	for _, s := range []string{
		`{"id":"x","choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`,
		`{"choices":[{"message":{"content":[{"type":"text","text":"a"}],"tool_calls":[{"id":"1","function":{"name":"bash","arguments":{"c":1}}}]},"finish_reason":"length"}]}`,
		`{"type":"message","content":[{"type":"tool_use","id":"t","name":"n","input":null},{"type":"thinking","thinking":"x"}],"stop_reason":"tool_use"}`,
		`{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`,
		`{"choices":[]}`, `null`, `[]`, `{"content":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, dec := range []func([]byte) (*Response, error){decodeOpenAI, decodeAnthropic} {
			r, err := dec(data)
			if err != nil {
				if r != nil {
					t.Fatalf("error with a response: %v", err)
				}
				continue
			}
			if r.Message.Role != RoleAssistant {
				t.Fatalf("role %q", r.Message.Role)
			}
			switch r.StopReason {
			case StopEnd, StopToolUse, StopMaxTokens, StopOther:
			default:
				t.Fatalf("stop reason %q", r.StopReason)
			}
			if len(r.Message.ToolCalls) > 0 && r.StopReason == StopEnd {
				t.Fatal("tool calls with stop reason end")
			}
		}
	})
}
