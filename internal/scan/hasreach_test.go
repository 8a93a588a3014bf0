package scan

import "testing"

// hasReach (used by streaming to bound where a chunk may end) must agree
// with the derived prefilter of every rule.
func TestHasReachMatchesPrefilter(t *testing.T) {
	e, err := sharedSecrets()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ri := range e.rules {
		got, want := e.hasReach(ri), e.prefilter(ri).reach != nil
		if got != want {
			t.Errorf("rule %s: hasReach %v, prefilter reach %v", e.rules[ri].RuleID, got, want)
		}
		if want {
			n++
		}
	}
	if n == 0 {
		t.Error("no rule has a reach: the check proves nothing")
	}
}
