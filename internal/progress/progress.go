package progress

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fullsend-ai/fullsend/internal/termsafe"
)

// Kind classifies an Event.
type Kind int

const (
	// PhaseStart: Name is the phase ("resolve", "host_scan", "agent[1]", …).
	PhaseStart Kind = iota + 1
	// PhaseEnd: Name, Status ("ok" or "failed"), Duration.
	PhaseEnd
	// ResourceAdded: one more resource joined the graph (Name: its
	// reference); the total grows.
	ResourceAdded
	// ResourceDone: a resource of the graph is materialised (Name; CacheHit
	// when it came from the cache).
	ResourceDone
	// FetchStart: a network fetch began (Name: the URL).
	FetchStart
	// FetchEnd: a network fetch ended (Name, Bytes, Files for a directory,
	// Duration; Err when it failed).
	FetchEnd
	// AgentTurn: the model produced turn Turn (InputTokens, OutputTokens
	// when known).
	AgentTurn
	// ToolCall: the agent called tool Name with input Text.
	ToolCall
	// Retry: Name (e.g. "model API https://…") failed with Err and is tried
	// again (attempt Attempt) after Wait.
	Retry
	// Info: a runtime notice (Text); shown with Verbose.
	Info
)

// Event is one thing worth showing. Only the fields its Kind documents are
// read. Name, Text and Err may come from untrusted sources: they are
// sanitised before display.
type Event struct {
	Kind                      Kind
	Name                      string
	Text                      string
	Status                    string
	Err                       string
	Bytes                     int64
	Files                     int
	Turn                      int
	Attempt                   int
	InputTokens, OutputTokens int64
	Duration                  time.Duration
	Wait                      time.Duration
	CacheHit                  bool
}

// Sink receives events. Implementations are safe for concurrent use.
type Sink interface {
	Event(Event)
}

// Emit sends e to s when s is not nil.
func Emit(s Sink, e Event) {
	if s != nil {
		s.Event(e)
	}
}

// Mode is how a Reporter renders.
type Mode int

const (
	Plain Mode = iota // timestamped lines, no escape sequences
	Live              // a status line redrawn in place on a terminal
	Quiet             // nothing but warnings
)

// Options configure a Reporter.
type Options struct {
	Mode    Mode
	Verbose bool
	// Color allows colour in Live mode (the caller clears it for NO_COLOR).
	Color bool
	// Width is the terminal width for Live mode; 0 asks the terminal (80
	// when it cannot say).
	Width int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Tick is the redraw interval of the status line in Live mode
	// (default 250 ms); negative: no redraw between events.
	Tick time.Duration
}

// Reporter renders events for one command. It is safe for concurrent use.
type Reporter struct {
	w   io.Writer
	o   Options
	now func() time.Time

	mu          sync.Mutex
	closed      bool
	started     bool
	start       time.Time
	live        *liveLine
	held        int    // Hold calls not released: the status line stays off
	interrupted bool   // Interrupt was called: the status line stays off for good
	partial     []byte // Writer: an incomplete line

	// state shown in the status line and the summary
	phase      string
	phaseStart time.Time
	total      int
	done       int
	fetched    int
	bytes      int64
	inflight   map[string]time.Time
	turn       int
	lastTool   string
	retry      string
	retryUntil time.Time
	turns      int
	tools      int
}

// New returns a Reporter writing to w.
func New(w io.Writer, o Options) *Reporter {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Tick == 0 {
		o.Tick = 250 * time.Millisecond
	}
	return &Reporter{w: w, o: o, now: o.Now, inflight: map[string]time.Time{}}
}

// Mode returns the rendering mode.
func (r *Reporter) Mode() Mode { return r.o.Mode }

// Event implements Sink.
func (r *Reporter) Event(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.o.Mode == Quiet {
		return
	}
	now := r.now()
	if !r.started {
		r.started, r.start = true, now
	}
	line := r.apply(e, now)
	if line != "" {
		r.printLine(line, now)
	}
	r.redraw(now)
}

