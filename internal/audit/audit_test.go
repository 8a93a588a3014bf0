package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const childEnv = "FULLSEND_AUDIT_TEST_CHILD"

// TestMain lets the test binary act as a concurrent appender process.
func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(child(spec))
	}
	os.Exit(m.Run())
}

// child appends n records to path: spec is "path|writer|n|pad".
func child(spec string) int {
	parts := strings.Split(spec, "|")
	n, _ := strconv.Atoi(parts[2])
	pad, _ := strconv.Atoi(parts[3])
	for i := range n {
		if err := AppendJSONL(parts[0], record{Writer: parts[1], Seq: i, Pad: strings.Repeat("x", pad)}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

type record struct {
	Writer string `json:"writer"`
	Seq    int    `json:"seq"`
	Pad    string `json:"pad"`
}

// checkRecords asserts that every line of path is one whole record and that
// each writer's records are all present, in order.
func checkRecords(t *testing.T, path string, writers []string, n, pad int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	next := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	lines := 0
	for sc.Scan() {
		lines++
		var r record
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("line %d is not one record (interleaved write?): %v", lines, err)
		}
		if len(r.Pad) != pad {
			t.Fatalf("line %d: pad of %d bytes, want %d", lines, len(r.Pad), pad)
		}
		if r.Seq != next[r.Writer] {
			t.Fatalf("line %d: writer %s seq %d, want %d", lines, r.Writer, r.Seq, next[r.Writer])
		}
		next[r.Writer]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, w := range writers {
		if next[w] != n {
			t.Errorf("writer %s: %d records, want %d", w, next[w], n)
		}
	}
	if lines != len(writers)*n {
		t.Errorf("%d lines, want %d", lines, len(writers)*n)
	}
}

func TestPath(t *testing.T) {
	if got, want := Path("/c"), filepath.Join("/c", "audit.jsonl"); got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
}

func TestAppendFormatAndPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	l := Open(Path(dir))
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := Entry{TraceID: "t1", FetchTime: when, URL: "https://x.example/a\nb", SHA256: strings.Repeat("a", 64), FetchType: FetchRuntime, AllowedBy: "https://x.example/", CacheHit: true}
	if err := l.Append(e); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(Entry{TraceID: "t2"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines (a newline inside a field must be escaped), got %d: %q", len(lines), b)
	}
	want := `{"trace_id":"t1","fetch_time":"2026-01-02T03:04:05Z","url":"https://x.example/a\nb","sha256":"` + strings.Repeat("a", 64) + `","fetch_type":"runtime","allowed_by":"https://x.example/","cache_hit":true}`
	if lines[0] != want {
		t.Errorf("line 1\n got %s\nwant %s", lines[0], want)
	}
	var e2 Entry
	if err := json.Unmarshal([]byte(lines[1]), &e2); err != nil {
		t.Fatal(err)
	}
	if e2.FetchTime.IsZero() || time.Since(e2.FetchTime) > time.Minute {
		t.Errorf("zero FetchTime not filled with now: %v", e2.FetchTime)
	}
	fi, err := os.Stat(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("file mode %o, want 600", perm)
	}
	di, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := di.Mode().Perm(); perm != 0o700 {
		t.Errorf("dir mode %o, want 700", perm)
	}
}

func TestAppendKeepsExistingContent(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.jsonl")
	if err := os.WriteFile(p, []byte("{\"old\":1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := AppendJSONL(p, map[string]int{"new": 2}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if string(b) != "{\"old\":1}\n{\"new\":2}\n" {
		t.Errorf("file = %q", b)
	}
}

func TestAppendErrors(t *testing.T) {
	dir := t.TempDir()
	// Unencodable value: nothing is written.
	p := filepath.Join(dir, "f.jsonl")
	err := AppendJSONL(p, map[string]any{"c": make(chan int)})
	if err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("err = %v, want an error naming %s", err, p)
	}
	if _, serr := os.Stat(p); !os.IsNotExist(serr) {
		t.Errorf("file created despite encoding failure")
	}
	// Path is a directory.
	if err := AppendJSONL(dir, 1); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("err = %v, want an error naming %s", err, dir)
	}
}

// Large records make a split write visible: if a record were written in
// pieces, another writer's record could land between them.
const padBytes = 16 << 10

func TestConcurrentGoroutines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "audit.jsonl")
	const writers, n = 8, 50
	var names []string
	var wg sync.WaitGroup
	for w := range writers {
		name := fmt.Sprintf("g%d", w)
		names = append(names, name)
		wg.Go(func() {
			for i := range n {
				if err := AppendJSONL(p, record{Writer: name, Seq: i, Pad: strings.Repeat("y", padBytes)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	checkRecords(t, p, names, n, padBytes)
}

func TestConcurrentProcesses(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "audit.jsonl")
	const procs, n = 6, 60
	var names []string
	var cmds []*exec.Cmd
	for w := range procs {
		name := fmt.Sprintf("p%d", w)
		names = append(names, name)
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|%d|%d", childEnv, p, name, n, padBytes))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("appender process: %v", err)
		}
	}
	checkRecords(t, p, names, n, padBytes)
}

// TestControlCharactersEscaped: no field can start a new line or carry a
// raw control character (terminal escapes included) into the log.
func TestControlCharactersEscaped(t *testing.T) {
	p := filepath.Join(t.TempDir(), FileName)
	evil := "https://x.example/a\r\nb\x1b[31m\u2028c\u2029\x00\x7f"
	if err := Open(p).Append(Entry{TraceID: "t\n", URL: evil, AllowedBy: "\r"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSuffix(string(b), "\n")
	if strings.ContainsAny(line, "\r\n\x1b\x00\u2028\u2029") {
		t.Fatalf("raw control character in the log line: %q", line)
	}
	var e Entry
	if err := json.Unmarshal([]byte(line), &e); err != nil || e.URL != evil {
		t.Fatalf("round trip: %q, %v", e.URL, err)
	}
}
