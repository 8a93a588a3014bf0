package cli

import (
	"fmt"
	"strings"

	runpkg "github.com/fullsend-ai/fullsend/internal/run"
)

// verdictSummary counts the findings that are security verdicts of the
// agent's sandbox hooks (phase agent[N]): ", of which 4 tool calls denied
// and 5 outputs blocked by sandbox hooks".
func verdictSummary(r *runpkg.Report) string {
	calls, outputs := 0, 0
	for _, f := range r.Findings {
		if !strings.HasPrefix(f.Phase, "agent[") {
			continue
		}
		if strings.HasPrefix(f.Message, "blocked the output") {
			outputs++
		} else {
			calls++
		}
	}
	if calls+outputs == 0 {
		return ""
	}
	return fmt.Sprintf(", of which %d tool call(s) denied and %d output(s) blocked by sandbox hooks", calls, outputs)
}