// apply updates the state with e and returns the permanent line it is
// worth in the current mode ("" for none).
func (r *Reporter) apply(e Event, now time.Time) string {
	v, plain := r.o.Verbose, r.o.Mode == Plain
	name := Sanitize(e.Name)
	switch e.Kind {
	case PhaseStart:
		r.phase, r.phaseStart = name, now
		r.turn, r.lastTool, r.retry = 0, "", ""
		if plain {
			return fmt.Sprintf("%s: started", name)
		}
	case PhaseEnd:
		status := e.Status
		if status == "" {
			status = "ok"
		}
		if r.phase == name {
			r.phase, r.retry = "", ""
		}
		return fmt.Sprintf("%-14s %s %8.1f ms", name, r.paint(status), float64(e.Duration.Microseconds())/1000)
	case ResourceAdded:
		r.total++
		if plain && v {
			return "resource " + name
		}
	case ResourceDone:
		r.done++
		if e.CacheHit && v {
			return "cached " + name
		}
	case FetchStart:
		r.inflight[e.Name] = now
		if plain && v {
			return "fetching " + name
		}
	case FetchEnd:
		delete(r.inflight, e.Name)
		if e.Err != "" {
			if v {
				return fmt.Sprintf("fetch failed %s: %s", name, Sanitize(e.Err))
			}
			return ""
		}
		r.fetched++
		r.bytes += e.Bytes
		what := fmt.Sprintf("%d bytes", e.Bytes)
		if e.Files > 0 {
			what = fmt.Sprintf("%d files, %d bytes", e.Files, e.Bytes)
		}
		return fmt.Sprintf("fetched %s (%s, %s)", name, what, e.Duration.Round(time.Millisecond))
	case AgentTurn:
		r.turn = e.Turn
		r.turns++
		r.retry = ""
		if plain || v {
			s := fmt.Sprintf("%sturn %d", r.phasePrefix(), e.Turn)
			if e.InputTokens > 0 || e.OutputTokens > 0 {
				s += fmt.Sprintf(" (%d input / %d output tokens)", e.InputTokens, e.OutputTokens)
			}
			return s
		}
	case ToolCall:
		r.tools++
		r.lastTool = ToolSummary(e.Name, e.Text, 100)
		if plain || v {
			return r.phasePrefix() + "tool " + r.lastTool
		}
	case Retry:
		r.retry = fmt.Sprintf("retrying %s (attempt %d)", name, e.Attempt)
		r.retryUntil = now.Add(e.Wait)
		msg := fmt.Sprintf("retry: %s: %s; attempt %d in %s", name, clip(Sanitize(e.Err), 200), e.Attempt, e.Wait.Round(time.Millisecond))
		return msg
	case Info:
		if v {
			return r.phasePrefix() + clip(Sanitize(e.Text), 200)
		}
	}
	return ""
}

func (r *Reporter) phasePrefix() string {
	if r.phase == "" {
		return ""
	}
	return r.phase + ": "
}

// paint colours a status word of ours in Live mode with colour on.
func (r *Reporter) paint(status string) string {
	if r.o.Mode != Live || !r.o.Color {
		return fmt.Sprintf("%-6s", status)
	}
	c := "green"
	if status != "ok" {
		c = "red"
	}
	return colorize(fmt.Sprintf("[%s]%-6s[reset]", c, status))
}

// printLine writes one permanent line: timestamped in Plain mode, above
// the status line in Live mode. Caller holds mu.
func (r *Reporter) printLine(s string, now time.Time) {
	r.writeLine("fullsend: "+s, now)
}

// writeLine writes a complete line (without its newline). Caller holds mu.
func (r *Reporter) writeLine(s string, now time.Time) {
	switch r.o.Mode {
	case Plain:
		fmt.Fprintf(r.w, "%s %s\n", now.UTC().Format("2006-01-02T15:04:05.000Z"), s)
	case Live:
		if r.live != nil {
			r.live.clear()
		}
		fmt.Fprintf(r.w, "%s\n", s)
	default:
		fmt.Fprintf(r.w, "%s\n", s)
	}
}

