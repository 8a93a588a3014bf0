package run

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/trace"

	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/resolve"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// AgentInputDir is where agent_input's contents land: this directory of
// the target directory (the repository copy the agent works in). The
// agent's environment names it in FULLSEND_AGENT_INPUT.
const AgentInputDir = "agent-input"

// StatusReview is a run that completed although a context scan found a
// critical finding, because the harness says security.escalation.
// on_critical: review: exit code 1, and Report.Review names the label.
const StatusReview = "review"

// ErrReview marks a run that completed but needs human review.
var ErrReview = errors.New("review required")

// reviewErr turns a run that completed with findings let through for
// review into an ErrReview error (exit code 1, status review).
func (x *execution) reviewErr(err error) error {
	r := x.report.Review
	if err != nil || r == nil {
		return err
	}
	return fmt.Errorf("%w: critical finding(s) in %s were let through by security.escalation.on_critical: review; label %q",
		ErrReview, strings.Join(r.Phases, ", "), r.Label)
}

// Review is report.json's record of a run that needs human review.
type Review struct {
	Label string `json:"label"`
	// Phases are the scan phases whose critical findings were let through.
	Phases []string `json:"phases"`
}

// planUpstream applies agent_input and the security settings of today's
// upstream schema (docs/upstream-schema.md).
func (p *Plan) planUpstream(res *resolve.Result) {
	h := res.Harness
	p.AgentInput = h.AgentInput
	p.planOverrides(res)
	if !h.Security.SecurityEnabled() {
		// Load refused it unless config.yaml security.allow_disable is
		// true. Off: the context scans only warn, every sandbox hook is
		// off; resolve-time verification and scanning of remote
		// resources, the sandbox, its policy and the refused Claude
		// settings stay as they are.
		p.SecurityDisabled = true
		p.Scan.FailMode, p.FailMode = scan.FailOpen, scan.FailOpen
		for _, k := range harness.KnownSandboxHooks {
			if !slices.Contains(p.DisabledHooks, k) {
				p.DisabledHooks = append(p.DisabledHooks, k)
			}
		}
		slices.Sort(p.DisabledHooks)
		p.downgrade("security.enabled: false (allowed by config.yaml security.allow_disable): context scan findings do not block, sandbox hooks off")
	}
	if ok, label := h.Security.Review(); ok {
		p.ReviewLabel = label
		p.Notes = append(p.Notes, fmt.Sprintf("security.escalation.on_critical: review: a critical context-scan finding lets the run complete with status review (label %q)", label))
	}
	p.NoFindingTrace = !h.Security.TraceEnabled()
}

// escalate is what a scan phase's error becomes under on_critical:
// review: a block by content scanners is recorded for review and the run
// goes on. A block of the target repository's refused agent-CLI settings
// (the runtime's RepoChecker, e.g. claude's), or a scan that could
// not run, still halts (they fail closed whatever the escalation).
func (x *execution) escalate(phase string, err error) error {
	var be *BlockedError
	if x.plan.ReviewLabel == "" || !errors.As(err, &be) {
		return err
	}
	if phase == "host_scan" && x.repoSettingsBlocked {
		return err
	}
	for _, f := range x.report.Findings {
		if f.Phase == phase && f.Blocked && f.Rule == "scan-context/failed" {
			return err
		}
	}
	r := x.report.Review
	if r == nil {
		r = &Review{Label: x.plan.ReviewLabel}
		x.report.Review = r
	}
	r.Phases = append(r.Phases, phase)
	x.warn(fmt.Sprintf("%s: %v; security.escalation.on_critical: review: the run goes on and ends with status review (label %q)", phase, be.Err, r.Label))
	return nil
}

// findingTraceID is the id findings carry in report.json: the run's
// trace id when the run is traced, else a random one made for the run;
// "" when security.trace.enabled is false.
func (x *execution) findingTraceID(ctx context.Context) string {
	if x.plan.NoFindingTrace {
		return ""
	}
	if x.traceID == "" {
		if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
			x.traceID = sc.TraceID().String()
		} else {
			var b [16]byte
			_, _ = rand.Read(b[:])
			x.traceID = hex.EncodeToString(b[:])
		}
	}
	return x.traceID
}

// uploadAgentInput copies agent_input into the target directory at
// AgentInputDir. A target repository that already has that path is an
// error (its content is never replaced or merged). Symbolic links and
// special files in agent_input are left out, as in every copy into the
// sandbox.
func (x *execution) uploadAgentInput(ctx context.Context, repoDir string) error {
	p := x.plan
	if p.AgentInput == "" {
		return nil
	}
	if p.TargetRepo != "" {
		if _, err := os.Lstat(p.TargetRepo + string(os.PathSeparator) + AgentInputDir); err == nil {
			return fmt.Errorf("agent_input: the target repository already has %s; agent_input is copied there and never replaces repository content (rename it in the repository)", AgentInputDir)
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("agent_input: %w", err)
		}
	}
	st, err := os.Stat(p.AgentInput)
	if err != nil || !st.IsDir() {
		return fmt.Errorf("agent_input %s: not a directory", p.AgentInput)
	}
	dst := path.Join(repoDir, AgentInputDir)
	if err := uploadTree(ctx, x.sess, p.AgentInput, dst, nil); err != nil {
		return fmt.Errorf("agent_input: upload to %s: %w", dst, err)
	}
	return nil
}

// agentInputEnv is FULLSEND_AGENT_INPUT when agent_input is set.
func (p *Plan) agentInputEnv() (string, bool) {
	if p.AgentInput == "" {
		return "", false
	}
	return strings.TrimSuffix(p.RepoDir(), "/") + "/" + AgentInputDir, true
}
