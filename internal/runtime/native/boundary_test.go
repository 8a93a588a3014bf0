package native

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
)

// The runner hands the native runtime its settings through RunInput only
// (runtime boundary): the result schema as RunInput.ResultSchema, and the
// same resume option on every iteration of a resumed run.

// TestResultSchemaFromRunInput: RunInput.ResultSchema alone makes the
// loop show and check the schema, as the result_schema option does.
func TestResultSchemaFromRunInput(t *testing.T) {
	schemaPath := filepath.Join(t.TempDir(), "result.schema.json")
	writeHostFile(t, schemaPath, `{"type":"object","properties":{"status":{"enum":["ok","failed"]}},"required":["status"]}`)
	const resultPath = "/sandbox/workspace/result.json"
	h := newHarnessEnv(t, model.APIOpenAI,
		modeltest.Call("w", "write_file", map[string]any{"path": resultPath, "content": `{"status":"maybe"}`}),
		modeltest.Say("result written"))
	in := h.input(nil)
	in.ResultPath, in.ResultSchema = resultPath, schemaPath
	out, err := h.run(context.Background(), in)
	if !strings.Contains(h.srv.Requests()[0].Decoded.System, `"enum":["ok","failed"]`) {
		t.Errorf("schema not in the system prompt")
	}
	if !errors.Is(err, ErrResult) || out == nil || out.ExitCode == 0 {
		t.Fatalf("outcome %+v err %v, want a result that fails the schema", out, err)
	}
}

// TestResumeFirstIterationOnly: with the resume option on every
// iteration, only the first resumes; a later one continues the
// conversation with the validation feedback.
func TestResumeFirstIterationOnly(t *testing.T) {
	h := newHarnessEnv(t, model.APIOpenAI, modeltest.Say("first"), modeltest.Say("second"))
	if _, err := h.run(context.Background(), h.input(nil)); err != nil {
		t.Fatal(err)
	}
	in := h.input(map[string]string{OptResume: "true"})
	in.Iteration, in.Feedback, in.ResultPath = 2, "status is missing", "/sandbox/output/agent-result.json"
	if _, err := h.run(context.Background(), in); err != nil && !errors.Is(err, ErrResult) {
		t.Fatal(err)
	}
	reqs := h.srv.Requests()
	last := reqs[len(reqs)-1].Decoded
	found := false
	for _, m := range last.Messages {
		if strings.Contains(m.Text(), "status is missing") {
			found = true
		}
	}
	if !found {
		t.Errorf("iteration 2 of a resumed run got no validation feedback: %+v", last.Messages)
	}
}
