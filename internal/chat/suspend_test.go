package chat

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/runtime"
)

// fakeSandbox stands for the chat's sandbox: Suspend and Wake flip it,
// and a turn run while it is down fails.
type fakeSandbox struct {
	mu              sync.Mutex
	up              bool
	suspends, wakes int
}

func (f *fakeSandbox) suspend(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.up = false
	f.suspends++
	return nil
}

func (f *fakeSandbox) wake(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.up = true
	f.wakes++
	return nil
}

func (f *fakeSandbox) run(ctx context.Context, t TurnInput) (*runtime.Outcome, error) {
	f.mu.Lock()
	up := f.up
	f.mu.Unlock()
	if !up {
		return nil, errors.New("turn run on a torn-down sandbox")
	}
	return echoRun(ctx, t)
}

func (f *fakeSandbox) counts() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.suspends, f.wakes
}

// TestIdleSuspendAndWake: with no turn for IdleTimeout the sandbox is
// suspended and the session recorded suspended; the next user_message
// wakes it before its turn runs (session running again); at the end of
// input the session is terminated.
func TestIdleSuspendAndWake(t *testing.T) {
	store, err := OpenSQLite(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sb := &fakeSandbox{up: true}
	var notes []string
	var nmu sync.Mutex
	p := startServer(t, Options{Store: store, Run: sb.run, IdleTimeout: time.Second, Suspend: sb.suspend, Wake: sb.wake,
		Notify: func(s string) { nmu.Lock(); notes = append(notes, s); nmu.Unlock() }})
	p.send(`{"type":"user_message","session":"s1","text":"one"}`)
	if e := p.until(EnvTurnEnd); e[len(e)-1].StopReason != runtime.StopCompleted {
		t.Fatalf("turn 1: %+v", e[len(e)-1])
	}
	if st, _ := store.State("s1"); st != StateRunning {
		t.Fatalf("state after turn 1: %q", st)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if n, _ := sb.counts(); n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("not suspended after the idle timeout")
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitState(t, store, "s1", StateSuspended)
	time.Sleep(1500 * time.Millisecond) // idle again: no second suspend
	if n, w := sb.counts(); n != 1 || w != 0 {
		t.Fatalf("suspends %d wakes %d", n, w)
	}
	p.send(`{"type":"user_message","session":"s1","text":"two"}`)
	e := p.until(EnvTurnEnd)
	if end := e[len(e)-1]; end.StopReason != runtime.StopCompleted || end.Error != "" {
		t.Fatalf("turn after the suspend: %+v", end)
	}
	if _, w := sb.counts(); w != 1 {
		t.Fatalf("wakes %d", w)
	}
	if st, _ := store.State("s1"); st != StateRunning {
		t.Fatalf("state after the wake: %q", st)
	}
	p.close()
	if st, _ := store.State("s1"); st != StateTerminated {
		t.Fatalf("state after the end: %q", st)
	}
	nmu.Lock()
	defer nmu.Unlock()
	if len(notes) != 2 || !strings.Contains(notes[0], "suspended") || !strings.Contains(notes[1], "restored") {
		t.Errorf("notes %q", notes)
	}
}

// TestIdleSuspendRefused: a Suspend that fails (a backend without
// snapshots) leaves the sandbox up, the session running, and is not
// retried until another turn ran.
func TestIdleSuspendRefused(t *testing.T) {
	var calls int
	var mu sync.Mutex
	store := NewMemoryStore(0)
	p := startServer(t, Options{Store: store, Run: echoRun, IdleTimeout: 50 * time.Millisecond,
		Suspend: func(context.Context) error { mu.Lock(); calls++; mu.Unlock(); return errors.New("no snapshots") },
		Wake:    func(context.Context) error { t.Error("woken though never suspended"); return nil }})
	p.send(`{"type":"user_message","session":"s1","text":"one"}`)
	p.until(EnvTurnEnd)
	time.Sleep(400 * time.Millisecond)
	mu.Lock()
	n := calls
	mu.Unlock()
	if n != 1 {
		t.Fatalf("suspend tried %d times", n)
	}
	if st, _ := store.State("s1"); st != StateRunning {
		t.Fatalf("state %q", st)
	}
	p.send(`{"type":"user_message","session":"s1","text":"two"}`)
	if e := p.until(EnvTurnEnd); e[len(e)-1].StopReason != runtime.StopCompleted {
		t.Fatalf("turn 2: %+v", e[len(e)-1])
	}
	p.close()
}

func waitState(t *testing.T, s Store, session, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := s.State(session)
		if err == nil && st == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s state %q (%v), want %q", session, st, err, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
