package chat

import (
	"database/sql"
	"path/filepath"
	"testing"
)

// v1Schema is the session database as fullsend wrote it before session
// states (user_version 1).
const v1Schema = `
CREATE TABLE sessions (id TEXT PRIMARY KEY, created TEXT NOT NULL, updated TEXT NOT NULL);
CREATE TABLE turns (session TEXT NOT NULL REFERENCES sessions(id), turn INTEGER NOT NULL, text TEXT NOT NULL, images TEXT NOT NULL,
	started TEXT NOT NULL, ended TEXT, stop_reason TEXT, usage TEXT, error TEXT, PRIMARY KEY (session, turn));
CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL, turn INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX events_by_session ON events (session, turn, id);
INSERT INTO sessions VALUES ('old', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z');
INSERT INTO turns VALUES ('old', 1, 'hi', '[]', '2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z', 'completed', '{}', '');
PRAGMA user_version = 1;
`

// TestSQLiteMigratesV1: a version 1 database gains sessions.state (its
// sessions terminated), keeps its turns, and is version 2 afterwards.
func TestSQLiteMigratesV1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(v1Schema); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st, err := s.State("old"); err != nil || st != StateTerminated {
		t.Fatalf("migrated session state %q %v", st, err)
	}
	var v int
	if err := s.(*sqlStore).db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != dbVersion {
		t.Fatalf("version %d %v", v, err)
	}
	if n, err := s.Turns("old"); err != nil || n != 1 {
		t.Fatalf("turns kept: %d %v", n, err)
	}
	if err := s.SetState("old", StateSuspended); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.State("old"); st != StateSuspended {
		t.Fatalf("state %q", st)
	}
	if st, err := s.State("unknown"); err != nil || st != "" {
		t.Fatalf("unknown session: %q %v", st, err)
	}
}

func TestStoresKeepState(t *testing.T) {
	sq, err := OpenSQLite(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	for name, s := range map[string]Store{"memory": NewMemoryStore(0), "sqlite": sq} {
		for _, st := range []string{StateRunning, StateSuspended, StateTerminated} {
			if err := s.SetState("s1", st); err != nil {
				t.Fatal(err)
			}
			if got, err := s.State("s1"); err != nil || got != st {
				t.Errorf("%s: state %q %v, want %q", name, got, err, st)
			}
		}
	}
}
