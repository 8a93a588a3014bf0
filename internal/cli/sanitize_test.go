package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/fullsend-ai/fullsend/internal/progress"
	runpkg "github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// evilText is what a hostile repository, remote YAML, registry or agent
// puts in a name or a message: OSC (set the title), CSI (colour, clear
// screen), an 8-bit CSI (C1), a bidi override, a zero-width space, a
// carriage return, a bell, NUL, DEL, a line break that starts a CI
// command line.
const evilText = "x\x1b]0;pwned\x07\x1b[31mred\x1b[2J\u009b1;1H\u202eevil\u200b\r\x00\x7f\n::set-output name=x::y"

// assertTerminalSafe fails when out holds a byte a terminal would act on:
// ESC and the other C0 controls but newline and tab, DEL, C1 controls,
// Unicode format characters (bidi overrides, zero-width), invalid UTF-8.
// A printer of single lines must not let a value start a line either.
func assertTerminalSafe(t *testing.T, printer, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s: invalid UTF-8 in %q", printer, out)
	}
	for i, r := range out {
		switch {
		case r == '\n' || r == '\t':
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r):
			t.Errorf("%s: control or format character %U at byte %d of %q", printer, r, i, out)
			return
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "::set-output") {
			t.Errorf("%s: a value started its own line: %q", printer, out)
		}
	}
}

func TestPrintersSanitize(t *testing.T) {
	// The run summary and runs show / runs ls, from a report whose strings
	// came from the harness, the agent and the repository.
	ws := t.TempDir()
	id := "20260101T000000.000Z-abcdef"
	rdir := filepath.Join(runpkg.RunsDir(ws), id)
	if err := os.MkdirAll(rdir, 0o700); err != nil {
		t.Fatal(err)
	}
	js := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	rep := `{"version":1,"run_id":"` + id + `","status":"failed","agent":` + js(evilText) + `,"runtime":` + js(evilText) +
		`,"harness":{"source":` + js(evilText) + `,"sha256":` + js(evilText) + `},"error":` + js(evilText) +
		`,"phases":[{"name":` + js(evilText) + `,"status":"failed","error":` + js(evilText) + `}]` +
		`,"findings":[{"phase":` + js(evilText) + `,"severity":"critical","path":` + js(evilText) + `,"line":1,"rule":` + js(evilText) + `,"message":` + js(evilText) + `}]` +
		`,"notes":[` + js(evilText) + `]}`
	if err := os.WriteFile(filepath.Join(rdir, runpkg.ReportFile), []byte(rep), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "--workspace", ws, "runs", "show", id)
	if code != 0 || strings.Count(stdout, "pwned") < 8 {
		t.Fatalf("runs show: exit %d\n%s%s", code, stdout, stderr)
	}
	assertTerminalSafe(t, "runs show", stdout+stderr)
	code, stdout, stderr = runCLI(t, "--workspace", ws, "runs", "ls")
	if code != 0 || !strings.Contains(stdout, "pwned") {
		t.Fatalf("runs ls: exit %d\n%s%s", code, stdout, stderr)
	}
	assertTerminalSafe(t, "runs ls", stdout+stderr)
	r, err := runpkg.Load(runpkg.RunsDir(ws), id)
	if err != nil {
		t.Fatal(err)
	}
	var sum bytes.Buffer
	writeRunSummary(&sum, r, ws)
	assertTerminalSafe(t, "run summary", sum.String())

	// Progress: events, and notes and warnings through its writer.
	var pb bytes.Buffer
	pr := progress.New(&pb, progress.Options{Mode: progress.Plain, Verbose: true})
	pr.Event(progress.Event{Kind: progress.FetchStart, Name: evilText})
	pr.Event(progress.Event{Kind: progress.FetchEnd, Name: evilText, Err: evilText})
	pr.Event(progress.Event{Kind: progress.ToolCall, Name: evilText, Text: evilText})
	w := pr.Writer()
	_, _ = w.Write([]byte("fullsend: warning: " + strings.ReplaceAll(evilText, "\n", " ") + "\n"))
	_, _ = w.Write([]byte("fullsend: note: " + strings.ReplaceAll(evilText, "\n", " ") + "\n"))
	pr.Close()
	if !strings.Contains(pb.String(), "warning:") {
		t.Fatalf("progress wrote %q", pb.String())
	}
	assertTerminalSafe(t, "progress", pb.String())

	// The error line (Main's error printing) and the validate table: a
	// forge overlay named by the attacker is refused (its error line
	// names the field, clean); a skill directory whose name carries a
	// bidi override and a zero-width space is listed, without them.
	fd := t.TempDir()
	writeFiles(t, fd, map[string]string{
		"agents/a.md":       "---\nname: a\n---\nagent\n",
		"skills/s/SKILL.md": "---\nname: s\ndescription: s\n---\nskill\n",
		"harness/h.yaml":    "agent: agents/a.md\nforge:\n  " + js(strings.ReplaceAll(evilText, "\x00", "")) + ":\n    skills: [skills/s]\n",
		"config.yaml":       "version: \"1\"\n",
	})
	code, stdout, stderr = runCLI(t, "--fullsend-dir", fd, "validate", "harness/h.yaml")
	if code != 1 || !strings.Contains(stderr, "pwned") {
		t.Fatalf("validate, forge name: exit %d\n%s%s", code, stdout, stderr)
	}
	assertTerminalSafe(t, "error line", stdout+stderr)
	writeFiles(t, fd, map[string]string{
		"skills/gnp\u202eexe.md\u200b/SKILL.md": "---\nname: s\ndescription: s\n---\nskill\n",
		"harness/h.yaml":                        "agent: agents/a.md\nskills: [" + js("skills/gnp\u202eexe.md\u200b") + "]\n",
	})
	code, stdout, stderr = runCLI(t, "--fullsend-dir", fd, "validate", "harness/h.yaml")
	if code != 0 || !strings.Contains(stdout, "exe.md") {
		t.Fatalf("validate table: exit %d\n%s%s", code, stdout, stderr)
	}
	assertTerminalSafe(t, "validate table", stdout+stderr)

	// The scan report: a finding in a file named by the attacker.
	var sb bytes.Buffer
	printFindings(&sb, []scan.Finding{{Path: evilText, Line: 1, Column: 1, Severity: scan.Critical, Rule: evilText, Message: evilText, Excerpt: evilText}}, 1, scan.FailClosed, true)
	assertTerminalSafe(t, "scan report", sb.String())
}
