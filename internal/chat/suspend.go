package chat

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// watchIdle starts the idle watch of Serve (when Options ask for one) and
// returns the func that stops it and waits for it.
func (s *Server) watchIdle(ctx context.Context) func() {
	if s.o.IdleTimeout <= 0 || s.o.Suspend == nil {
		return func() {}
	}
	tick := min(max(s.o.IdleTimeout/10, 10*time.Millisecond), time.Second)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				s.suspendIfIdle(ctx)
			}
		}
	}()
	return func() { close(stop); <-done }
}

// suspendIfIdle suspends the sandbox when no turn was accepted or ran for
// IdleTimeout: it holds the turn slot meanwhile, so a message arriving
// during the suspend waits and then wakes the sandbox.
func (s *Server) suspendIfIdle(ctx context.Context) {
	s.mu.Lock()
	idle := len(s.busy) == 0 && !s.suspended && !s.suspendFailed && time.Since(s.lastActive) >= s.o.IdleTimeout
	s.mu.Unlock()
	if !idle {
		return
	}
	select {
	case s.sem <- struct{}{}:
		defer func() { <-s.sem }()
	default:
		return
	}
	if err := s.o.Suspend(ctx); err != nil {
		s.mu.Lock()
		s.suspendFailed = true
		s.mu.Unlock()
		s.notify(fmt.Sprintf("chat: idle for %s, sandbox not suspended: %v", s.o.IdleTimeout, err))
		return
	}
	s.mu.Lock()
	s.suspended = true
	s.mu.Unlock()
	for _, id := range s.sessions() {
		if err := s.o.Store.SetState(id, StateSuspended); err != nil {
			s.sendError(id, err.Error())
		}
	}
	s.notify(fmt.Sprintf("chat: idle for %s: sandbox suspended (its files kept in a snapshot); the next user_message restores it", s.o.IdleTimeout))
}

// wake restores a suspended sandbox before a turn of session (the caller
// holds the turn slot) and records the session running.
func (s *Server) wake(ctx context.Context, session string) error {
	s.mu.Lock()
	suspended := s.suspended
	s.mu.Unlock()
	if suspended {
		if s.o.Wake == nil {
			return fmt.Errorf("chat: the sandbox is suspended and cannot be restored")
		}
		if err := s.o.Wake(ctx); err != nil {
			return err
		}
		s.mu.Lock()
		s.suspended = false
		s.mu.Unlock()
		for _, id := range s.sessions() {
			if id != session {
				_ = s.o.Store.SetState(id, StateRunning)
			}
		}
		s.notify("chat: sandbox restored from its snapshot")
	}
	return s.o.Store.SetState(session, StateRunning)
}

// terminateSessions records the sessions this process served as
// terminated (Serve ends: so does their sandbox).
func (s *Server) terminateSessions() {
	for _, id := range s.sessions() {
		_ = s.o.Store.SetState(id, StateTerminated)
	}
}

// sessions lists the sessions that had a turn in this process.
func (s *Server) sessions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.next))
	for id := range s.next {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func (s *Server) notify(line string) {
	if s.o.Notify != nil {
		s.o.Notify(s.o.Redact(line))
	}
}
