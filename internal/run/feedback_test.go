package run

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestFeedbackModes: a real validation script writes to stdout and
// stderr and exits 3; each feedback_mode feeds back what it documents.
func TestFeedbackModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("host scripts run through /bin/sh")
	}
	d := t.TempDir()
	script := filepath.Join(d, "v.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho OUT-LINE\necho ERR-LINE >&2\nexit 3\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	sr, err := runValidationScript(context.Background(), script, filepath.Join(d, "v.log"), nil, &Plan{})
	if err != nil || sr.err == nil {
		t.Fatalf("script run: %v, %v", sr, err)
	}
	schema := []string{"/status: missing"}
	for _, c := range []struct {
		mode      string
		want, not []string
	}{
		{"", []string{"/status: missing", "validation script: ", "status 3", "OUT-LINE", "ERR-LINE"}, nil},
		{FeedbackStdout, []string{"/status: missing", "exited with status 3; its stdout:\nOUT-LINE"}, []string{"ERR-LINE"}},
		{FeedbackStderr, []string{"/status: missing", "exited with status 3; its stderr:\nERR-LINE"}, []string{"OUT-LINE"}},
		{FeedbackExitCode, []string{"/status: missing", "validation script exited with status 3"}, []string{"OUT-LINE", "ERR-LINE"}},
		{FeedbackNone, nil, []string{"missing", "status 3", "LINE"}},
	} {
		got := nextFeedback(c.mode, 2, schema, sr, "earlier feedback")
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("mode %q: feedback %q lacks %q", c.mode, got, w)
			}
		}
		for _, n := range append(c.not, "earlier feedback", "iteration 2:") {
			if strings.Contains(got, n) {
				t.Errorf("mode %q: feedback %q holds %q", c.mode, got, n)
			}
		}
		if c.mode == FeedbackNone && got != "" {
			t.Errorf("mode none: feedback %q", got)
		}
	}
	// append: every failed iteration's feedback, oldest first.
	f1 := nextFeedback(FeedbackAppend, 1, []string{"first problem"}, nil, "")
	f2 := nextFeedback(FeedbackAppend, 2, schema, sr, f1)
	if f1 != "iteration 1:\nfirst problem" || !strings.HasPrefix(f2, f1+"\niteration 2:\n/status: missing\nvalidation script: ") || !strings.Contains(f2, "ERR-LINE") {
		t.Errorf("append: %q then %q", f1, f2)
	}
}
