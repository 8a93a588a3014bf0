package progress

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"
)

// fakeClock advances by step on every reading.
type fakeClock struct {
	t    time.Time
	step time.Duration
}

func (c *fakeClock) now() time.Time {
	c.t = c.t.Add(c.step)
	return c.t
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), step: 100 * time.Millisecond}
}

var (
	tsLine = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z fullsend: `)
	anyESC = regexp.MustCompile("[\x1b\r]")
	sgr    = regexp.MustCompile(`\x1b\[[0-9;]*m`)
)

// runSession sends the events of a short run: resolution with one fetch
// and one cached resource, a phase, an agent turn with a tool call and a
// retry.
func runSession(r *Reporter) {
	r.Event(Event{Kind: PhaseStart, Name: "resolve"})
	r.Event(Event{Kind: ResourceAdded, Name: "agents/a.md"})
	r.Event(Event{Kind: ResourceAdded, Name: "https://github.com/o/r/tree/v1/skills/s"})
	r.Event(Event{Kind: ResourceDone, Name: "agents/a.md", CacheHit: true})
	r.Event(Event{Kind: FetchStart, Name: "https://github.com/o/r/tree/v1/skills/s"})
	r.Event(Event{Kind: FetchEnd, Name: "https://github.com/o/r/tree/v1/skills/s", Bytes: 2048, Files: 2, Duration: time.Second})
	r.Event(Event{Kind: ResourceDone, Name: "https://github.com/o/r/tree/v1/skills/s"})
	r.Event(Event{Kind: PhaseEnd, Name: "resolve", Status: "ok", Duration: 1200 * time.Millisecond})
	r.Event(Event{Kind: PhaseStart, Name: "agent[1]"})
	r.Event(Event{Kind: Retry, Name: "model API https://llm.example/v1/chat/completions", Err: "HTTP 503", Attempt: 2, Wait: 8 * time.Second})
	r.Event(Event{Kind: AgentTurn, Turn: 1, InputTokens: 120, OutputTokens: 30})
	r.Event(Event{Kind: ToolCall, Name: "bash", Text: `{"command":"go test ./..."}`})
	r.Event(Event{Kind: Info, Text: "native loop: openai"})
	fmt.Fprintf(r.Writer(), "fullsend: warning: memory: RLIMIT_AS (weaker)\n")
	fmt.Fprintf(r.Writer(), "fullsend: note: a note\n")
	r.Event(Event{Kind: PhaseEnd, Name: "agent[1]", Status: "failed", Duration: 3 * time.Second})
	r.Close()
}

// TestPlainLines: not on a terminal every line worth it is timestamped
// and free of escape sequences and carriage returns; notes and warnings
// pass as they are.
func TestPlainLines(t *testing.T) {
	var out bytes.Buffer
	c := newClock()
	runSession(New(&out, Options{Mode: Plain, Now: c.now}))
	text := out.String()
	if anyESC.MatchString(text) {
		t.Errorf("escape or carriage return in plain output: %q", text)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	want := []string{
		"fullsend: resolve: started",
		"fullsend: fetched https://github.com/o/r/tree/v1/skills/s (2 files, 2048 bytes, 1s)",
		"fullsend: resolve        ok       1200.0 ms",
		"fullsend: agent[1]: started",
		"fullsend: retry: model API https://llm.example/v1/chat/completions: HTTP 503; attempt 2 in 8s",
		"fullsend: agent[1]: turn 1 (120 input / 30 output tokens)",
		"fullsend: agent[1]: tool bash: go test ./...",
		"fullsend: warning: memory: RLIMIT_AS (weaker)",
		"fullsend: note: a note",
		"fullsend: agent[1]       failed   3000.0 ms",
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), text)
	}
	for i, l := range lines {
		body := l
		if !strings.HasPrefix(l, "fullsend: warning:") && !strings.HasPrefix(l, "fullsend: note:") {
			if !tsLine.MatchString(l) {
				t.Errorf("line %d not timestamped: %q", i, l)
				continue
			}
			body = l[len("2030-01-02T03:04:05.000Z "):]
		}
		if !strings.HasPrefix(body, want[i]) {
			t.Errorf("line %d = %q, want %q", i, body, want[i])
		}
	}
	if strings.Contains(text, "finished in") {
		t.Errorf("summary in a log (the timestamps tell the time): %q", text)
	}
}

// TestVerboseAndQuiet: verbose adds cache hits, fetch starts and notices;
// quiet prints only warnings.
func TestVerboseAndQuiet(t *testing.T) {
	var out bytes.Buffer
	runSession(New(&out, Options{Mode: Plain, Verbose: true, Now: newClock().now}))
	for _, want := range []string{"fullsend: cached agents/a.md", "fullsend: fetching https://github.com/o/r/tree/v1/skills/s", "fullsend: agent[1]: native loop: openai", "fullsend: resource agents/a.md"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("verbose output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	runSession(New(&out, Options{Mode: Quiet, Now: newClock().now}))
	if got := out.String(); got != "fullsend: warning: memory: RLIMIT_AS (weaker)\n" {
		t.Errorf("quiet output %q, want only the warning", got)
	}
}

// TestStatusLine: the status line says what is going on: resources done
// of the total, bytes, the slowest fetch in flight; then the phase, its
// time, the turn, the last tool call and a pending retry.
func TestStatusLine(t *testing.T) {
	c := newClock()
	r := New(io.Discard, Options{Mode: Plain, Now: c.now})
	r.Event(Event{Kind: PhaseStart, Name: "resolve"})
	for _, n := range []string{"a", "https://slow.example/x", "https://fast.example/y"} {
		r.Event(Event{Kind: ResourceAdded, Name: n})
	}
	r.Event(Event{Kind: ResourceDone, Name: "a"})
	r.Event(Event{Kind: FetchStart, Name: "https://slow.example/x"})
	r.Event(Event{Kind: FetchStart, Name: "https://fast.example/y"})
	r.Event(Event{Kind: FetchEnd, Name: "https://fast.example/y", Bytes: 3 << 20})
	s := r.Status()
	for _, want := range []string{"resolving 1/3", "3.0 MiB", "slowest https://slow.example/x"} {
		if !strings.Contains(s, want) {
			t.Errorf("status %q lacks %q", s, want)
		}
	}
	r.Event(Event{Kind: PhaseEnd, Name: "resolve"})
	r.Event(Event{Kind: PhaseStart, Name: "agent[2]"})
	r.Event(Event{Kind: AgentTurn, Turn: 7})
	r.Event(Event{Kind: ToolCall, Name: "read_file", Text: `{"path":"/sandbox/workspace/x.go"}`})
	r.Event(Event{Kind: Retry, Name: "model API", Attempt: 3, Wait: time.Minute})
	s = r.Status()
	for _, want := range []string{"agent[2] ", "turn 7", "read_file: /sandbox/workspace/x.go", "retrying model API (attempt 3) in "} {
		if !strings.Contains(s, want) {
			t.Errorf("status %q lacks %q", s, want)
		}
	}
	if strings.Contains(s, "resolving") {
		t.Errorf("status %q still shows the resolution", s)
	}
}

// TestSanitize: what an agent or a server chose cannot move the cursor,
// recolour the terminal or start a line of its own.
func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                           "plain",
		"a\x1b[2Jb":                       "a [2Jb",
		"line\n::set-output name=x::1":    "line ::set-output name=x::1",
		"cr\roverwrite":                   "cr overwrite",
		"bidi\u202egnp.exe":               "bidignp.exe",
		"zero\u200bwidth\U000E0041":       "zerowidth",
		"c1\u009b31m":                     "c1 31m",
		"bad\xffutf8":                     "bad\uFFFDutf8",
		"tab\there":                       "tab here",
		"ünïcödé ok":                      "ünïcödé ok",
		"del\x7f":                         "del ",
		"\x1b]0;title\x07after":           " ]0;title after",
		"emoji 👍 stays":                   "emoji 👍 stays",
		"quote \"and\" 'apostrophe' kept": "quote \"and\" 'apostrophe' kept",
	} {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
	// Through a reporter: a hostile tool call reaches the output clean.
	var out bytes.Buffer
	r := New(&out, Options{Mode: Plain, Now: newClock().now})
	r.Event(Event{Kind: ToolCall, Name: "bash\x1b[31m", Text: "{\"command\":\"echo hi\\n\\u001b[2J::error::pwned\"}"})
	r.Close()
	if anyESC.MatchString(out.String()) || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("hostile tool call leaked control characters: %q", out.String())
	}
}

func TestToolSummary(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"bash", `{"command": "ls -la\n  /tmp"}`, "bash: ls -la /tmp"},
		{"write_file", `{"path": "a.txt", "content": "x"}`, "write_file: a.txt"},
		{"Read", `{"file_path":"/x/y.md"}`, "Read: /x/y.md"},
		{"op", `not json`, "op: not json"},
		{"op", ``, "op"},
		{"bash", `{"command":"` + strings.Repeat("x", 200) + `"}`, "bash: " + strings.Repeat("x", 33) + "…"},
	} {
		if got := ToolSummary(tc.name, tc.in, 40); got != tc.want {
			t.Errorf("ToolSummary(%q, %q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

// TestLiveNotTerminalWriter: Live mode on a writer that is not a terminal
// still erases the status line before each permanent line (the bytes are
// what a terminal would get), and nothing is drawn after Close.
func TestLiveErasesBeforeLines(t *testing.T) {
	var out bytes.Buffer
	r := New(&out, Options{Mode: Live, Width: 60, Tick: -1, Now: newClock().now})
	r.Event(Event{Kind: PhaseStart, Name: "host_scan"})
	fmt.Fprintf(r.Writer(), "fullsend: warning: w\n")
	r.Event(Event{Kind: PhaseEnd, Name: "host_scan"})
	r.Close()
	r.Event(Event{Kind: PhaseStart, Name: "late"})
	text := out.String()
	for _, want := range []string{"\x1b[2K\rfullsend: warning: w\n", "\x1b[2K\rfullsend: host_scan ", "\x1b[0K"} {
		if !strings.Contains(text, want) {
			t.Errorf("live output lacks %q: %q", want, text)
		}
	}
	if strings.Contains(text, "late") {
		t.Errorf("event after Close drawn: %q", text)
	}
	if !strings.HasSuffix(text, "\n") || !strings.Contains(text[strings.LastIndex(strings.TrimSuffix(text, "\n"), "\n")+1:], "fullsend: finished in ") {
		t.Errorf("output does not end with the summary: %q", text)
	}
	// Every status line fits the width: nothing wraps.
	for _, seg := range strings.Split(text, "\r") {
		seg = strings.TrimSuffix(strings.SplitN(seg, "\x1b[0K", 2)[0], "\n")
		if strings.HasPrefix(seg, "fullsend:") {
			continue
		}
		if n := len([]rune(sgr.ReplaceAllString(seg, ""))); n > 60 {
			t.Errorf("status line of %d runes on a 60-column terminal: %q", n, seg)
		}
	}
}

// Ctrl-C: Interrupt erases the status line at once (the terminal echoed
// "^C" at its end) and keeps it off while teardown goes on; notes still
// print and Close still prints the summary, each on a clean line.
func TestInterruptErasesStatusLine(t *testing.T) {
	var out bytes.Buffer
	r := New(&out, Options{Mode: Live, Width: 60, Tick: -1, Now: newClock().now})
	r.Event(Event{Kind: PhaseStart, Name: "agent"})
	before := out.Len()
	r.Interrupt()
	if !strings.Contains(out.String()[before:], "\x1b[2K") {
		t.Fatalf("Interrupt did not erase the line: %q", out.String()[before:])
	}
	after := out.Len()
	r.Event(Event{Kind: PhaseEnd, Name: "agent"})
	r.Event(Event{Kind: PhaseStart, Name: "teardown"})
	fmt.Fprintf(r.Writer(), "fullsend: note: n\n")
	mid := out.String()[after:]
	if strings.Contains(mid, "teardown") {
		t.Errorf("status line redrawn after Interrupt: %q", mid)
	}
	if !strings.Contains(mid, "fullsend: note: n\n") {
		t.Errorf("note lost after Interrupt: %q", mid)
	}
	r.Interrupt() // twice is fine
	r.Close()
	if !strings.Contains(out.String()[after:], "fullsend: finished in ") {
		t.Errorf("no summary after Interrupt: %q", out.String()[after:])
	}
	n := out.Len()
	r.Interrupt() // after Close: nothing
	if out.Len() != n {
		t.Errorf("Interrupt after Close wrote %q", out.String()[n:])
	}
}
