package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/runtime/runtimetest"
)

// Issue 26 item 5: the verdict contract, as for every runtime. The CLI's
// real output (recorded from 2.1.330) holds a PreToolUse block (SSRF) and
// a canary read; its result line gets one more permission denial that no
// hook answered (Claude Code's own permission rule).
func TestVerdictContract(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	must(t, f.rt.Bootstrap(ctx, f.s, f.boot))
	data, err := os.ReadFile(filepath.Join(f.testdata, rec("hook_denied")))
	must(t, err)
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	denied := false
	for i, l := range lines {
		var m map[string]any
		if json.Unmarshal(l, &m) != nil || m["type"] != "result" {
			continue
		}
		ds, _ := m["permission_denials"].([]any)
		m["permission_denials"] = append(ds, map[string]any{"tool_name": "Write", "tool_use_id": "toolu_denied",
			"tool_input": map[string]any{"file_path": "/etc/cron.d/x", "content": "x"}})
		if lines[i], err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
		denied = true
	}
	if !denied {
		t.Fatal("the recording has no result line")
	}
	recording := filepath.Join(t.TempDir(), "verdicts.jsonl")
	must(t, os.WriteFile(recording, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644))
	rr := &recorder{}
	if _, err := f.rt.Run(ctx, f.s, f.input(recording, rr, nil)); err != nil {
		t.Fatal(err)
	}
	runtimetest.CheckVerdicts(t, rr.events, []runtimetest.Stop{
		{Kind: runtimetest.StopBlock, ID: "toolu_ssrf"}, {Kind: runtimetest.StopDenial, ID: "toolu_denied"}, {Kind: runtimetest.StopCanary, ID: "toolu_canary"},
	})
}