// redraw updates the status line (Live mode). Caller holds mu.
func (r *Reporter) redraw(now time.Time) {
	if r.o.Mode != Live || r.closed || r.held > 0 {
		return
	}
	if r.phase == "" {
		// Between phases nothing is going on: no status line, so that
		// what the command prints meanwhile is not mixed with it.
		if r.live != nil {
			r.live.clear()
		}
		return
	}
	if r.live == nil {
		r.live = newLiveLine(r.w, r.o)
		if r.o.Tick > 0 {
			go r.ticker(r.live)
		}
	}
	r.live.show(r.status(now))
}

func (r *Reporter) ticker(l *liveLine) {
	t := time.NewTicker(r.o.Tick)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			r.mu.Lock()
			if !r.closed {
				r.redraw(r.now())
			}
			r.mu.Unlock()
		}
	}
}

// Hold erases the status line and keeps it off until release is called,
// so that the caller can write a prompt and read an answer on the
// terminal. Events still update the state meanwhile.
func (r *Reporter) Hold() (release func()) {
	r.mu.Lock()
	r.held++
	if r.live != nil {
		r.live.clear()
	}
	r.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			r.held--
			if r.live != nil {
				r.redraw(r.now())
			}
			r.mu.Unlock()
		})
	}
}

// Interrupt erases the status line for good when the user pressed Ctrl-C
// (or the process was told to stop): the terminal has echoed "^C" at the
// end of the status line, and what teardown prints next ("fullsend:
// interrupted", the summary) starts on a clean line. The line stays off
// (events still update the state, notes and warnings still print); Close
// prints the summary as usual. A no-op after Close.
func (r *Reporter) Interrupt() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.interrupted {
		return
	}
	r.interrupted = true
	r.held++
	if r.live != nil {
		r.live.clear()
	}
}

// Status is the text of the status line now (what Live mode shows).
func (r *Reporter) Status() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status(r.now())
}

func (r *Reporter) status(now time.Time) string {
	var parts []string
	parts = append(parts, dur(now.Sub(r.start)))
	if r.total > 0 && (r.phase == "resolve" || r.phase == "" && r.turns == 0) {
		s := fmt.Sprintf("resolving %d/%d", r.done, r.total)
		if r.bytes > 0 {
			s += " · " + size(r.bytes)
		}
		parts = append(parts, s)
		if u, since, ok := r.slowest(now); ok {
			parts = append(parts, fmt.Sprintf("slowest %s %s", Sanitize(u), dur(since)))
		}
	}
	if r.phase != "" && r.phase != "resolve" {
		parts = append(parts, fmt.Sprintf("%s %s", r.phase, dur(now.Sub(r.phaseStart))))
		if r.turn > 0 {
			parts = append(parts, fmt.Sprintf("turn %d", r.turn))
		}
		if r.lastTool != "" {
			parts = append(parts, r.lastTool)
		}
	}
	if r.retry != "" {
		wait := r.retryUntil.Sub(now)
		if wait < 0 {
			wait = 0
		}
		parts = append(parts, fmt.Sprintf("%s in %s", r.retry, dur(wait)))
	}
	return strings.Join(parts, " · ")
}

// slowest is the fetch in flight for the longest time.
func (r *Reporter) slowest(now time.Time) (string, time.Duration, bool) {
	var u string
	var first time.Time
	for k, t := range r.inflight {
		if u == "" || t.Before(first) || t.Equal(first) && k < u {
			u, first = k, t
		}
	}
	if u == "" {
		return "", 0, false
	}
	return u, now.Sub(first), true
}

// Summary is the final line (without "fullsend: "): the elapsed time and
// what was done; "" when nothing happened.
func (r *Reporter) Summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.summary(r.now())
}

