package fetchsvc

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/cas"
)

// A log line is one line ("fullsend: " prefix, newlines flattened), never
// carries the token, and is cut at maxLogLine bytes.
func TestLogLine(t *testing.T) {
	store, err := cas.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	s, err := New(Options{Allowed: []string{"https://github.com/o/"}, Store: store, Scanner: nopScanner{}, Audit: audit.Open(t.TempDir() + "/a"), Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	s.logf("a %s\nb", s.Token())
	s.logf("%s", strings.Repeat("x", 3*maxLogLine))
	s.logf("short")
	lines := strings.Split(log.String(), "\n")
	if len(lines) != 4 || lines[3] != "" {
		t.Fatalf("want 3 lines, got %q", log.String())
	}
	if lines[0] != "fullsend: a [token] b" {
		t.Errorf("line 1 = %q", lines[0])
	}
	if want := "fullsend: " + strings.Repeat("x", maxLogLine) + "…"; lines[1] != want {
		t.Errorf("line 2 has %d bytes, want %d", len(lines[1]), len(want))
	}
	if lines[2] != "fullsend: short" {
		t.Errorf("line 3 = %q", lines[2])
	}
	if strings.Contains(log.String(), s.Token()) {
		t.Error("token in the log")
	}
}
