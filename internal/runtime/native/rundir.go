package native

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/rundir"
)

// Files written into the run directory (relative to it).
const (
	TranscriptFile    = "transcript.jsonl"
	CallsFile         = "calls.jsonl"
	ToolOutputsDir    = "tool-outputs"
	ImagesDir         = "images"
	SkillRegistryFile = "skill-registry.json"
	ChildrenDir       = "children"
)

// runDir writes the artifacts of one loop. Every byte it writes passes
// through redact (the model API key never reaches the disk). Every access
// goes through d (package rundir: no symlink followed, no file of another
// user used, new files O_EXCL, rewrites by rename).
type runDir struct {
	dir    string
	d      *rundir.Dir
	redact func(string) string

	mu    sync.Mutex
	calls *os.File
	logs  map[string]*os.File // provenance files (appendJSONL), by name
}

func newRunDir(dir string, redact func(string) string) (*runDir, error) {
	if dir == "" {
		return nil, fmt.Errorf("native: no run directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("run dir %s: %w", dir, err)
	}
	d, err := rundir.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("run dir %s: %w", dir, err)
	}
	return openedRunDir(d, redact)
}

func openedRunDir(d *rundir.Dir, redact func(string) string) (*runDir, error) {
	if err := d.MkdirAll(ToolOutputsDir, 0o700); err != nil {
		d.Close()
		return nil, fmt.Errorf("run dir %s: %w", d.Path(), err)
	}
	if redact == nil {
		redact = func(s string) string { return s }
	}
	return &runDir{dir: d.Path(), d: d, redact: redact}, nil
}

// child makes (or reopens) the directory rel inside r for a child loop,
// with r's redaction.
func (r *runDir) child(rel string) (*runDir, error) {
	if err := r.d.MkdirAll(rel, 0o700); err != nil {
		return nil, err
	}
	d, err := r.d.Sub(rel)
	if err != nil {
		return nil, err
	}
	return openedRunDir(d, r.redact)
}

// recordCall appends one model API call record to calls.jsonl.
func (r *runDir) recordCall(extra map[string]any, c model.Call) {
	b, err := json.Marshal(c)
	if err != nil {
		return
	}
	if len(extra) > 0 {
		// Merge the extra keys (e.g. "loop") into the object.
		var m map[string]any
		if json.Unmarshal(b, &m) == nil {
			for k, v := range extra {
				m[k] = v
			}
			if b2, err := json.Marshal(m); err == nil {
				b = b2
			}
		}
	}
	line := append([]byte(r.redact(string(b))), '\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		f, err := r.d.Append(CallsFile, 0o600)
		if err != nil {
			return
		}
		r.calls = f
	}
	_, _ = r.calls.Write(line)
}

// writeToolOutput keeps the whole output of tool call n.
func (r *runDir) writeToolOutput(n int, text string) (string, error) {
	rel := filepath.ToSlash(filepath.Join(ToolOutputsDir, strconv.Itoa(n)+".txt"))
	return rel, r.d.WriteAtomic(rel, []byte(r.redact(text)), 0o600)
}

// writeImage stores image bytes of tool call n; returns the relative path.
func (r *runDir) writeImage(n int, ext string, data []byte) (string, error) {
	if err := r.d.MkdirAll(ImagesDir, 0o700); err != nil {
		return "", err
	}
	rel := filepath.ToSlash(filepath.Join(ImagesDir, strconv.Itoa(n)+ext))
	return rel, r.d.WriteAtomic(rel, data, 0o600)
}

// writeJSON writes v (indented) atomically at rel.
func (r *runDir) writeJSON(rel string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = append([]byte(r.redact(string(b))), '\n')
	return r.d.WriteAtomic(rel, b, 0o600)
}

func (r *runDir) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls != nil {
		_ = r.calls.Close()
		r.calls = nil
	}
	for _, f := range r.logs {
		_ = f.Close()
	}
	r.logs = nil
	if r.d != nil {
		_ = r.d.Close()
		r.d = nil
	}
}

// bound cuts text for the model: at most max bytes, keeping the head and a
// tail, with a marker naming the full size and where the whole output is.
func bound(text string, max int, file string) (string, bool) {
	if len(text) <= max {
		return text, false
	}
	marker := fmt.Sprintf("\n\n[... output truncated: %d bytes total, %d shown; the full output is kept in the run directory as %s ...]\n\n", len(text), max, file)
	budget := max - len(marker)
	if budget < 0 {
		budget = 0
	}
	head := budget * 3 / 4
	tail := budget - head
	h := cutRunes(text, head, true)
	t := cutRunes(text, tail, false)
	return h + marker + t, true
}

// cutRunes returns at most n bytes from the start (head) or end of s, on
// UTF-8 boundaries.
func cutRunes(s string, n int, head bool) string {
	if n <= 0 {
		return ""
	}
	if n >= len(s) {
		return s
	}
	if head {
		for n > 0 && !isRuneStart(s[n]) {
			n--
		}
		return s[:n]
	}
	i := len(s) - n
	for i < len(s) && !isRuneStart(s[i]) {
		i++
	}
	return s[i:]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// truncateCompleteLines drops a partial trailing line of the JSONL file
// rel of d (left by a killed writer) so appends start on a fresh line.
func truncateCompleteLines(d *rundir.Dir, rel string) error {
	data, err := d.ReadFile(rel)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	if len(data) == 0 || data[len(data)-1] == '\n' {
		return nil
	}
	i := bytes.LastIndexByte(data, '\n')
	f, err := d.OpenWrite(rel)
	if err != nil {
		return err
	}
	err = f.Truncate(int64(i + 1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }
