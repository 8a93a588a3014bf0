package chat

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

type stored struct {
	turns  []TurnRecord
	events map[int][]string
}

func readHistory(t *testing.T, s Store, session string) (stored, int) {
	t.Helper()
	var h stored
	h.events = map[int][]string{}
	dropped, err := s.History(session, func(tr TurnRecord) error {
		tr.Started = time.Time{}
		h.turns = append(h.turns, tr)
		return nil
	}, func(turn int, e Event) error {
		h.events[turn] = append(h.events[turn], e.Text)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return h, dropped
}

func fill(t *testing.T, s Store) {
	t.Helper()
	for turn := 1; turn <= 2; turn++ {
		rec := TurnRecord{Session: "a", Turn: turn, Text: "msg", Images: []string{"/x.png"}, Started: time.Now()}
		if err := s.BeginTurn(rec); err != nil {
			t.Fatal(err)
		}
		for _, txt := range []string{"one", "two"} {
			if err := s.AddEvent("a", turn, Event{Time: time.Now().UTC(), Kind: "text", Text: txt}); err != nil {
				t.Fatal(err)
			}
		}
		rec.Ended, rec.StopReason, rec.Usage = true, "completed", Usage{ModelTurns: turn, OutputTokens: 7}
		if err := s.EndTurn(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.BeginTurn(TurnRecord{Session: "b", Turn: 1, Text: "other", Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
}

func TestSQLitePersistsAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat.db")
	s, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("db file: %v %v", st.Mode(), err)
	}
	s, err = OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, err := s.Turns("a"); err != nil || n != 2 {
		t.Fatalf("turns: %d %v", n, err)
	}
	h, dropped := readHistory(t, s, "a")
	want := []TurnRecord{
		{Session: "a", Turn: 1, Text: "msg", Images: []string{"/x.png"}, Ended: true, StopReason: "completed", Usage: Usage{ModelTurns: 1, OutputTokens: 7}},
		{Session: "a", Turn: 2, Text: "msg", Images: []string{"/x.png"}, Ended: true, StopReason: "completed", Usage: Usage{ModelTurns: 2, OutputTokens: 7}},
	}
	if dropped != 0 || !reflect.DeepEqual(h.turns, want) || !reflect.DeepEqual(h.events, map[int][]string{1: {"one", "two"}, 2: {"one", "two"}}) {
		t.Fatalf("history: %+v %v dropped %d", h.turns, h.events, dropped)
	}
	hb, _ := readHistory(t, s, "b")
	if len(hb.turns) != 1 || hb.turns[0].Ended || len(hb.events) != 0 {
		t.Fatalf("session b: %+v", hb)
	}
	var mode string
	if err := s.(*sqlStore).db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal mode %q %v", mode, err)
	}
}

func TestSQLiteRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, []byte(strings.Repeat("this is not a database\n", 200)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := OpenSQLite(junk)
	if err == nil || !strings.HasPrefix(err.Error(), "session database "+junk+": ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("junk: %v", err)
	}
	_, err = OpenSQLite(filepath.Join(dir, "no", "such", "dir.db"))
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("missing dir: %v", err)
	}
	// A newer schema is refused rather than misread.
	newer := filepath.Join(dir, "newer.db")
	s, err := OpenSQLite(newer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.(*sqlStore).db.Exec("PRAGMA user_version = 3"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := OpenSQLite(newer); err == nil || !strings.Contains(err.Error(), "schema version 3") {
		t.Fatalf("newer: %v", err)
	}
}

func TestSQLiteHeldByOneProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat.db")
	s, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = OpenSQLite(path)
	if err == nil || !strings.Contains(err.Error(), "locked") || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "session database "+path+": ") {
		t.Fatalf("second open: %v", err)
	}
	if d := time.Since(start); d < DBTimeout/2 {
		t.Fatalf("gave up after %s, before the busy timeout", d)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = OpenSQLite(path)
	if err != nil {
		t.Fatalf("after close: %v", err)
	}
	s.Close()
}

func TestMemoryStoreBounded(t *testing.T) {
	s := NewMemoryStore(3)
	fill(t, s) // 4 events of session a
	h, dropped := readHistory(t, s, "a")
	if dropped != 1 || !reflect.DeepEqual(h.events, map[int][]string{1: {"two"}, 2: {"one", "two"}}) || len(h.turns) != 2 || !h.turns[1].Ended {
		t.Fatalf("history %+v dropped %d", h, dropped)
	}
	if err := s.AddEvent("b", 1, Event{Kind: "text", Text: "b1"}); err != nil {
		t.Fatal(err)
	}
	h, dropped = readHistory(t, s, "a")
	if dropped != 2 || !reflect.DeepEqual(h.events, map[int][]string{2: {"one", "two"}}) {
		t.Fatalf("after b: %+v dropped %d", h, dropped)
	}
	hb, db := readHistory(t, s, "b")
	if db != 0 || !reflect.DeepEqual(hb.events, map[int][]string{1: {"b1"}}) {
		t.Fatalf("b: %+v %d", hb, db)
	}
}

func TestHistoryReportsDropped(t *testing.T) {
	p := startServer(t, Options{Run: echoRun, Store: NewMemoryStore(1)})
	for _, txt := range []string{"first", "second"} {
		p.send(`{"type":"user_message","session":"s1","text":"` + txt + `"}`)
		p.until(EnvTurnEnd)
	}
	p.send(`{"type":"history","session":"s1"}`)
	h := p.until(EnvHistoryEnd)
	end := h[len(h)-1]
	if *end.Turns != 2 || *end.Events != 1 || *end.Dropped != 1 || len(h) != 6 || h[3].Event == nil || h[3].Event.Text != "echo: second" {
		t.Fatalf("history: %+v", h)
	}
	p.close()
}
