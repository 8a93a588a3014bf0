package chat

import (
	"sync"
	"time"
)

// TurnRecord is one stored turn: the user message and, once it ended,
// how.
type TurnRecord struct {
	Session    string
	Turn       int
	Text       string
	Images     []string
	Started    time.Time
	Ended      bool
	StopReason string
	Usage      Usage
	Error      string
}

// Store keeps sessions, turns and events. Implementations are safe for
// concurrent use.
type Store interface {
	// Turns returns the number of the session's last turn (0: a new
	// session).
	Turns(session string) (int, error)
	// BeginTurn records turn number turn of session (creating the session).
	BeginTurn(t TurnRecord) error
	// AddEvent records an event of a turn.
	AddEvent(session string, turn int, e Event) error
	// EndTurn records how a turn ended.
	EndTurn(t TurnRecord) error
	// History calls turn for every stored turn of session in order, then
	// event for each of its stored events; dropped is how many events of
	// the session are no longer kept.
	History(session string, turn func(TurnRecord) error, event func(turn int, e Event) error) (dropped int, err error)
	// SetState records the state of a session (StateRunning,
	// StateSuspended, StateTerminated), creating it if needed; State
	// returns it ("" for an unknown session).
	SetState(session, state string) error
	State(session string) (string, error)
	Close() error
}

// Session states.
const (
	// StateRunning: this process serves the session with its sandbox up.
	StateRunning = "running"
	// StateSuspended: the sandbox was snapshotted and torn down after
	// idle_timeout; the next user_message restores it.
	StateSuspended = "suspended"
	// StateTerminated: the process that served it ended (a later one may
	// continue the conversation, in a fresh sandbox).
	StateTerminated = "terminated"
)

// DefaultMaxMemoryEvents bounds the in-memory store.
const DefaultMaxMemoryEvents = 10000

// memStore keeps everything in memory, at most max events over all
// sessions: the oldest are dropped first.
type memStore struct {
	mu      sync.Mutex
	state   map[string]string
	max     int
	turns   map[string][]TurnRecord
	events  []memEvent // oldest first
	dropped map[string]int
}

type memEvent struct {
	session string
	turn    int
	e       Event
}

// NewMemoryStore returns a store that keeps at most maxEvents events.
func NewMemoryStore(maxEvents int) Store {
	if maxEvents <= 0 {
		maxEvents = DefaultMaxMemoryEvents
	}
	return &memStore{max: maxEvents, turns: map[string][]TurnRecord{}, dropped: map[string]int{}, state: map[string]string{}}
}

func (m *memStore) SetState(session, state string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state[session] = state
	return nil
}

func (m *memStore) State(session string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state[session], nil
}

func (m *memStore) Turns(session string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ts := m.turns[session]
	if len(ts) == 0 {
		return 0, nil
	}
	return ts[len(ts)-1].Turn, nil
}

func (m *memStore) BeginTurn(t TurnRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.turns[t.Session] = append(m.turns[t.Session], t)
	return nil
}

func (m *memStore) AddEvent(session string, turn int, e Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.events) >= m.max {
		old := m.events[0]
		m.dropped[old.session]++
		m.events[0] = memEvent{}
		m.events = m.events[1:]
	}
	m.events = append(m.events, memEvent{session: session, turn: turn, e: e})
	return nil
}

func (m *memStore) EndTurn(t TurnRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	ts := m.turns[t.Session]
	for i := range ts {
		if ts[i].Turn == t.Turn {
			ts[i] = t
		}
	}
	return nil
}

func (m *memStore) History(session string, turn func(TurnRecord) error, event func(int, Event) error) (int, error) {
	m.mu.Lock()
	ts := append([]TurnRecord(nil), m.turns[session]...)
	var evs []memEvent
	for _, e := range m.events {
		if e.session == session {
			evs = append(evs, e)
		}
	}
	dropped := m.dropped[session]
	m.mu.Unlock()
	for _, t := range ts {
		if err := turn(t); err != nil {
			return dropped, err
		}
		for _, e := range evs {
			if e.turn == t.Turn {
				if err := event(e.turn, e.e); err != nil {
					return dropped, err
				}
			}
		}
	}
	return dropped, nil
}

func (m *memStore) Close() error { return nil }
