package chat

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	_ "modernc.org/sqlite" // pure-Go SQLite driver (no cgo)
)

// dbVersion is the session database's schema version (PRAGMA
// user_version): 1 without sessions.state, 2 with it.
const dbVersion = 2

// dbSchema is version 2 of the session database (a new file).
const dbSchema = `
CREATE TABLE IF NOT EXISTS sessions (
	id TEXT PRIMARY KEY,
	created TEXT NOT NULL,
	updated TEXT NOT NULL,
	state TEXT NOT NULL DEFAULT 'terminated'
);
CREATE TABLE IF NOT EXISTS turns (
	session TEXT NOT NULL REFERENCES sessions(id),
	turn INTEGER NOT NULL,
	text TEXT NOT NULL,
	images TEXT NOT NULL,
	started TEXT NOT NULL,
	ended TEXT,
	stop_reason TEXT,
	usage TEXT,
	error TEXT,
	PRIMARY KEY (session, turn)
);
CREATE TABLE IF NOT EXISTS events (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	session TEXT NOT NULL,
	turn INTEGER NOT NULL,
	data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_session ON events (session, turn, id);
PRAGMA user_version = 2;
`

// migrate1to2 adds sessions.state to a version 1 database: its sessions
// were served by processes that have ended, so they are terminated.
const migrate1to2 = `
ALTER TABLE sessions ADD COLUMN state TEXT NOT NULL DEFAULT 'terminated';
PRAGMA user_version = 2;
`

// DBTimeout bounds waiting for another process's lock on the database.
const DBTimeout = 5 * time.Second

type sqlStore struct {
	db   *sql.DB
	path string
}

// OpenSQLite opens (creating it 0600 when missing) the session database
// at path, in WAL mode, and holds it exclusively until Close: one process
// at a time continues its sessions (another waits DBTimeout, then fails).
// A file that is not a session database, is corrupt or stays locked is a
// one-line error naming it.
func OpenSQLite(path string) (Store, error) {
	fail := func(err error) (Store, error) {
		return nil, fmt.Errorf("session database %s: %s", path, oneLine(err.Error()))
	}
	if strings.ContainsAny(path, "?#\n") {
		return fail(errors.New("'?', '#' and newlines are not allowed in the path"))
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fail(errors.Unwrap(err))
	}
	f.Close()
	dsn := "file:" + path + "?_pragma=busy_timeout(" + fmt.Sprint(DBTimeout.Milliseconds()) + ")&_pragma=locking_mode(EXCLUSIVE)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(ON)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return fail(err)
	}
	// One connection: writes are serialized in this process, and the
	// pragmas above hold for every statement.
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*DBTimeout)
	defer cancel()
	var version int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		db.Close()
		return fail(err)
	}
	if version > dbVersion {
		db.Close()
		return fail(fmt.Errorf("schema version %d is newer than this fullsend (%d)", version, dbVersion))
	}
	schema := dbSchema
	if version == 1 {
		schema = migrate1to2
	}
	if err := execTx(ctx, db, schema); err != nil {
		db.Close()
		return fail(err)
	}
	return &sqlStore{db: db, path: path}, nil
}

// execTx runs the statements of script in one transaction (a migration
// applies whole or not at all).
func execTx(ctx context.Context, db *sql.DB, script string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, script); err != nil {
		return err
	}
	return tx.Commit()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func (s *sqlStore) fail(op string, err error) error {
	return fmt.Errorf("session database %s: %s: %s", s.path, op, oneLine(err.Error()))
}

