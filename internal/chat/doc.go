// Package chat serves `fullsend chat`: a native agent held open for a
// conversation, spoken to in NDJSON over standard input and output.
//
// # Protocol
//
// One request per input line: user_message (a turn: session, text,
// optional images), history (replay a session) or cancel (stop a
// session's turn). One envelope per output line: turn_start, event (a
// runtime.Event as kind/name/id/text/..., or a streamed "delta"),
// turn_end (stop_reason, usage, error), history_end (counts, dropped) and
// error. protocol.schema.json (draft 2020-12, embedded as Schema) defines
// both directions; ValidateLine checks a line against it. A malformed
// line, an unknown type, a bad session id (1-64 of [A-Za-z0-9._-], it
// names a directory), an over-long line (MaxLine) or text (MaxText) is an
// error envelope, and the stream goes on.
//
// # Turns
//
// Server reads requests while turns run, so cancel and history answer at
// once. A session has at most one turn accepted and not ended; another
// user_message for it waits in the session's queue (at most MaxQueued,
// then an error envelope) and becomes the session's next turn when that
// one ends, in the order received (its turn_start follows the turn_end).
// Turns of all sessions run one at a time, in the order accepted, which
// is also what lets Delta route the runtime's streamed pieces to the
// running turn. cancel cancels the turn's context (a turn still waiting
// for its place ends at once) and drops the session's queued messages,
// saying how many in an error envelope: the client asked it to stop.
// Queued messages live in memory only; they are stored when their turn
// begins.
// With Options.IdleTimeout and Suspend, no turn for IdleTimeout suspends
// the sandbox (the turn slot held meanwhile) and records the sessions
// served suspended; the next turn first calls Wake (suspend.go). Sessions
// are recorded running when their turn starts, terminated when Serve ends.
// Options.Run does the work (the CLI: the native runtime continuing the
// session's transcript); its events are stored and sent, deltas only sent.
// At end of input Serve waits for the turns in flight; when its context
// ends they are canceled. Every text that leaves the process passes
// Options.Redact (the model API key) on top of the runtime's own
// redaction.
//
// # Stores
//
// OpenSQLite: tables sessions (with state: running, suspended,
// terminated), turns, events (JSON, indexed by session and turn), PRAGMA
// user_version 2 (version 1 is migrated in one transaction, its sessions
// terminated; a newer version is refused), WAL, held
// exclusively by the process (locking_mode EXCLUSIVE: a second process
// fails after busy_timeout DBTimeout), file created 0600; each event is its own
// transaction, a turn's start and end one each. Any failure is one line:
// "session database FILE: reason". NewMemoryStore keeps everything of the
// process, at most N events over all sessions (oldest dropped, counted per
// session and reported by history).
package chat