func (r *Reporter) summary(now time.Time) string {
	if !r.started {
		return ""
	}
	var parts []string
	if r.total > 0 {
		s := fmt.Sprintf("%d resource(s)", r.total)
		if r.fetched > 0 {
			s += fmt.Sprintf(", %d fetched (%s)", r.fetched, size(r.bytes))
		}
		parts = append(parts, s)
	}
	if r.turns > 0 || r.tools > 0 {
		parts = append(parts, fmt.Sprintf("%d turn(s), %d tool call(s)", r.turns, r.tools))
	}
	s := "finished in " + now.Sub(r.start).Round(time.Millisecond).String()
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, "; ")
	}
	return s
}

// Close erases the status line and prints the summary (Live mode, when
// any event arrived; in a log the timestamps tell the time taken). Later events are ignored; Writer keeps
// working. Close is idempotent.
func (r *Reporter) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	now := r.now()
	if r.live != nil {
		r.live.clear()
		r.live.close()
	}
	if len(r.partial) > 0 {
		r.writeText(string(r.partial), now)
		r.partial = nil
	}
	if s := r.summary(now); s != "" && r.o.Mode == Live {
		if r.o.Mode == Live && r.o.Color {
			s = colorize("[bold]") + s + colorize("[reset]")
		}
		r.writeLine("fullsend: "+s, now)
	}
	r.closed = true
}

// Writer returns a writer for notes and warnings ("fullsend: note: …",
// "fullsend: warning: …" lines): complete lines are written above the
// status line (Live), as they are (Plain, no timestamp: they are not
// progress), or, in Quiet mode, only when they are not notes.
func (r *Reporter) Writer() io.Writer { return lineWriter{r} }

type lineWriter struct{ r *Reporter }

func (lw lineWriter) Write(p []byte) (int, error) {
	r := lw.r
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	buf := append(r.partial, p...)
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		r.writeText(string(buf[:i]), now)
		buf = buf[i+1:]
	}
	r.partial = append([]byte(nil), buf...)
	if len(r.partial) == 0 {
		r.partial = nil
	}
	return len(p), nil
}

// writeText writes one note or warning line, sanitized (the line's
// message often quotes a server, a file name or an agent). Caller holds mu.
func (r *Reporter) writeText(s string, now time.Time) {
	s = Sanitize(s)
	if r.o.Mode == Quiet && strings.HasPrefix(s, "fullsend: note:") {
		return
	}
	if r.o.Mode == Live && r.o.Color {
		if rest, ok := strings.CutPrefix(s, "fullsend: warning:"); ok {
			s = "fullsend: " + colorize("[yellow]warning:[reset]") + rest
		}
	}
	if r.o.Mode == Live {
		if r.live != nil {
			r.live.clear()
		}
		fmt.Fprintf(r.w, "%s\n", s)
		if !r.closed && r.live != nil {
			r.redraw(now)
		}
		return
	}
	fmt.Fprintf(r.w, "%s\n", s)
}

// Sanitize is termsafe.Sanitize, the one rule for untrusted text on a
// terminal (see package termsafe).
func Sanitize(s string) string { return termsafe.Sanitize(s) }

// ToolSummary is a one-line description of a tool call: the tool's name
// and its most telling argument (a command, a path, a URL, a pattern), or
// its input flattened, cut to at most max runes.
func ToolSummary(name, input string, max int) string {
	arg := strings.TrimSpace(input)
	var m map[string]any
	if strings.HasPrefix(arg, "{") && json.Unmarshal([]byte(arg), &m) == nil {
		arg = ""
		for _, k := range []string{"command", "cmd", "file_path", "path", "url", "pattern", "query", "skill", "name", "description"} {
			if s, ok := m[k].(string); ok && s != "" {
				arg = s
				break
			}
		}
	}
	s := Sanitize(name)
	if arg = strings.Join(strings.Fields(Sanitize(arg)), " "); arg != "" {
		s += ": " + arg
	}
	return clip(s, max)
}

// clip cuts s to at most n runes, marking a cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// dur renders an elapsed time for the status line: 850ms, 4.2s, 2m03s,
// 1h02m.
func dur(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// size renders a byte count: 512 B, 12.0 KiB, 3.4 MiB.
func size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
