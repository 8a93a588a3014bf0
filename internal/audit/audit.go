package audit

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"
)

// FileName is the audit log's name inside the cache directory.
const FileName = "audit.jsonl"

// Fetch types recorded in Entry.FetchType.
const (
	FetchStatic  = "static"  // resolved before the run
	FetchRuntime = "runtime" // requested by an agent during the run
	// What a remote base harness brings in (seed 000's list): the base
	// itself and its declarative resources, its skill directories (and
	// their dependencies), and its scripts (never fetched: a vendored
	// copy recorded in lock.yaml stands in for them).
	FetchBaseResource = "base_resource"
	FetchBaseSkill    = "base_skill"
	FetchBaseScript   = "base_script"
)

// Entry is one fetch (or cache hit) in the audit log.
type Entry struct {
	TraceID   string    `json:"trace_id"`
	FetchTime time.Time `json:"fetch_time"`
	URL       string    `json:"url"`
	SHA256    string    `json:"sha256"`
	FetchType string    `json:"fetch_type"`
	AllowedBy string    `json:"allowed_by"` // the allowlist entry that matched
	CacheHit  bool      `json:"cache_hit"`
	// Source says where the bytes came from: SourceCache, SourceRegistry
	// or SourceForge ("" for writers that do not tell).
	Source string `json:"source,omitempty"`
	// Anomaly, on an entry recording an anomalous fetch (how a run's
	// fetches differ from lock.yaml, or its runtime fetches from earlier
	// runs), is its kind: new_host, new_prefix, changed_pin or
	// runtime_fetches; Detail says what differs.
	Anomaly string `json:"anomaly,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// Sources recorded in Entry.Source.
const (
	SourceCache    = "cache"    // the local cache (verified on read)
	SourceRegistry = "registry" // the shared OCI cache tier (cache.oci)
	SourceForge    = "forge"    // where the reference points: its forge, or the https host of a plain file URL
	SourceVendor   = "vendor"   // a vendored copy in the fullsend dir (lock.yaml vendor:), hash-checked
)

// Path returns the audit log of a cache directory: <cacheDir>/audit.jsonl.
func Path(cacheDir string) string { return filepath.Join(cacheDir, FileName) }

// Log appends entries to one audit file. It is safe for concurrent use and
// holds no open file between appends.
type Log struct{ path string }

// Open returns the log at path; the file is created on the first Append.
func Open(path string) *Log { return &Log{path: path} }

// Path returns the file the log appends to.
func (l *Log) Path() string { return l.path }

// Append writes e as one line. A zero FetchTime is set to now (UTC).
func (l *Log) Append(e Entry) error {
	if e.FetchTime.IsZero() {
		e.FetchTime = time.Now().UTC()
	}
	if line, ok := appendEntry(make([]byte, 0, 320), &e); ok {
		if err := appendLine(l.path, line); err != nil {
			return fmt.Errorf("append %s: %w", l.path, err)
		}
		return nil
	}
	return AppendJSONL(l.path, e)
}

// appendEntry appends e as one line of JSON, byte for byte what
// json.Marshal writes, when every string is plain (printable ASCII that
// encoding/json does not escape) and the time is within json.Marshal's
// years 0-9999 with a whole-minute offset; otherwise it reports false and AppendJSONL encodes it.
func appendEntry(b []byte, e *Entry) ([]byte, bool) {
	if e.Anomaly != "" || e.Detail != "" {
		return nil, false // rare: encoding/json writes them
	}
	if y := e.FetchTime.Year(); y < 0 || y > 9999 {
		return nil, false
	}
	if _, off := e.FetchTime.Zone(); off%60 != 0 || off <= -24*3600 || off >= 24*3600 {
		return nil, false // json.Marshal refuses such offsets
	}
	for _, s := range [...]string{e.TraceID, e.URL, e.SHA256, e.FetchType, e.AllowedBy, e.Source} {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return nil, false
			}
		}
	}
	b = append(b, `{"trace_id":"`...)
	b = append(b, e.TraceID...)
	b = append(b, `","fetch_time":"`...)
	b = e.FetchTime.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","url":"`...)
	b = append(b, e.URL...)
	b = append(b, `","sha256":"`...)
	b = append(b, e.SHA256...)
	b = append(b, `","fetch_type":"`...)
	b = append(b, e.FetchType...)
	b = append(b, `","allowed_by":"`...)
	b = append(b, e.AllowedBy...)
	b = append(b, `","cache_hit":`...)
	if e.CacheHit {
		b = append(b, "true"...)
	} else {
		b = append(b, "false"...)
	}
	if e.Source != "" {
		b = append(b, `,"source":"`...)
		b = append(b, e.Source...)
		b = append(b, '"')
	}
	b = append(b, "}\n"...)
	return b, true
}

// AppendJSONL appends v, encoded as one line of JSON, to the file at path
// with a single write(2) on an O_APPEND descriptor, creating the file (0600)
// and its parent directory (0700) when missing. A symlink, FIFO or other
// non-regular file at path is an error and is never written through. It is
// safe to call from many goroutines and processes on the same file.
func AppendJSONL(path string, v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("append %s: encoding record: %w", path, err)
	}
	line = append(line, '\n')
	if err := appendLine(path, line); err != nil {
		return fmt.Errorf("append %s: %w", path, err)
	}
	return nil
}
