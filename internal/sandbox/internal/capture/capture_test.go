package capture

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
)

func TestBudgetSharedByStreams(t *testing.T) {
	calls := 0
	b := New(10, func() { calls++ })
	var out, errb, live bytes.Buffer
	ow, ew := b.Writer(&out, &live), b.Writer(&errb, nil)
	if n, err := ow.Write([]byte("123456")); n != 6 || err != nil {
		t.Fatalf("first write: %d %v", n, err)
	}
	if b.Exceeded() {
		t.Fatal("exceeded within budget")
	}
	n, err := ew.Write([]byte("abcdef"))
	if n != 4 || !errors.Is(err, ErrExceeded) {
		t.Fatalf("over-budget write: %d %v", n, err)
	}
	if n, err := ow.Write([]byte("x")); n != 0 || !errors.Is(err, ErrExceeded) {
		t.Errorf("write after exhaustion: %d %v", n, err)
	}
	if out.String() != "123456" || errb.String() != "abcd" || live.String() != "123456" {
		t.Errorf("kept %q %q live %q", out.String(), errb.String(), live.String())
	}
	if !b.Exceeded() || calls != 1 {
		t.Errorf("exceeded %v, callback calls %d", b.Exceeded(), calls)
	}
}

func TestBudgetExactFitIsNotExceeded(t *testing.T) {
	b := New(5, nil)
	var out bytes.Buffer
	if _, err := io.Copy(b.Writer(&out, nil), strings.NewReader("12345")); err != nil || b.Exceeded() {
		t.Errorf("exact fit: %v exceeded=%v", err, b.Exceeded())
	}
}

func TestBudgetConcurrentWriters(t *testing.T) {
	b := New(1000, nil)
	var wg sync.WaitGroup
	bufs := make([]bytes.Buffer, 4)
	for i := range bufs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			w := b.Writer(&bufs[i], nil)
			for j := 0; j < 100; j++ {
				if _, err := w.Write([]byte("0123456789")); err != nil {
					return
				}
			}
		}(i)
	}
	wg.Wait()
	total := 0
	for i := range bufs {
		total += bufs[i].Len()
	}
	if total != 1000 || !b.Exceeded() {
		t.Errorf("kept %d bytes, exceeded %v; want exactly 1000 and true", total, b.Exceeded())
	}
}