func (s *sqlStore) Turns(session string) (int, error) {
	var n int
	if err := s.db.QueryRow("SELECT COALESCE(MAX(turn), 0) FROM turns WHERE session = ?", session).Scan(&n); err != nil {
		return 0, s.fail("turns", err)
	}
	return n, nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// BeginTurn creates the session if needed and records the turn, in one
// transaction.
func (s *sqlStore) BeginTurn(t TurnRecord) error {
	imgs, _ := json.Marshal(nonNil(t.Images))
	tx, err := s.db.Begin()
	if err != nil {
		return s.fail("begin turn", err)
	}
	defer tx.Rollback()
	now := stamp(t.Started)
	if _, err := tx.Exec("INSERT INTO sessions (id, created, updated) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET updated = excluded.updated", t.Session, now, now); err != nil {
		return s.fail("begin turn", err)
	}
	if _, err := tx.Exec("INSERT INTO turns (session, turn, text, images, started) VALUES (?, ?, ?, ?, ?)", t.Session, t.Turn, t.Text, string(imgs), now); err != nil {
		return s.fail("begin turn", err)
	}
	if err := tx.Commit(); err != nil {
		return s.fail("begin turn", err)
	}
	return nil
}

// AddEvent writes one event (its own transaction: a killed process loses
// no event it reported).
func (s *sqlStore) AddEvent(session string, turn int, e Event) error {
	data, err := json.Marshal(e)
	if err != nil {
		return s.fail("event", err)
	}
	if _, err := s.db.Exec("INSERT INTO events (session, turn, data) VALUES (?, ?, ?)", session, turn, string(data)); err != nil {
		return s.fail("event", err)
	}
	return nil
}

func (s *sqlStore) EndTurn(t TurnRecord) error {
	u, _ := json.Marshal(t.Usage)
	now := stamp(time.Now())
	tx, err := s.db.Begin()
	if err != nil {
		return s.fail("end turn", err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec("UPDATE turns SET ended = ?, stop_reason = ?, usage = ?, error = ? WHERE session = ? AND turn = ?", now, t.StopReason, string(u), t.Error, t.Session, t.Turn); err != nil {
		return s.fail("end turn", err)
	}
	if _, err := tx.Exec("UPDATE sessions SET updated = ? WHERE id = ?", now, t.Session); err != nil {
		return s.fail("end turn", err)
	}
	if err := tx.Commit(); err != nil {
		return s.fail("end turn", err)
	}
	return nil
}

func (s *sqlStore) History(session string, turn func(TurnRecord) error, event func(int, Event) error) (int, error) {
	ts, err := s.turnRecords(session)
	if err != nil {
		return 0, err
	}
	for _, t := range ts {
		if err := turn(t); err != nil {
			return 0, err
		}
		if err := s.turnEvents(session, t.Turn, event); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

func (s *sqlStore) turnRecords(session string) ([]TurnRecord, error) {
	rows, err := s.db.Query("SELECT turn, text, images, started, ended IS NOT NULL, COALESCE(stop_reason, ''), COALESCE(usage, '{}'), COALESCE(error, '') FROM turns WHERE session = ? ORDER BY turn", session)
	if err != nil {
		return nil, s.fail("history", err)
	}
	defer rows.Close()
	var ts []TurnRecord
	for rows.Next() {
		t := TurnRecord{Session: session}
		var imgs, started, usage string
		if err := rows.Scan(&t.Turn, &t.Text, &imgs, &started, &t.Ended, &t.StopReason, &usage, &t.Error); err != nil {
			return nil, s.fail("history", err)
		}
		if json.Unmarshal([]byte(imgs), &t.Images) != nil || json.Unmarshal([]byte(usage), &t.Usage) != nil {
			return nil, s.fail("history", fmt.Errorf("session %s turn %d: malformed row", session, t.Turn))
		}
		t.Started, _ = time.Parse(time.RFC3339Nano, started)
		ts = append(ts, t)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("history", err)
	}
	return ts, nil
}

func (s *sqlStore) turnEvents(session string, turn int, event func(int, Event) error) error {
	rows, err := s.db.Query("SELECT data FROM events WHERE session = ? AND turn = ? ORDER BY id", session, turn)
	if err != nil {
		return s.fail("history", err)
	}
	var evs []Event
	for rows.Next() {
		var data string
		var e Event
		if err := rows.Scan(&data); err != nil {
			rows.Close()
			return s.fail("history", err)
		}
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			rows.Close()
			return s.fail("history", fmt.Errorf("session %s turn %d: malformed event", session, turn))
		}
		evs = append(evs, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s.fail("history", err)
	}
	// The single connection is free again: the callback may use the store.
	for _, e := range evs {
		if err := event(turn, e); err != nil {
			return err
		}
	}
	return nil
}

// SetState records the session's state (creating the session).
func (s *sqlStore) SetState(session, state string) error {
	now := stamp(time.Now())
	if _, err := s.db.Exec("INSERT INTO sessions (id, created, updated, state) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET state = excluded.state, updated = excluded.updated", session, now, now, state); err != nil {
		return s.fail("session state", err)
	}
	return nil
}

// State returns the session's recorded state ("" for an unknown session).
func (s *sqlStore) State(session string) (string, error) {
	var st string
	err := s.db.QueryRow("SELECT state FROM sessions WHERE id = ?", session).Scan(&st)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", s.fail("session state", err)
	}
	return st, nil
}

func (s *sqlStore) Close() error { return s.db.Close() }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
