package chat

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
)

// TurnInput is one turn handed to Options.Run.
type TurnInput struct {
	Session string
	Turn    int
	Text    string
	Images  []string // checked host paths (Options.CheckImage)
	// Emit receives the loop's events.
	Emit func(runtime.Event)
}

// Options configure a Server.
type Options struct {
	// Store keeps sessions, turns and events. Required.
	Store Store
	// Run runs one turn: the session's conversation continued with the
	// message until the model stops calling tools. Required.
	Run func(ctx context.Context, t TurnInput) (*runtime.Outcome, error)
	// CheckImage resolves and checks an image path (nil: images refused).
	CheckImage func(string) (string, error)
	// Redact removes secrets from every text that leaves the process
	// (nil: identity). The runtime redacts the API key already; this is
	// the second line.
	Redact func(string) string
	// IdleTimeout, Suspend and Wake: when no turn ran for IdleTimeout,
	// Suspend snapshots the sandbox and tears it down, and the sessions
	// served are recorded StateSuspended; the next turn first calls Wake,
	// which restores it. Zero IdleTimeout or a nil Suspend: never.
	IdleTimeout   time.Duration
	Suspend, Wake func(ctx context.Context) error
	// Notify receives a line about suspend and wake (progress; nil: none).
	Notify func(string)
}

// MaxQueued bounds the user messages that wait, per session, behind the
// session's turn in flight; one more is an error envelope.
const MaxQueued = 16

// Server serves the protocol on one input and output stream. Turns run
// one at a time in this process (in the order accepted); requests are
// read while a turn runs, so cancel and history answer at once.
type Server struct {
	o Options

	outMu sync.Mutex
	enc   *json.Encoder

	mu      sync.Mutex
	busy    map[string]context.CancelFunc // sessions with a turn accepted and not ended
	queue   map[string][]queued           // per session: messages waiting behind its turn, in order
	next    map[string]int                // last turn number given, per session
	current *turnState                    // the turn that runs (deltas go to it)
	sem     chan struct{}
	wg      sync.WaitGroup
	// idle suspend (suspend.go): when the last turn ended, whether the
	// sandbox is suspended, whether the last suspend failed (not retried
	// before the next turn).
	lastActive    time.Time
	suspended     bool
	suspendFailed bool
}

// queued is a checked user message waiting for its session's turn in
// flight to end.
type queued struct {
	ctx    context.Context
	text   string
	images []string
}

type turnState struct {
	session string
	turn    int
	failed  bool // a store error was reported for this turn
}

// NewServer returns a server.
func NewServer(o Options) *Server {
	if o.Redact == nil {
		o.Redact = func(s string) string { return s }
	}
	return &Server{o: o, busy: map[string]context.CancelFunc{}, queue: map[string][]queued{}, next: map[string]int{}, sem: make(chan struct{}, 1), lastActive: time.Now()}
}

