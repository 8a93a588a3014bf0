package fetchtest

import (
	"sync"
	"time"
)

// RequestLog is the part fake servers share: the log of the requests they
// received (R is the server's own record of one) and the latency a test
// adds to every answer. A fake server embeds it and calls Record once per
// request. Its methods are safe for concurrent use.
type RequestLog[R any] struct {
	mu       sync.Mutex
	requests []R
	latency  time.Duration
}

// Record appends r to the log and returns the latency to wait before
// answering.
func (l *RequestLog[R]) Record(r R) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests = append(l.requests, r)
	return l.latency
}

// SetLatency delays every request by d before it is answered.
func (l *RequestLog[R]) SetLatency(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.latency = d
}

// Requests returns a copy of the request log.
func (l *RequestLog[R]) Requests() []R {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]R(nil), l.requests...)
}

// RequestCount is len(Requests()).
func (l *RequestLog[R]) RequestCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.requests)
}

// ResetRequests empties the request log.
func (l *RequestLog[R]) ResetRequests() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests = nil
}
