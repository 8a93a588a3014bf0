package run

import (
	"context"
	"io"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/scan"
	"github.com/fullsend-ai/fullsend/internal/trace"
)

// The run's spans (package trace): the run itself (the CLI's root span or
// one of its own), one per phase named after it (agent iterations are
// "invoke_agent AGENT", GenAI conventions), one per sandbox command
// ("sandbox.exec"), and the egress proxy's decisions as events on the run
// span.

func (x *execution) traceStart(span trace.Span, id string) {
	if !span.IsRecording() {
		return
	}
	p := x.plan
	span.SetAttributes(
		attribute.String("fullsend.run.id", id),
		attribute.String("fullsend.harness.source", p.Source),
		attribute.String("fullsend.harness.sha256", string(p.SHA256)),
		attribute.String("fullsend.runtime", p.Runtime),
		attribute.String("gen_ai.agent.name", p.AgentName),
		attribute.String("fullsend.sandbox.backend", p.Backend),
	)
}

func (x *execution) traceFinish(span trace.Span, err error) {
	if !span.IsRecording() {
		return
	}
	r := x.report
	span.SetAttributes(
		attribute.String("fullsend.run.status", string(r.Status)),
		attribute.Int("fullsend.run.exit_code", r.ExitCode),
		attribute.Int64("gen_ai.usage.input_tokens", r.Events.InputTokens),
		attribute.Int64("gen_ai.usage.output_tokens", r.Events.OutputTokens),
	)
	setCacheAttributes(span, r.Events.CacheReadInputTokens, r.Events.CacheCreationInputTokens)
	trace.Fail(span, err)
}

// splitPhase splits "agent[2]" into "agent" and 2 (0 without an index).
func splitPhase(name string) (string, int) {
	i := strings.IndexByte(name, '[')
	if i < 0 || !strings.HasSuffix(name, "]") {
		return name, 0
	}
	n, err := strconv.Atoi(name[i+1 : len(name)-1])
	if err != nil {
		return name, 0
	}
	return name[:i], n
}

func (x *execution) phaseSpan(ctx context.Context, name string) (context.Context, trace.Span) {
	base, iter := splitPhase(name)
	attrs := []attribute.KeyValue{attribute.String("fullsend.phase", base)}
	if iter > 0 {
		attrs = append(attrs, attribute.Int("fullsend.iteration", iter))
	}
	spanName := base
	if base == "agent" {
		p := x.plan
		spanName = "invoke_agent"
		if p.AgentName != "" {
			spanName += " " + p.AgentName
		}
		attrs = append(attrs,
			attribute.String("gen_ai.operation.name", "invoke_agent"),
			attribute.String("gen_ai.agent.name", p.AgentName),
			attribute.String("fullsend.runtime", p.Runtime))
		if p.Model != "" {
			attrs = append(attrs, attribute.String("gen_ai.request.model", p.Model))
		}
	}
	return trace.Start(ctx, spanName, attrs...)
}

func (x *execution) endPhaseSpan(span trace.Span, name string, err error) {
	if span.IsRecording() && (name == "host_scan" || name == "scan_context") {
		var n [3]int
		total, blocked := 0, false
		for _, f := range x.report.Findings {
			if f.Phase != name {
				continue
			}
			total++
			blocked = blocked || f.Blocked
			switch f.Severity {
			case scan.Critical.String():
				n[2]++
			case scan.Warning.String():
				n[1]++
			default:
				n[0]++
			}
		}
		span.SetAttributes(
			attribute.Int("fullsend.scan.findings", total),
			attribute.Int("fullsend.scan.findings.critical", n[2]),
			attribute.Int("fullsend.scan.findings.warning", n[1]),
			attribute.Int("fullsend.scan.findings.info", n[0]),
			attribute.Bool("fullsend.scan.blocked", blocked),
		)
	}
	trace.End(span, err)
}

