package runtimetest

import (
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/runtime"
)

// Kinds of security stop in the verdict contract: every block, denial and
// canary trip of any runtime is an EventVerdict (which the runner records
// as a report finding).
const (
	StopBlock  = "block"  // a check stopped a tool call or its output
	StopDenial = "denial" // a permission rule or the tool allowlist refused a call
	StopCanary = "canary" // the run's canary token was read or sent
)

// Stop is one security stop a runtime's test provoked: the tool call ID
// was stopped for Kind.
type Stop struct {
	Kind string
	ID   string
}

// CheckVerdicts is the verdict contract's conformance check. events are
// what the runtime emitted while each of stops happened; stops must cover
// StopBlock, StopDenial and StopCanary (a runtime cannot opt out of one).
// Each stop must be an EventVerdict of its call ID that names the check
// that decided (Name), what matched (Rule) and why (Text), with IsError
// set; a canary trip needs one whose Rule starts with "canary" (the runner
// rates those critical), and other stops none.
func CheckVerdicts(t testing.TB, events []runtime.Event, stops []Stop) {
	t.Helper()
	covered := map[string]bool{}
	for _, s := range stops {
		covered[s.Kind] = true
	}
	for _, k := range []string{StopBlock, StopDenial, StopCanary} {
		if !covered[k] {
			t.Errorf("verdict contract: the test provokes no %s", k)
		}
	}
	for _, s := range stops {
		var got []runtime.Event
		for _, e := range events {
			if e.Kind == runtime.EventVerdict && e.ID == s.ID {
				got = append(got, e)
			}
		}
		if len(got) == 0 {
			t.Errorf("verdict contract: the %s of call %s is no verdict event (events: %s)", s.Kind, s.ID, summary(events))
			continue
		}
		canaries := 0
		for _, e := range got {
			canary := strings.HasPrefix(e.Rule, "canary")
			if canary {
				canaries++
			}
			switch {
			case e.Name == "" || e.Rule == "" || strings.TrimSpace(e.Text) == "" || !e.IsError:
				t.Errorf("verdict contract: the %s of call %s: verdict without check, rule, reason or error flag: %+v", s.Kind, s.ID, e)
			case s.Kind != StopCanary && canary:
				t.Errorf("verdict contract: the %s of call %s has canary rule %q", s.Kind, s.ID, e.Rule)
			}
		}
		if s.Kind == StopCanary && canaries == 0 {
			t.Errorf("verdict contract: the canary trip of call %s has no canary… rule: %+v", s.ID, got)
		}
	}
}

func summary(events []runtime.Event) string {
	var b strings.Builder
	for i, e := range events {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(e.Kind))
		if e.ID != "" {
			b.WriteString("(" + e.ID + ")")
		}
	}
	return b.String()
}
