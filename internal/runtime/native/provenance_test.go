package native

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	"github.com/fullsend-ai/fullsend/internal/runtime"
)

func readJSONL[T any](t *testing.T, p string) []T {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var v T
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("%s: line %q: %v", filepath.Base(p), line, err)
		}
		out = append(out, v)
	}
	return out
}

func fileSHA(t *testing.T, p string) (string, int) {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), len(data)
}

// TestSkillProvenance: a native run against the fake model that reads two
// skill files and runs a skill script (then, after the sandbox copy is
// tampered with, is refused the same script) records each read in
// skill-reads.jsonl and each run in skill-scripts.jsonl: skill, file,
// digest of the bytes read or run, turn, tool call, and for scripts the
// arguments, exit code and duration.
func TestSkillProvenance(t *testing.T) {
	for _, api := range dialects {
		t.Run(string(api), func(t *testing.T) {
			h := newHarnessEnv(t, api,
				modeltest.Call("r1", "read_skill_resource", map[string]any{"skill": "demo", "path": "SKILL.md"}),
				modeltest.Call("r2", "read_skill_resource", map[string]any{"skill": "demo", "path": "reference.md"}),
				modeltest.Call("x1", "run_skill_script", map[string]any{"script": "demo:scripts/hello.sh", "args": []string{"world"}}),
				modeltest.Call("b1", "bash", map[string]any{"command": "exit 0"}),
				modeltest.Call("x2", "run_skill_script", map[string]any{"script": "demo:scripts/hello.sh"}),
				modeltest.Say("ok"),
			)
			in := h.input(nil)
			in.Events = func(e runtime.Event) {
				if e.Kind == runtime.EventToolResult && e.ID == "b1" {
					h.sess.WriteFile(t, runtime.ClaudeConfigDir+"/skills/demo/scripts/hello.sh", []byte("#!/bin/sh\necho pwned\n"))
				}
			}
			if _, err := h.run(context.Background(), in); err != nil {
				t.Fatal(err)
			}
			reads := readJSONL[SkillRead](t, filepath.Join(h.runDir, SkillReadsFile))
			for i := range reads {
				if reads[i].Time.IsZero() {
					t.Fatalf("read %d without a time", i)
				}
				reads[i].Time = time.Time{} // only its presence is checked
			}
			mdSHA, mdSize := fileSHA(t, filepath.Join(h.skill, "SKILL.md"))
			refSHA, refSize := fileSHA(t, filepath.Join(h.skill, "reference.md"))
			md := SkillRead{Turn: 1, ToolCall: 1, CallID: "r1", Skill: "demo", Source: "harness", Path: "SKILL.md", SHA256: mdSHA, Size: mdSize}
			ref := SkillRead{Turn: 2, ToolCall: 2, CallID: "r2", Skill: "demo", Source: "harness", Path: "reference.md", SHA256: refSHA, Size: refSize}
			if want := []SkillRead{md, ref}; !reflect.DeepEqual(reads, want) {
				t.Fatalf("skill-reads.jsonl\n got %+v\nwant %+v", reads, want)
			}

			runs := readJSONL[SkillScriptRun](t, filepath.Join(h.runDir, SkillScriptsFile))
			if len(runs) != 2 {
				t.Fatalf("skill-scripts.jsonl: %+v", runs)
			}
			ok, bad := runs[0], runs[1]
			scriptSHA, _ := fileSHA(t, filepath.Join(h.skill, "scripts/hello.sh"))
			if ok.Turn != 3 || ok.ToolCall != 3 || ok.CallID != "x1" || ok.Skill != "demo" || ok.Path != "scripts/hello.sh" ||
				ok.SHA256 != scriptSHA || !reflect.DeepEqual(ok.Args, []string{"world"}) ||
				ok.ExitCode != 0 || ok.Error != "" || ok.DurationMS <= 0 || ok.Time.IsZero() {
				t.Fatalf("script run %+v", ok)
			}
			tampered := sha256.Sum256([]byte("#!/bin/sh\necho pwned\n"))
			if bad.Turn != 5 || bad.ToolCall != 5 || bad.CallID != "x2" || bad.SHA256 != hex.EncodeToString(tampered[:]) ||
				bad.ExitCode != -1 || !strings.Contains(bad.Error, "does not match the resolved skill") {
				t.Fatalf("refused run %+v", bad)
			}
		})
	}
}

// TestSkillProvenanceFailsClosed: when the read cannot be put on record,
// the model gets an error and not the file.
func TestSkillProvenanceFailsClosed(t *testing.T) {
	h := newHarnessEnv(t, dialects[0],
		modeltest.Call("r1", "read_skill_resource", map[string]any{"skill": "demo", "path": "SKILL.md"}),
		modeltest.Say("ok"),
	)
	if err := os.MkdirAll(filepath.Join(h.runDir, SkillReadsFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := h.run(context.Background(), h.input(nil)); err != nil {
		t.Fatal(err)
	}
	txt, _ := toolResultOf(t, h.srv, 1, "r1")
	if !strings.Contains(txt, "recording the read in skill-reads.jsonl") || strings.Contains(txt, "Run scripts/hello.sh.") {
		t.Fatalf("tool result %q", txt)
	}
}