// traceOutcome records an agent iteration's outcome on its invoke_agent
// span.
func traceOutcome(span trace.Span, o *runtime.Outcome) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(
		attribute.Int64("gen_ai.usage.input_tokens", o.InputTokens),
		attribute.Int64("gen_ai.usage.output_tokens", o.OutputTokens),
		attribute.Int("fullsend.agent.turns", o.Turns),
		attribute.Int("fullsend.agent.tool_calls", o.ToolCalls),
		attribute.Int("fullsend.agent.exit_code", o.ExitCode),
		attribute.String("fullsend.agent.stop_reason", o.StopReason),
	)
	setCacheAttributes(span, o.CacheReadInputTokens, o.CacheCreationInputTokens)
	if o.StopReason != "" {
		span.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", []string{o.StopReason}))
	}
}

// traceProvision records the backend and limits on the provision span and,
// when the run is traced, routes the egress proxy's decisions to the run
// span as events (egress.Recorder through Network.Log).
func (x *execution) traceProvision(ctx context.Context, backend string, spec *sandbox.Spec) {
	span := trace.FromContext(ctx)
	if span.IsRecording() {
		l := x.plan.Limits
		span.SetAttributes(
			attribute.String("fullsend.sandbox.backend", backend),
			attribute.Int64("fullsend.sandbox.limits.memory_bytes", l.MemoryBytes),
			attribute.Int64("fullsend.sandbox.limits.pids", int64(l.Pids)),
			attribute.Float64("fullsend.sandbox.limits.cpus", l.CPUs),
			attribute.Int64("fullsend.sandbox.limits.tmp_bytes", l.TmpBytes),
			attribute.Int64("fullsend.sandbox.limits.workspace_bytes", l.WorkspaceBytes),
			attribute.Int64("fullsend.sandbox.limits.output_bytes", l.OutputBytes),
			attribute.Int64("fullsend.sandbox.limits.output_files", int64(l.OutputFiles)),
			attribute.Float64("fullsend.sandbox.limits.wall_time_s", x.plan.WallTime.Seconds()),
			attribute.StringSlice("fullsend.sandbox.network.allow", spec.Network.Allow),
		)
	}
	if run := trace.FromContext(x.ctx); run.IsRecording() {
		spec.Network.Log = &egressEvents{span: run, next: spec.Network.Log}
	}
}

// egressEvents passes the proxy's denial lines on and turns every
// decision into an "egress" event on the run span.
type egressEvents struct {
	span trace.Span
	next io.Writer
}

func (e *egressEvents) Write(b []byte) (int, error) {
	if e.next == nil {
		return len(b), nil
	}
	return e.next.Write(b)
}

func (e *egressEvents) EgressDecision(host string, port int, allowed bool, reason string) {
	d := "deny"
	if allowed {
		d = "allow"
	}
	e.span.AddEvent("egress", oteltrace.WithAttributes(
		attribute.String("server.address", host),
		attribute.Int("server.port", port),
		attribute.String("fullsend.egress.decision", d),
		attribute.String("fullsend.egress.reason", reason),
	))
}

// traceExec is the span of one sandbox command: the program's base name
// only (arguments may carry prompts or paths), its exit status and limits.
func traceExec(ctx context.Context, r sandbox.ExecRequest) (context.Context, trace.Span) {
	prog := ""
	if len(r.Args) > 0 {
		prog = r.Args[0]
		if i := strings.LastIndexByte(prog, '/'); i >= 0 {
			prog = prog[i+1:]
		}
	}
	return trace.Start(ctx, "sandbox.exec", attribute.String("process.executable.name", prog))
}

// setCacheAttributes records prompt-cache counts (GenAI conventions, part
// of gen_ai.usage.input_tokens) when there are any.
func setCacheAttributes(span trace.Span, read, creation int64) {
	if read > 0 {
		span.SetAttributes(attribute.Int64("gen_ai.usage.cache_read.input_tokens", read))
	}
	if creation > 0 {
		span.SetAttributes(attribute.Int64("gen_ai.usage.cache_creation.input_tokens", creation))
	}
}
