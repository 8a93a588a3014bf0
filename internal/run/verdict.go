package run

import (
	"fmt"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// verdict records a security verdict of the agent's runtime, whichever it
// is (a hook that denied a tool call or blocked its output, a permission
// or allowlist denial, a canary trip: runtime.VerdictEvent) as a blocked
// finding of the iteration; canary rules are critical. onEvent calls it
// for every EventVerdict (which also goes to events.jsonl), under evMu.
func (x *execution) verdict(e runtime.Event) {
	sev := scan.Warning
	if strings.HasPrefix(e.Rule, "canary") {
		sev = scan.Critical
	}
	path := x.toolNames[e.ID]
	if path == "" {
		path = e.ID
	}
	x.report.Findings = append(x.report.Findings, FindingRecord{
		Phase: fmt.Sprintf("agent[%d]", x.iteration), Path: path, Scanner: e.Name, Rule: e.Rule,
		Severity: sev.String(), Message: e.Text, Blocked: true,
	})
}