// Serve reads requests from in until EOF (then waits for the turns in
// flight) or until ctx ends (which cancels them; Serve then returns
// ctx.Err() without waiting for more input), writing envelopes to out.
// Otherwise only a failure to read in is an error.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s.enc = json.NewEncoder(out)
	s.enc.SetEscapeHTML(false)
	defer s.terminateSessions() // after the turns in flight
	defer s.wg.Wait()
	idleDone := s.watchIdle(ctx)
	defer idleDone()
	type read struct {
		line []byte
		err  error
	}
	lines := make(chan read)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := readLine(br)
			select {
			case lines <- read{line, err}:
			case <-stop:
				return
			}
			if err != nil && !errors.Is(err, errLineTooLong) {
				return
			}
		}
	}()
	for {
		var r read
		select {
		case <-ctx.Done():
			return ctx.Err()
		case r = <-lines:
		}
		if errors.Is(r.err, errLineTooLong) {
			s.send(Envelope{Type: EnvError, Error: fmt.Sprintf("malformed request: line longer than %d bytes", MaxLine)})
			continue
		}
		if len(r.line) > 0 {
			s.handle(ctx, r.line)
		}
		if r.err == io.EOF {
			return nil
		}
		if r.err != nil {
			return fmt.Errorf("chat: reading requests: %w", r.err)
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line without its newline; a line over MaxLine is
// skipped whole and reported as errLineTooLong.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > MaxLine+1 {
			line = nil
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err == nil || err == io.EOF {
				return nil, errLineTooLong
			}
			return nil, err
		}
		line = append(line, frag...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if n := len(line); n > 0 && line[n-1] == '\n' {
			line = line[:n-1]
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		return trimSpace(line), err
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

func (s *Server) send(e Envelope) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	_ = s.enc.Encode(e) // a closed stdout ends the client; turns still finish and are stored
}

func (s *Server) sendError(session, msg string) {
	s.send(Envelope{Type: EnvError, Session: session, Error: s.o.Redact(msg)})
}

func (s *Server) handle(ctx context.Context, line []byte) {
	req, err := ParseRequest(line)
	if err != nil {
		session := ""
		if CheckSessionID(req.Session) == nil {
			session = req.Session
		}
		s.sendError(session, err.Error())
		return
	}
	switch req.Type {
	case ReqUserMessage:
		s.accept(ctx, req)
	case ReqCancel:
		// cancel stops the turn in flight and drops the messages queued
		// behind it: the client asked the session to stop.
		s.mu.Lock()
		cancel := s.busy[req.Session]
		dropped := len(s.queue[req.Session])
		delete(s.queue, req.Session)
		s.mu.Unlock()
		if cancel == nil {
			s.sendError(req.Session, fmt.Sprintf("cancel: session %s has no turn in flight", req.Session))
			return
		}
		if dropped > 0 { // before the turn's turn_end
			s.sendError(req.Session, fmt.Sprintf("cancel: %d queued user_message(s) of session %s dropped", dropped, req.Session))
		}
		cancel()
	case ReqHistory:
		s.history(req.Session)
	}
}

// accept checks a user message and starts its turn, or queues it behind
// the session's turn in flight (at most MaxQueued).
func (s *Server) accept(ctx context.Context, req Request) {
	var images []string
	for _, img := range req.Images {
		if s.o.CheckImage == nil {
			s.sendError(req.Session, "user_message: images are not accepted here")
			return
		}
		p, err := s.o.CheckImage(img)
		if err != nil {
			s.sendError(req.Session, "user_message: "+err.Error())
			return
		}
		images = append(images, p)
	}
	s.mu.Lock()
	if s.busy[req.Session] != nil {
		if len(s.queue[req.Session]) >= MaxQueued {
			s.mu.Unlock()
			s.sendError(req.Session, fmt.Sprintf("user_message: session %s has %d messages queued behind its turn in flight, at most %d (wait for a turn_end)", req.Session, MaxQueued, MaxQueued))
			return
		}
		s.queue[req.Session] = append(s.queue[req.Session], queued{ctx: ctx, text: req.Text, images: images})
		s.mu.Unlock()
		return
	}
	start, err := s.beginLocked(req.Session, queued{ctx: ctx, text: req.Text, images: images})
	s.mu.Unlock()
	if err != nil {
		s.sendError(req.Session, err.Error())
		return
	}
	start()
}

// beginLocked numbers the session's next turn for m and marks the session
// busy; the returned func starts the turn. Caller holds mu.
func (s *Server) beginLocked(session string, m queued) (func(), error) {
	n, ok := s.next[session]
	if !ok {
		stored, err := s.o.Store.Turns(session)
		if err != nil {
			return nil, err
		}
		n = stored
	}
	s.next[session] = n + 1
	tctx, cancel := context.WithCancel(m.ctx)
	s.busy[session] = cancel
	s.wg.Add(1)
	t := &turnState{session: session, turn: n + 1}
	rec := TurnRecord{Session: session, Turn: n + 1, Text: s.o.Redact(m.text), Images: m.images, Started: time.Now()}
	return func() { go s.runTurn(tctx, cancel, t, rec) }, nil
}

// runTurn records and announces the turn, waits for its place, runs it
// and reports its end.
func (s *Server) runTurn(ctx context.Context, cancel context.CancelFunc, t *turnState, rec TurnRecord) {
	defer s.wg.Done()
	defer cancel()
	if err := s.o.Store.BeginTurn(rec); err != nil {
		s.endTurn(t, rec, nil, err)
		return
	}
	s.send(Envelope{Type: EnvTurnStart, Session: t.session, Turn: t.turn, Text: rec.Text, Images: rec.Images})
	select {
	case s.sem <- struct{}{}:
		defer func() { <-s.sem }()
	case <-ctx.Done():
		s.endTurn(t, rec, &runtime.Outcome{StopReason: runtime.StopCanceled}, nil)
		return
	}
	if err := s.wake(ctx, t.session); err != nil {
		s.endTurn(t, rec, nil, err)
		return
	}
	s.mu.Lock()
	s.current = t
	s.mu.Unlock()
	out, err := s.o.Run(ctx, TurnInput{Session: t.session, Turn: t.turn, Text: rec.Text, Images: rec.Images,
		Emit: func(e runtime.Event) { s.event(t, fromRuntime(e, s.o.Redact), true) }})
	s.mu.Lock()
	s.current = nil
	s.mu.Unlock()
	if ctx.Err() != nil && (out == nil || out.StopReason != runtime.StopTimeout) {
		if out == nil {
			out = &runtime.Outcome{}
		}
		out.StopReason = runtime.StopCanceled
	}
	s.endTurn(t, rec, out, err)
}

// Delta passes a streamed piece of the answer to the running turn (it is
// sent, not stored: the loop's text event carries the whole answer).
// Pieces of delegate_task children (Depth > 0) are not the answer and are
// left out.
func (s *Server) Delta(d native.Delta) {
	if d.Depth > 0 {
		return
	}
	s.mu.Lock()
	t := s.current
	s.mu.Unlock()
	if t != nil {
		s.event(t, fromDelta(d, s.o.Redact), false)
	}
}

func (s *Server) event(t *turnState, e Event, store bool) {
	if store {
		if err := s.o.Store.AddEvent(t.session, t.turn, e); err != nil && !t.failed {
			t.failed = true
			s.sendError(t.session, err.Error())
		}
	}
	s.send(Envelope{Type: EnvEvent, Session: t.session, Turn: t.turn, Event: &e})
}

// endTurn stores and sends the end of a turn.
func (s *Server) endTurn(t *turnState, rec TurnRecord, out *runtime.Outcome, err error) {
	rec.Ended, rec.StopReason = true, runtime.StopError
	if out != nil {
		rec.Usage = Usage{ModelTurns: out.Turns, ToolCalls: out.ToolCalls, InputTokens: out.InputTokens, OutputTokens: out.OutputTokens}
		if out.StopReason != "" {
			rec.StopReason = out.StopReason
		}
	}
	if err != nil && rec.StopReason != runtime.StopCanceled {
		rec.Error = s.o.Redact(oneLine(err.Error()))
	}
	if serr := s.o.Store.EndTurn(rec); serr != nil {
		s.sendError(t.session, serr.Error())
	}
	// The session is free (or taken by its next queued message) before
	// its turn_end is sent: a client that answers turn_end with the next
	// message must find it free or queue behind. The next turn starts
	// after the turn_end, so its turn_start follows it.
	s.mu.Lock()
	var next func()
	var nextErr error
	if q := s.queue[t.session]; len(q) > 0 {
		if len(q) == 1 {
			delete(s.queue, t.session)
		} else {
			s.queue[t.session] = q[1:]
		}
		if next, nextErr = s.beginLocked(t.session, q[0]); nextErr != nil {
			delete(s.queue, t.session) // the order cannot be kept: drop the rest
		}
	}
	if next == nil {
		delete(s.busy, t.session)
	}
	s.lastActive, s.suspendFailed = time.Now(), false
	s.mu.Unlock()
	u := rec.Usage
	s.send(Envelope{Type: EnvTurnEnd, Session: t.session, Turn: t.turn, StopReason: rec.StopReason, Usage: &u, Error: rec.Error})
	if nextErr != nil {
		s.sendError(t.session, nextErr.Error())
	}
	if next != nil {
		next()
	}
}

// history replays the stored turns of a session: for each, its
// turn_start, its stored events and (once ended) its turn_end, all marked
// replay; then history_end with the counts.
func (s *Server) history(session string) {
	turns, events := 0, 0
	var pending *TurnRecord
	flush := func() {
		if pending != nil && pending.Ended {
			u := pending.Usage
			s.send(Envelope{Type: EnvTurnEnd, Session: session, Turn: pending.Turn, Replay: true, StopReason: pending.StopReason, Usage: &u, Error: pending.Error})
		}
		pending = nil
	}
	dropped, err := s.o.Store.History(session, func(t TurnRecord) error {
		flush()
		turns++
		s.send(Envelope{Type: EnvTurnStart, Session: session, Turn: t.Turn, Replay: true, Text: t.Text, Images: t.Images})
		pending = &t
		return nil
	}, func(turn int, e Event) error {
		events++
		s.send(Envelope{Type: EnvEvent, Session: session, Turn: turn, Replay: true, Event: &e})
		return nil
	})
	flush()
	if err != nil {
		s.sendError(session, "history: "+err.Error())
		return
	}
	s.send(Envelope{Type: EnvHistoryEnd, Session: session, Turns: &turns, Events: &events, Dropped: &dropped})
}
