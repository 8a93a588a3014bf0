package native

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/fullsend-ai/fullsend/internal/limit"
	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/rundir"
)

// transcriptKey is the per-user key of the transcripts' MAC chain (see
// rundir.Key): kept in the user's state directory, outside every
// workspace.
func transcriptKey() ([]byte, error) { return rundir.Key(os.Getenv) }

// transcriptLabel binds a transcript's MAC chain to its directory's name
// (the run id, chat session or child number).
func transcriptLabel(dir string) string { return filepath.Base(filepath.Clean(dir)) }

// TranscriptVersion is the format version of transcript.jsonl.
const TranscriptVersion = 1

// Record types of transcript.jsonl.
const (
	RecStart   = "start"   // loop configuration (system prompt, tools, model, limits)
	RecMessage = "message" // one conversation message
	RecStop    = "stop"    // the loop ended (reason)
	RecResume  = "resume"  // a later process continued the loop
	// RecSnapshot names the workspace snapshot taken at a turn boundary
	// or when the loop ended (or why none could be taken).
	RecSnapshot = "snapshot"
)

// Record is one line of transcript.jsonl.
type Record struct {
	V    int       `json:"v"`
	Seq  int       `json:"seq"`
	Type string    `json:"type"`
	Time time.Time `json:"time"`

	// start
	System string        `json:"system,omitempty"`
	Tools  []string      `json:"tools,omitempty"`
	Model  *model.Config `json:"model,omitempty"`
	Limits *Limits       `json:"limits,omitempty"`

	// message
	Turn      int            `json:"turn,omitempty"`
	Message   *model.Message `json:"message,omitempty"`
	Usage     *model.Usage   `json:"usage,omitempty"`
	Stop      string         `json:"stop,omitempty"` // model stop reason (assistant) / loop stop reason (stop)
	RequestID string         `json:"request_id,omitempty"`
	Tool      *ToolRecord    `json:"tool,omitempty"`

	// stop
	Error string `json:"error,omitempty"`

	// snapshot
	Snapshot *SnapshotRef `json:"snapshot,omitempty"`

	// compaction
	Compaction *Compaction `json:"compaction,omitempty"`
}

// ToolRecord describes the execution of one tool call (on RoleTool messages).
type ToolRecord struct {
	N          int     `json:"n"` // tool call number in this loop, from 1
	Name       string  `json:"name"`
	OutputFile string  `json:"output_file,omitempty"` // whole output, relative to the run dir
	Bytes      int     `json:"bytes"`
	Truncated  bool    `json:"truncated,omitempty"`
	DurationMS float64 `json:"duration_ms"`
	Blocked    string  `json:"blocked,omitempty"` // guard rule that refused the call
}

// State is the conversation state of a loop, as rebuilt from its
// transcript.
type State struct {
	System    string
	Tools     []string
	Model     model.Config
	Limits    Limits
	Messages  []model.Message
	Turns     int
	ToolCalls int // tool calls executed (numbering of tool-outputs/<n>.txt)
	Usage     model.Usage
	// Stopped is the reason of the last stop record after the last message
	// ("" when the process was killed before it could write one).
	Stopped string
	// Snapshot is the last snapshot record (nil: none was taken).
	Snapshot *SnapshotRef
	// LastInputTokens is the input size of the last model call since the
	// last compaction (what triggers the next one).
	LastInputTokens int64
	// toolFiles maps tool call ids to the run-directory files of their
	// whole outputs (listed by a compaction).
	toolFiles map[string]string
	seq       int
	mac       string // the last record's MAC (the chain goes on from it)
}

type transcript struct {
	f      *os.File
	seq    int
	redact func(string) string
	chain  *rundir.Chain
}

// createTranscript starts the transcript of rd (a new file: O_EXCL).
func createTranscript(rd *runDir) (*transcript, error) {
	key, err := transcriptKey()
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	f, err := rd.d.Create(TranscriptFile, 0o600)
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	return &transcript{f: f, redact: rd.redact, chain: rundir.NewChain(key, transcriptLabel(rd.dir))}, nil
}

// appendTranscript continues the transcript of rd whose state (read and
// verified by LoadState) is prior.
func appendTranscript(rd *runDir, prior *State) (*transcript, error) {
	key, err := transcriptKey()
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	chain, err := rundir.ResumeChain(key, prior.mac)
	if err != nil {
		return nil, fmt.Errorf("transcript %s: %w", filepath.Join(rd.dir, TranscriptFile), err)
	}
	if err := truncateCompleteLines(rd.d, TranscriptFile); err != nil {
		return nil, fmt.Errorf("transcript %s: %w", filepath.Join(rd.dir, TranscriptFile), err)
	}
	f, err := rd.d.Append(TranscriptFile, 0o600)
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	return &transcript{f: f, seq: prior.seq, redact: rd.redact, chain: chain}, nil
}

