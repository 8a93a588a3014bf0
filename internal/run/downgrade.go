package run

import (
	"fmt"
	"time"

	"github.com/fullsend-ai/fullsend/internal/progress"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// downgrade records an enforcement weaker than the harness asked for: a
// note of the plan (it stays in report.json) that Execute also prints as
// a warning before anything runs.
func (p *Plan) downgrade(s string) {
	p.Notes = append(p.Notes, s)
	p.Downgrades = append(p.Downgrades, s)
}

// warnPlanDowngrades prints the plan's downgrades ("fullsend: warning: …");
// they are already in the report's notes.
func (x *execution) warnPlanDowngrades() {
	for _, d := range x.plan.Downgrades {
		x.warn(d)
	}
}

// warnBackendDowngrades adds to the report's notes, and prints, what the
// sandbox backend enforces less strictly than the run asks: each limit
// whose enforcement is not full (sandbox.LimitSupport.Downgrades), and an
// egress allowlist the backend cannot enforce.
func (x *execution) warnBackendDowngrades(name string, c sandbox.Capabilities) {
	var out []string
	for _, d := range c.Limits.Downgrades() {
		out = append(out, fmt.Sprintf("sandbox %s: limit %s", name, d))
	}
	if !c.NetworkAllowlist && len(x.plan.Spec.Network.Allow) > 0 {
		out = append(out, fmt.Sprintf("sandbox %s: the per-host egress allowlist (%d endpoint(s)) is not enforced by this backend", name, len(x.plan.Spec.Network.Allow)))
	}
	if c.NetworkCaveat != "" {
		out = append(out, fmt.Sprintf("sandbox %s: %s", name, c.NetworkCaveat))
	}
	for _, s := range out {
		x.report.Notes = append(x.report.Notes, s)
		x.warn(s)
	}
}

// progressEvent forwards a runtime event to the progress sink: turns,
// tool calls, retries and notices.
func (x *execution) progressEvent(e runtime.Event) {
	s := x.o.Progress
	if s == nil {
		return
	}
	switch e.Kind {
	case runtime.EventTurn:
		s.Event(progress.Event{Kind: progress.AgentTurn, Turn: e.Turn, InputTokens: e.InputTokens, OutputTokens: e.OutputTokens})
	case runtime.EventToolCall:
		s.Event(progress.Event{Kind: progress.ToolCall, Name: e.Name, Text: e.Text})
	case runtime.EventRetry:
		s.Event(progress.Event{Kind: progress.Retry, Name: e.Name, Err: e.Text, Attempt: e.Attempt, Wait: time.Duration(e.WaitMS) * time.Millisecond})
	case runtime.EventInfo, runtime.EventError:
		s.Event(progress.Event{Kind: progress.Info, Text: e.Text})
	}
}
