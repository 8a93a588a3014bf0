//go:build unix

package cli

import (
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
)

// TestRunNativeResumeEndpointFromConfig: a run recorded against one
// endpoint is resumed against the endpoint the current configuration
// names, never the recorded one, and the report says so in one note.
func TestRunNativeResumeEndpointFromConfig(t *testing.T) {
	needLocalSandbox(t)
	first := modeltest.New(t, model.APIOpenAI,
		modeltest.Call("c1", native.ToolBash, map[string]string{"command": "echo first-attempt"}),
		modeltest.Step{Status: 400, Body: `{"error":{"message":"bad request"}}`},
	)
	setModelEnv(t, model.APIOpenAI, first.URL+"/v1")
	ws := t.TempDir()
	if code, out, errs := runCLI(t, "--workspace", ws, "run", "--runtime", "native", "--target-repo", "none", helloHarness); code != 1 {
		t.Fatalf("first attempt: exit %d\n%s\n%s", code, out, errs)
	}
	id := onlyRun(t, ws).RunID
	seen := len(first.Requests())

	now := modeltest.New(t, model.APIOpenAI,
		modeltest.Call("c2", native.ToolWriteFile, map[string]string{"path": resultInSbox, "content": helloResult}),
		modeltest.Say("done"),
	)
	setModelEnv(t, model.APIOpenAI, now.URL+"/v1")
	code, out, errs := runCLI(t, "--workspace", ws, "run", "--resume", id, "--target-repo", "none", helloHarness)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errs)
	}
	if n := len(first.Requests()); n != seen {
		t.Errorf("the recorded endpoint got %d more request(s)", n-seen)
	}
	if len(now.Requests()) != 2 {
		t.Errorf("the configured endpoint got %d request(s), want 2", len(now.Requests()))
	}
	var notes []string
	for _, n := range onlyRun(t, ws).Notes {
		if strings.Contains(n, "never chooses the endpoint") {
			notes = append(notes, n)
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], first.URL) || !strings.Contains(notes[0], now.URL) {
		t.Errorf("endpoint notes: %q", notes)
	}
	if !strings.Contains(errs, "fullsend: note: resumed conversation: the transcript recorded") {
		t.Errorf("stderr does not name the difference:\n%s", errs)
	}
}