// write appends one record as one write(2) of a full line, so a killed
// process leaves at most one partial trailing line.
func (t *transcript) write(r Record) error {
	t.seq++
	r.V, r.Seq = TranscriptVersion, t.seq
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	if r.Message != nil {
		m := stripImageData(*r.Message)
		r.Message = &m
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("transcript: %w", err)
	}
	line := append(t.chain.Seal([]byte(t.redact(string(b)))), '\n')
	if _, err := t.f.Write(line); err != nil {
		return fmt.Errorf("transcript: %w", err)
	}
	return nil
}

func (t *transcript) close() error {
	if t == nil || t.f == nil {
		return nil
	}
	err := t.f.Close()
	t.f = nil
	return err
}

// stripImageData keeps image metadata (file, sha256, size) and drops the
// base64 pixels: transcripts stay small; Resume reloads them from File.
func stripImageData(m model.Message) model.Message {
	has := false
	for _, b := range m.Content {
		if b.Type == model.BlockImage && b.Data != "" {
			has = true
		}
	}
	if !has {
		return m
	}
	c := make([]model.Block, len(m.Content))
	copy(c, m.Content)
	for i := range c {
		if c[i].Type == model.BlockImage {
			c[i].Data = ""
		}
	}
	m.Content = c
	return m
}

// LoadState rebuilds the conversation state of the loop whose transcript is
// in runDir: the same messages, turn count, tool call numbering, usage,
// system prompt, tool set and limits as when the last record was written.
// A partial last line (a writer killed mid-line) is ignored. Images are
// reloaded from the run directory and checked against the sha256 and
// media type their record names.
//
// The run directory is untrusted input: every line must carry the MAC
// chain of this user's run key for this directory (see rundir.Chain), so
// a transcript someone else wrote, edited or copied from another run is
// refused, and no file is read through a symlink.
func LoadState(runDir string) (*State, error) {
	p := filepath.Join(runDir, TranscriptFile)
	d, err := rundir.Open(runDir)
	if err != nil {
		return nil, fmt.Errorf("transcript %s: %w", p, err)
	}
	defer d.Close()
	recs, lines, mac, err := verifiedRecords(d, runDir)
	if err != nil {
		return nil, err
	}
	st := &State{mac: mac}
	started := false
	for i, r := range recs {
		line := lines[i]
		st.seq = r.Seq
		switch r.Type {
		case RecStart:
			if started {
				continue
			}
			started = true
			st.System, st.Tools = r.System, r.Tools
			if r.Model != nil {
				st.Model = *r.Model
			}
			if r.Limits != nil {
				st.Limits = *r.Limits
			}
		case RecMessage:
			if r.Message == nil {
				return nil, fmt.Errorf("transcript %s:%d: message record without message", p, line)
			}
			m := *r.Message
			if err := loadImages(d, &m); err != nil {
				return nil, fmt.Errorf("transcript %s:%d: %w", p, line, err)
			}
			st.Messages = append(st.Messages, m)
			st.noteToolFile(m, r)
			st.Stopped = ""
			if r.Usage != nil {
				st.LastInputTokens = r.Usage.InputTokens
			}
			if r.Turn > st.Turns {
				st.Turns = r.Turn
			}
			if r.Usage != nil {
				st.Usage.Add(*r.Usage)
			}
			if r.Tool != nil && r.Tool.N > st.ToolCalls {
				st.ToolCalls = r.Tool.N
			}
		case RecStop:
			st.Stopped = r.Stop
		case RecResume:
		case RecCompaction:
			if r.Compaction == nil {
				return nil, fmt.Errorf("transcript %s:%d: compaction record without compaction", p, line)
			}
			msgs, err := applyCompaction(st.Messages, r.Compaction)
			if err != nil {
				return nil, fmt.Errorf("transcript %s:%d: %w", p, line, err)
			}
			st.Messages, st.LastInputTokens = msgs, 0
			if r.Turn > st.Turns {
				st.Turns = r.Turn
			}
			if r.Usage != nil {
				st.Usage.Add(*r.Usage)
			}
		case RecSnapshot:
			if r.Snapshot == nil {
				return nil, fmt.Errorf("transcript %s:%d: snapshot record without snapshot", p, line)
			}
			st.Snapshot = r.Snapshot
		default:
			return nil, fmt.Errorf("transcript %s:%d: unknown record type %q", p, line, r.Type)
		}
	}
	if !started {
		return nil, fmt.Errorf("transcript %s: no start record", p)
	}
	return st, nil
}

