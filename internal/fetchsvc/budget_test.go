package fetchsvc_test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestBudgetHeldAtTheCheck: every request is held right after the budget
// check until all N+k have passed it, so all of them read the same count
// (0). Taking the slot must still let exactly N through: the count is
// taken with a compare-and-swap, and a load followed by a store would let
// all N+k through here, every time.
func TestBudgetHeldAtTheCheck(t *testing.T) {
	const n, k = 4, 12
	r := newRepo()
	d := r.skill(t, "skills/lint", "lint", nil, nil)
	w := newWorld(t, r)
	s := w.startAllowed("allow_runtime_fetch: true\nmax_runtime_fetches: 4\n")

	var arrived atomic.Int32
	gate := make(chan struct{})
	var open sync.Once
	s.Service().SetAfterBudgetCheck(func() {
		if arrived.Add(1) == n+k {
			open.Do(func() { close(gate) })
		}
		select {
		case <-gate:
		case <-time.After(time.Minute): // failsafe only: never a pass
			t.Errorf("only %d of %d requests reached the budget check", arrived.Load(), n+k)
			open.Do(func() { close(gate) })
		}
	})

	got := concurrentStatuses(t, s, pin(w.tree("skills/lint"), d), n+k)
	if got[http.StatusOK] != n || got[http.StatusTooManyRequests] != k || len(got) != 2 {
		t.Fatalf("statuses %v, want %d×200 and %d×429", got, n, k)
	}
	if u := s.Service().Used(); u != n {
		t.Errorf("used %d, want %d", u, n)
	}
}
