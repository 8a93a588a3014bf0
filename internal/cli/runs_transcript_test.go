//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
)

// TestRunsShowTranscript runs the hello example with the native runtime
// against the fake model (a skill read, a command whose output carries
// terminal escape sequences and runs long, the result write, a final
// answer with an escape sequence and a bidi override), then prints the
// conversation with `runs show --transcript latest`: roles, turns with
// token and cache counts, tool calls and results cut to a few lines with
// a pointer to the whole output, and not one raw control or format
// character. The run directory also holds the skill read's provenance.
func TestRunsShowTranscript(t *testing.T) {
	needLocalSandbox(t)
	srv := modeltest.New(t, model.APIAnthropic,
		modeltest.Step{Reply: &modeltest.Reply{Text: "Reading the skill.", ToolCalls: []model.ToolCall{{ID: "c1", Name: native.ToolReadSkillResource,
			Arguments: `{"skill":"greeting","path":"SKILL.md"}`}}, InputTokens: 20, OutputTokens: 7, CacheCreationTokens: 1500}},
		modeltest.Call("c2", native.ToolBash, map[string]string{"command": `printf '\033]0;pwned\007\033[2Jred\n'; seq 1 40`}),
		modeltest.Call("c3", native.ToolWriteFile, map[string]string{"path": resultInSbox, "content": helloResult}),
		modeltest.Step{Reply: &modeltest.Reply{Text: "Done \x1b[31mred\x1b[0m \u202eevil\u202c.\n--- fake header", InputTokens: 30, OutputTokens: 9, CacheReadTokens: 1500}},
	)
	setModelEnv(t, model.APIAnthropic, srv.URL)
	hello := helloAbs(t)
	inGitRepo(t)
	ws := t.TempDir()
	if code, out, errs := runCLI(t, "--workspace", ws, "run", "--runtime", "native", hello); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs := runCLI(t, "--workspace", ws, "runs", "show", "--transcript", "latest")
	if code != 0 {
		t.Fatalf("runs show --transcript: exit %d\n%s\n%s", code, out, errs)
	}
	for _, c := range out {
		if c == 0x1b || c == 0x07 || c == '\u202e' || c == '\u202c' || (c < 0x20 && c != '\n') {
			t.Fatalf("raw control or format character %U in:\n%s", c, out)
		}
	}
	rep := onlyRun(t, ws)
	lines := strings.Split(out, "\n")
	want := []string{
		"transcript of run " + rep.RunID,
		"model:  test-model (anthropic)",
		"tools:  bash, read_file, write_file, edit_file, list_dir, view_image, read_skill_resource",
		"",
		"[user]",
		"",
		"[assistant] turn 1, 1520 input / 7 output tokens (cache: 0 read, 1500 written), stop tool_use",
		"  Reading the skill.",
		`  -> call c1 read_skill_resource {"skill":"greeting","path":"SKILL.md"}`,
		"",
		"[tool result] c1 read_skill_resource, call 1, ",
		"",
		"[assistant] turn 2, 0 input / 10 output tokens, stop tool_use",
		`  -> call c2 bash {"command":"printf '\\033]0;pwned\\007\\033[2Jred\\n'; seq 1 40"}`,
		"",
		"[tool result] c2 bash, call 2, ",
		"   ]0;pwned  [2Jred",
		"  1",
		"  10",
		"  11",
		"  ... ",
		"",
		"[assistant] turn 4, 1530 input / 9 output tokens (cache: 1500 read, 0 written), stop end",
		"  Done  [31mred [0m evil.",
		"  --- fake header",
		"",
		"[stop] completed",
	}
	// Each wanted line appears, in order, as a prefix of a line.
	i := 0
	for _, l := range lines {
		if i < len(want) && strings.HasPrefix(l, want[i]) {
			i++
		}
	}
	if i < len(want) {
		t.Fatalf("transcript lacks (in order) %q:\n%s", want[i], out)
	}
	if !strings.Contains(out, "  ... 87 more bytes (whole output: tool-outputs/2.txt)\n") {
		t.Errorf("the cut tool result does not say what was left out:\n%s", out)
	}
	if strings.Contains(out, "\n  30\n") {
		t.Errorf("tool result not cut:\n%s", out)
	}
	if strings.Contains(out, "\n--- fake header") {
		t.Errorf("model text reached column 0:\n%s", out)
	}
	reads := jsonLines(t, filepath.Join(rep.Dir(), native.SkillReadsFile))
	if len(reads) != 1 || reads[0]["skill"] != "greeting" || reads[0]["path"] != "SKILL.md" || reads[0]["call_id"] != "c1" || len(reads[0]["sha256"].(string)) != 64 {
		t.Errorf("skill-reads.jsonl: %v", reads)
	}

	// The summary shows the cache counts the server reported, summed into
	// report.json.
	if rep.Events.CacheReadInputTokens != 1500 || rep.Events.CacheCreationInputTokens != 1500 || rep.Events.InputTokens != 3050 {
		t.Errorf("report events %+v", rep.Events)
	}
	if code, sum, errs := runCLI(t, "--workspace", ws, "runs", "show", "latest"); code != 0 ||
		!strings.Contains(sum, "\ncache:    1500 input tokens read from the prompt cache, 1500 written to it\n") {
		t.Errorf("runs show: exit %d\n%s\n%s", code, sum, errs)
	}

	// --json and --transcript together: usage error.
	if code, _, errs := runCLI(t, "--workspace", ws, "runs", "show", "--json", "--transcript", "latest"); code != 2 || !strings.Contains(errs, "cannot be combined") {
		t.Errorf("--json --transcript: exit %d, %s", code, errs)
	}
	// A transcript edited after the run is refused, not printed.
	tp := filepath.Join(rep.Dir(), native.TranscriptFile)
	data, err := os.ReadFile(tp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tp, []byte(strings.Replace(string(data), "Reading the skill.", "Reading the skull.", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "--workspace", ws, "runs", "show", "--transcript", "latest")
	if code != 1 || out != "" || !strings.Contains(errs, "transcript.jsonl:") {
		t.Errorf("tampered transcript: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
}

// TestRunsShowTranscriptOtherRuntime: a run of another runtime has no
// native transcript: one error line naming the run and the runtime, exit 1.
func TestRunsShowTranscriptOtherRuntime(t *testing.T) {
	needLocalSandbox(t)
	hello := helloAbs(t)
	inGitRepo(t)
	ws := t.TempDir()
	if code, out, errs := runCLI(t, "--workspace", ws, "run", hello); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs := runCLI(t, "--workspace", ws, "runs", "show", "--transcript", "latest")
	if code != 1 || out != "" || !strings.Contains(errs, `this run used runtime "script"`) {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
}
