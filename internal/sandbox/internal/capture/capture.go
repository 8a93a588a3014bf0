package capture

import (
	"bytes"
	"errors"
	"io"
	"sync"
)

// ErrExceeded is returned by a Writer once the shared budget is spent.
var ErrExceeded = errors.New("output budget exceeded")

// Budget is the byte budget shared by the output streams of one command.
type Budget struct {
	mu       sync.Mutex
	left     int64
	exceeded bool
	onExceed func()
}

// New returns a budget of max bytes (max <= 0: nothing may be kept). onExceed
// (may be nil) is called once, from the writer that first went past it.
func New(max int64, onExceed func()) *Budget {
	if max < 0 {
		max = 0
	}
	return &Budget{left: max, onExceed: onExceed}
}

// Exceeded reports whether some output went past the budget.
func (b *Budget) Exceeded() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.exceeded
}

// take reserves up to n bytes and reports how many were granted and whether
// this call spent the budget for the first time.
func (b *Budget) take(n int) (int, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if int64(n) <= b.left {
		b.left -= int64(n)
		return n, false
	}
	granted := int(b.left)
	b.left = 0
	first := !b.exceeded
	b.exceeded = true
	return granted, first
}

// Writer keeps what the budget allows in buf and copies it to live (when
// not nil). Past the budget it returns ErrExceeded (which stops io.Copy).
// One Writer must not be used concurrently; different Writers of one
// Budget may.
func (b *Budget) Writer(buf *bytes.Buffer, live io.Writer) io.Writer {
	return &writer{b: b, buf: buf, live: live}
}

type writer struct {
	b    *Budget
	buf  *bytes.Buffer
	live io.Writer
}

func (w *writer) Write(p []byte) (int, error) {
	n, first := w.b.take(len(p))
	w.buf.Write(p[:n])
	if w.live != nil && n > 0 {
		if _, err := w.live.Write(p[:n]); err != nil {
			return n, err
		}
	}
	if n < len(p) {
		if first && w.b.onExceed != nil {
			w.b.onExceed()
		}
		return n, ErrExceeded
	}
	return n, nil
}
