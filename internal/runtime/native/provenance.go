package native

import (
	"encoding/json"
	"os"
	"time"
)

// Provenance files of the run directory: one JSON line per skill file the
// model read (read_skill_resource) and per skill script it ran
// (run_skill_script), with the digest of the bytes actually read or run.
// A child loop (delegate_task) writes its own, in its own directory.
const (
	SkillReadsFile   = "skill-reads.jsonl"
	SkillScriptsFile = "skill-scripts.jsonl"
)

// SkillRead is one line of skill-reads.jsonl.
type SkillRead struct {
	Time time.Time `json:"time"`
	// Turn is the model turn that asked for the read, ToolCall the tool
	// call's number in the run (as in transcript.jsonl and
	// tool-outputs/N.txt), CallID the model's id of the call.
	Turn     int    `json:"turn"`
	ToolCall int    `json:"tool_call"`
	CallID   string `json:"call_id,omitempty"`
	Skill    string `json:"skill"`
	Source   string `json:"source"` // harness | runtime_fetch (see Skill)
	Path     string `json:"path"`   // relative to the skill's directory
	SHA256   string `json:"sha256"` // of the bytes read
	Size     int    `json:"size"`
	// Error says why the content was not handed to the model (a binary
	// file), else empty.
	Error string `json:"error,omitempty"`
}

// SkillScriptRun is one line of skill-scripts.jsonl: a script the runtime
// ran, or refused to run because its sandbox copy did not match the
// registry's digest.
type SkillScriptRun struct {
	Time       time.Time `json:"time"` // when it started
	Turn       int       `json:"turn"`
	ToolCall   int       `json:"tool_call"`
	CallID     string    `json:"call_id,omitempty"`
	Skill      string    `json:"skill"`
	Path       string    `json:"path"`   // relative to the skill's directory
	SHA256     string    `json:"sha256"` // of the script as read before running it
	Args       []string  `json:"args,omitempty"`
	ExitCode   int       `json:"exit_code"`
	TimedOut   bool      `json:"timed_out,omitempty"`
	DurationMS float64   `json:"duration_ms"`
	// Error: the script was not run (digest mismatch) or the sandbox
	// could not run it; ExitCode is then -1.
	Error string `json:"error,omitempty"`
}

// appendJSONL appends v as one line of the JSONL file rel (kept open until
// close), redacted like every other byte of the run directory. A record
// that cannot be written fails the tool call it describes (the skill
// tools hand nothing to the model that is not on record).
func (r *runDir) appendJSONL(rel string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	line := append([]byte(r.redact(string(b))), '\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.logs[rel]
	if f == nil {
		if r.d == nil {
			return os.ErrClosed
		}
		if err := truncateCompleteLines(r.d, rel); err != nil {
			return err
		}
		f, err = r.d.Append(rel, 0o600)
		if err != nil {
			return err
		}
		if r.logs == nil {
			r.logs = map[string]*os.File{}
		}
		r.logs[rel] = f
	}
	_, err = f.Write(line)
	return err
}

// recordSkillRead appends rec to skill-reads.jsonl, filling in the time,
// turn and call.
func (l *loop) recordSkillRead(n int, rec SkillRead) error {
	rec.Time, rec.Turn, rec.ToolCall, rec.CallID = time.Now().UTC(), l.st.Turns, n, l.callID
	return l.rd.appendJSONL(SkillReadsFile, rec)
}

// recordSkillScript appends rec to skill-scripts.jsonl, filling in the
// turn and call.
func (l *loop) recordSkillScript(n int, rec SkillScriptRun) error {
	rec.Turn, rec.ToolCall, rec.CallID = l.st.Turns, n, l.callID
	return l.rd.appendJSONL(SkillScriptsFile, rec)
}
