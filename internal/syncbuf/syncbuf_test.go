package syncbuf_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/syncbuf"
)

// TestConcurrentWrites: writes from many goroutines all arrive whole, and
// String may run meanwhile (run with -race).
func TestConcurrentWrites(t *testing.T) {
	var b syncbuf.Buffer
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				if n, err := b.Write([]byte("line\n")); n != 5 || err != nil {
					t.Errorf("Write = %d, %v", n, err)
				}
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("line\n", 800) {
		t.Fatalf("got %d bytes, want %d", len(got), 800*5)
	}
}

// TestMax: a bounded buffer keeps whole writes until it holds more than
// Max bytes, then drops the rest while reporting them written.
func TestMax(t *testing.T) {
	b := syncbuf.Buffer{Max: 4}
	for _, w := range []string{"abc", "de", "fg", "h"} {
		if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	if got := b.String(); got != "abcde" {
		t.Errorf("kept %q, want %q", got, "abcde")
	}
}
