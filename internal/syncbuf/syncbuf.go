package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer behind a mutex. The zero value is empty,
// unbounded and ready to use; a Buffer must not be copied after first use.
type Buffer struct {
	// Max, when positive, bounds what is kept: once the buffer holds more
	// than Max bytes, writes are dropped (and still reported as written).
	// Set it before first use.
	Max int

	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p, or drops it past Max; it never fails.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Max > 0 && s.b.Len() > s.Max {
		return len(p), nil
	}
	return s.b.Write(p)
}

// String returns everything written (and kept) so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
