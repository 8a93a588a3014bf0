package run

import (
	"errors"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/scan"
)

// TestEscalateKeepsFailClosedBlocks: on_critical: review lets a content
// scanner's block through, never one of the refused Claude settings nor a
// scan that could not run.
func TestEscalateKeepsFailClosedBlocks(t *testing.T) {
	block := &BlockedError{Phase: "host_scan", Err: scan.ErrBlocked}
	for _, c := range []struct {
		name        string
		finding     FindingRecord
		repoBlocked bool // the runtime's repository-settings check blocked
		halts       bool
	}{
		{"injection", FindingRecord{Phase: "host_scan", Scanner: "context-injection", Rule: "x", Blocked: true}, false, false},
		{"claude settings", FindingRecord{Phase: "host_scan", Scanner: "claude-settings", Rule: "claude-settings/api-key-helper", Blocked: true}, true, true},
		{"scan failed", FindingRecord{Phase: "host_scan", Scanner: "scan-context", Rule: "scan-context/failed", Blocked: true}, false, true},
	} {
		p := &Plan{}
		p.ReviewLabel = "r"
		x := &execution{plan: p, report: &Report{Findings: []FindingRecord{c.finding}}, repoSettingsBlocked: c.repoBlocked}
		err := x.escalate("host_scan", block)
		if halts := err != nil; halts != c.halts || (c.halts && !errors.Is(err, scan.ErrBlocked)) {
			t.Errorf("%s: escalate = %v, want halt %v", c.name, err, c.halts)
		}
		if !c.halts && (x.report.Review == nil || x.report.Review.Label != "r") {
			t.Errorf("%s: review %+v", c.name, x.report.Review)
		}
	}
	// halt (no review label): unchanged.
	x := &execution{plan: &Plan{}, report: &Report{}}
	if err := x.escalate("host_scan", block); err != block {
		t.Errorf("halt: %v", err)
	}
}