// noteToolFile remembers the output file of a tool result (rec's tool
// record) by its call id.
func (st *State) noteToolFile(m model.Message, rec Record) {
	if m.Role != model.RoleTool || rec.Tool == nil || rec.Tool.OutputFile == "" {
		return
	}
	if st.toolFiles == nil {
		st.toolFiles = map[string]string{}
	}
	st.toolFiles[m.ToolCallID] = rec.Tool.OutputFile
}

func isLastLine(data []byte, line int) bool {
	return bytes.Count(bytes.TrimRight(data, "\n"), []byte("\n"))+1 == line
}

// loadImages reads the pixels of m's image blocks back from the run
// directory d: the file must be a regular file of the user inside d, its
// sha256 (mandatory) must be the recorded one and its content must sniff
// as the recorded image type.
func loadImages(d *rundir.Dir, m *model.Message) error {
	for i := range m.Content {
		b := &m.Content[i]
		if b.Type != model.BlockImage || b.Data != "" {
			continue
		}
		if b.File == "" || !filepath.IsLocal(filepath.FromSlash(b.File)) {
			return errors.New("image block without a run-directory file")
		}
		if b.SHA256 == "" {
			return fmt.Errorf("image %s: the transcript records no sha256", b.File)
		}
		f, err := d.OpenFile(b.File)
		if err != nil {
			return fmt.Errorf("image %s: %w", b.File, err)
		}
		data, err := limit.ReadAll(f, MaxImageBytes)
		f.Close()
		if err != nil {
			return fmt.Errorf("image %s: %w", b.File, err)
		}
		if got := sha256Hex(data); got != b.SHA256 {
			return fmt.Errorf("image %s: sha256 %s, transcript says %s", b.File, got, b.SHA256)
		}
		if mt := http.DetectContentType(data); mt != b.MediaType || imageExt[mt] == "" {
			return fmt.Errorf("image %s: content is %s, transcript says %q", b.File, mt, b.MediaType)
		}
		b.Data = base64.StdEncoding.EncodeToString(data)
	}
	return nil
}

// pendingToolCalls returns the tool calls of the last assistant message
// that have no result yet (a run killed during tool execution).
func pendingToolCalls(msgs []model.Message) []model.ToolCall {
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 {
		return nil
	}
	done := map[string]bool{}
	for _, m := range msgs[last+1:] {
		if m.Role == model.RoleTool {
			done[m.ToolCallID] = true
		}
	}
	var out []model.ToolCall
	for _, tc := range msgs[last].ToolCalls {
		if !done[tc.ID] {
			out = append(out, tc)
		}
	}
	return out
}

// ReadTranscript returns the records of the transcript of runDir, checked
// as LoadState checks them (this user's MAC chain for this directory, no
// symlink, a torn last line dropped), for printing.
func ReadTranscript(runDir string) ([]Record, error) {
	d, err := rundir.Open(runDir)
	if err != nil {
		return nil, fmt.Errorf("transcript %s: %w", filepath.Join(runDir, TranscriptFile), err)
	}
	defer d.Close()
	recs, _, _, err := verifiedRecords(d, runDir)
	return recs, err
}

// verifiedRecords reads transcript.jsonl of d (open on runDir): every
// complete line must carry the MAC chain of this user's run key for this
// directory and be a record of the supported version. It returns the
// records with their line numbers and the last line's MAC. Only the last
// line may be partial (a writer killed mid-line): it is dropped.
func verifiedRecords(d *rundir.Dir, runDir string) ([]Record, []int, string, error) {
	p := filepath.Join(runDir, TranscriptFile)
	key, err := transcriptKey()
	if err != nil {
		return nil, nil, "", fmt.Errorf("transcript %s: %w", p, err)
	}
	data, err := d.ReadFile(TranscriptFile)
	if err != nil {
		return nil, nil, "", fmt.Errorf("transcript %s: %w", p, err)
	}
	chain := rundir.NewChain(key, transcriptLabel(runDir))
	var recs []Record
	var lines []int
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		raw := sc.Bytes()
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		if isLastLine(data, line) && data[len(data)-1] != '\n' {
			break
		}
		if err := chain.Verify(raw); err != nil {
			return nil, nil, "", fmt.Errorf("transcript %s:%d: %w", p, line, err)
		}
		var r Record
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, nil, "", fmt.Errorf("transcript %s:%d: %v", p, line, err)
		}
		if r.V != TranscriptVersion {
			return nil, nil, "", fmt.Errorf("transcript %s:%d: version %d not supported (want %d)", p, line, r.V, TranscriptVersion)
		}
		recs, lines = append(recs, r), append(lines, line)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, "", fmt.Errorf("transcript %s: %w", p, err)
	}
	return recs, lines, chain.Last(), nil
}
