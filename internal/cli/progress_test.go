package cli

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// progressLine matches the timestamped progress lines printed on stderr
// when it is not a terminal.
var progressLine = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z fullsend: `)

// errorLines returns the lines of stderr that are not progress lines: the
// error line of a failed command, warnings and notes.
func errorLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		if l != "" && !progressLine.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

var (
	sgrSeq  = regexp.MustCompile(`\x1b\[[0-9;]*m`)
	escOrCR = regexp.MustCompile("[\x1b\r]")
)

// runOnTTY runs the CLI with stderr on the slave side of a new
// pseudo-terminal (stdout and stdin stay plain) and returns the exit code,
// stdout and every byte the terminal received.
func runOnTTY(t *testing.T, getenv map[string]string, args ...string) (int, string, string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 30, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	var term bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(&term, ptmx) // ends with EIO when the slave closes
	}()
	var out bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: tty, Getenv: func(k string) string { return getenv[k] }}
	code := run(context.Background(), env, args)
	tty.Close()
	<-done
	return code, out.String(), term.String()
}

func helloAbs(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(helloHarness)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRunProgressOnTerminal: `fullsend run` with stderr on a terminal
// shows one live status area (redrawn in place: erase-line and
// clear-to-end sequences), the phases as permanent lines, colour, and a
// final summary; stdout (the run summary) has no escape sequence.
func TestRunProgressOnTerminal(t *testing.T) {
	needLocalSandbox(t)
	hello := helloAbs(t)
	inGitRepo(t)
	code, out, term := runOnTTY(t, nil, "--workspace", t.TempDir(), "run", hello)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nterminal:\n%q", code, out, term)
	}
	for _, want := range []string{"\x1b[2K\r", "\x1b[0K", "agent[1]", "fullsend: scan_context", "fullsend: agent[1]", "resolving", "finished in "} {
		if !strings.Contains(term, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, term)
		}
	}
	if !sgrSeq.MatchString(term) {
		t.Errorf("no colour on a terminal without NO_COLOR:\n%q", term)
	}
	// The summary is the last line, after the status line was erased.
	tail := term[strings.LastIndex(term, "\x1b[2K"):]
	if !strings.Contains(tail, "finished in ") || !strings.Contains(tail, "turn(s)") {
		t.Errorf("terminal output does not end with the summary: %q", tail)
	}
	if escOrCR.MatchString(out) || !strings.Contains(out, "  succeeded\n") {
		t.Errorf("stdout:\n%q", out)
	}
}

// TestProgressNoColor: NO_COLOR turns colour off on a terminal; the live
// status area and the summary remain.
func TestProgressNoColor(t *testing.T) {
	code, out, term := runOnTTY(t, map[string]string{"NO_COLOR": "1"}, "--workspace", t.TempDir(), "resolve", helloAbs(t))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%q", code, out, term)
	}
	if sgrSeq.MatchString(term) {
		t.Errorf("colour with NO_COLOR set:\n%q", term)
	}
	for _, want := range []string{"\x1b[0K", "\x1b[2K\rfullsend: resolve ", "resolving", "finished in ", "resource(s)"} {
		if !strings.Contains(term, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, term)
		}
	}
	if !strings.Contains(out, "agent: agents/hello.md") {
		t.Errorf("stdout:\n%s", out)
	}
}

// TestRunProgressInAPipe: not on a terminal, progress is plain timestamped
// lines, one per phase start and end and per agent turn and tool call,
// without any escape sequence or carriage return.
func TestRunProgressInAPipe(t *testing.T) {
	needLocalSandbox(t)
	hello := helloAbs(t)
	inGitRepo(t)
	code, out, errs := runCLI(t, "--workspace", t.TempDir(), "run", hello)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if escOrCR.MatchString(errs) || sgrSeq.MatchString(errs) {
		t.Errorf("escape sequences in a pipe: %q", errs)
	}
	for _, l := range errorLines(errs) {
		if !strings.HasPrefix(l, "fullsend: warning: ") && !strings.HasPrefix(l, "fullsend: note: ") {
			t.Errorf("stderr line neither progress nor warning nor note: %q", l)
		}
	}
	var bodies []string
	for _, l := range strings.Split(errs, "\n") {
		if progressLine.MatchString(l) {
			bodies = append(bodies, l[len("2006-01-02T15:04:05.000Z "):])
		}
	}
	all := strings.Join(bodies, "\n")
	for _, want := range []string{"fullsend: resolve: started", "fullsend: host_scan: started", "fullsend: scan_context   ok ",
		"fullsend: agent[1]: started", "fullsend: agent[1]: turn 1", "fullsend: agent[1]: tool exec: printf", "fullsend: teardown       ok "} {
		if !strings.Contains(all, want) {
			t.Errorf("progress lacks %q:\n%s", want, all)
		}
	}
}

// TestQuietAndVerbose: --quiet leaves only warnings on stderr, --verbose
// adds lines, and the two together are a usage error.
func TestQuietAndVerbose(t *testing.T) {
	ws := t.TempDir()
	code, _, quiet := runCLI(t, "--workspace", ws, "-q", "resolve", helloAbs(t))
	if code != 0 {
		t.Fatalf("quiet: exit %d %s", code, quiet)
	}
	for _, l := range strings.Split(strings.TrimSpace(quiet), "\n") {
		if l != "" && !strings.HasPrefix(l, "fullsend: warning: ") {
			t.Errorf("--quiet printed %q", l)
		}
	}
	_, _, normal := runCLI(t, "--workspace", ws, "resolve", helloAbs(t))
	code, _, verbose := runCLI(t, "--workspace", ws, "--verbose", "resolve", helloAbs(t))
	if code != 0 || !strings.Contains(verbose, "fullsend: resource ") || strings.Contains(normal, "fullsend: resource ") {
		t.Errorf("--verbose: exit %d\nnormal:\n%s\nverbose:\n%s", code, normal, verbose)
	}
	code, _, errs := runCLI(t, "-q", "-v", "resolve", helloAbs(t))
	if code != ExitUsage || !strings.Contains(oneStderrLine(t, errs), "--quiet and --verbose") {
		t.Errorf("-q -v: exit %d %q", code, errs)
	}
}
