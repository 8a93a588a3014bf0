//go:build linux || darwin

package progress

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/creack/pty"
	"golang.org/x/term"
)

// onPTY runs f with the slave side of a new pseudo-terminal (of cols
// columns) and returns every byte f wrote to it, as read on the master.
func onPTY(t *testing.T, cols uint16, f func(tty *os.File)) string {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: cols}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(&out, ptmx) // ends with EIO once the slave is closed
	}()
	f(tty)
	tty.Close()
	<-done
	return out.String()
}

// TestLiveOnTerminal: on a real terminal the reporter detects the width,
// draws the status line in place with cursor control sequences, writes
// permanent lines above it, and ends with the summary and the line erased.
func TestLiveOnTerminal(t *testing.T) {
	for _, color := range []bool{true, false} {
		out := onPTY(t, 70, func(tty *os.File) {
			if !term.IsTerminal(int(tty.Fd())) {
				t.Fatal("the pty slave is not a terminal")
			}
			runSession(New(tty, Options{Mode: Live, Color: color, Tick: -1, Now: newClock().now}))
		})
		for _, want := range []string{"\x1b[2K\r", "\x1b[0K", "resolving 1/2", "agent[1]", "turn 1", "fullsend: fetched https://github.com/o/r/tree/v1/skills/s", "finished in "} {
			if !strings.Contains(out, want) {
				t.Errorf("color=%v: terminal output lacks %q: %q", color, want, out)
			}
		}
		if got := sgr.MatchString(out); got != color {
			t.Errorf("color=%v: colour sequences present = %v: %q", color, got, out)
		}
		// Status lines fit the 70 columns the terminal reported.
		for _, seg := range strings.Split(out, "\r") {
			seg = strings.SplitN(seg, "\x1b[0K", 2)[0]
			if strings.HasPrefix(seg, "fullsend") || strings.HasPrefix(seg, "\n") || seg == "" {
				continue
			}
			if n := len([]rune(sgr.ReplaceAllString(seg, ""))); n > 70 {
				t.Errorf("status line of %d runes on a 70-column terminal: %q", n, seg)
			}
		}
		// The last thing on the screen is the summary, after the status line
		// was erased.
		tail := out[strings.LastIndex(out, "\x1b[2K"):]
		if !strings.Contains(tail, "finished in ") {
			t.Errorf("color=%v: output does not end with the erased status line and the summary: %q", color, tail)
		}
	}
}
