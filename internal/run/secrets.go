package run

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/egress"
	"github.com/fullsend-ai/fullsend/internal/scan"
	"github.com/fullsend-ai/fullsend/internal/secrets"
	"github.com/fullsend-ai/fullsend/internal/trace"
)

// This file is the run's side of the secrets broker (package secrets owns
// the rule, package egress applies it): which org-declared secrets a run
// gets, the broker built from their real values when the sandbox is
// provisioned, the placeholders and the CA bundle the sandbox sees, and
// every refused request as a critical finding.

// CABundlePath is where the sandbox finds the CA bundle (system roots and
// the run CA) its TLS clients trust (secrets.CAEnv).
const CABundlePath = "/sandbox/.fullsend/ca-bundle.pem"

// planSecrets picks the run's secrets: the harness's secrets:, bare
// providers: names the org declares as secrets, and the runtime's
// declared key secrets (runtime.PlanOutput.KeySecrets: the claude
// runtime's ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN). An
// env.sandbox entry of the same name is dropped (the placeholder wins); a
// runtime's key left in env.sandbox is warned about.
func (p *Plan) planSecrets(h *harness.Materialized, cfg *config.Config) error {
	add := func(name string) {
		if !slices.Contains(p.Secrets, name) {
			p.Secrets = append(p.Secrets, name)
		}
	}
	for _, n := range h.Secrets {
		if _, ok := cfg.SecretByName(n); !ok {
			return &PlanError{Field: "secrets", Err: fmt.Errorf("%w: %s", config.ErrSecretNotDeclared, n)}
		}
		add(n)
	}
	for _, n := range h.ProviderNames {
		if _, ok := cfg.SecretByName(n); ok {
			add(n)
			p.Notes = append(p.Notes, fmt.Sprintf("providers: %s is the org secret of that name (config.yaml secrets)", n))
		}
	}
	for _, n := range p.planned.KeySecrets {
		if _, ok := cfg.SecretByName(n); ok {
			add(n)
		}
	}
	for _, n := range p.Secrets {
		if _, ok := p.SandboxEnv[n]; ok {
			delete(p.SandboxEnv, n)
			p.Notes = append(p.Notes, fmt.Sprintf("env.sandbox.%s: dropped: %s is an org secret; the sandbox gets its placeholder", n, n))
		}
	}
	for _, n := range p.planned.KeySecrets {
		if v, ok := p.SandboxEnv[n]; ok && v != "" {
			p.downgrade(fmt.Sprintf("env.sandbox.%s: the model key enters the sandbox, where the agent can read it; declare it in config.yaml secrets to give the sandbox a placeholder instead (docs/secrets.md)", n))
		}
	}
	slices.Sort(p.Secrets)
	return nil
}

// newBroker reads the real values of the run's secrets on the runner and
// makes the run's broker (nil without secrets).
func (x *execution) newBroker() (*secrets.Broker, error) {
	p := x.plan
	if len(p.Secrets) == 0 {
		return nil, nil
	}
	cfg := p.Config
	var list []secrets.Secret
	var caFiles []string
	for _, n := range p.Secrets {
		s, ok := cfg.SecretByName(n)
		if !ok {
			return nil, fmt.Errorf("secret %s: %w", n, config.ErrSecretNotDeclared)
		}
		v, err := s.Value(x.getenv)
		if err != nil {
			return nil, err
		}
		list = append(list, secrets.Secret{Name: n, Value: v, Hosts: s.Hosts})
		if s.UpstreamCAFile != "" && !slices.Contains(caFiles, s.UpstreamCAFile) {
			caFiles = append(caFiles, s.UpstreamCAFile)
		}
	}
	var extra []byte
	for _, f := range caFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("config.yaml secrets upstream_ca_file: %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("config.yaml secrets upstream_ca_file %s: no PEM certificate in it", f)
		}
		extra = append(append(extra, b...), '\n')
	}
	return secrets.New(list, secrets.Options{ExtraRootsPEM: extra})
}

// applySecrets gives a session spec the run's secrets: the broker for its
// egress proxy, the placeholders and CA variables in its environment, and
// the refusals recorded as findings.
func (x *execution) applySecrets(spec *sandbox.Spec) {
	b := x.broker
	if b == nil {
		return
	}
	spec.Network.Secrets = b
	for k, v := range b.Env() {
		spec.Env[k] = v
	}
	for k, v := range secrets.CAEnv(CABundlePath) {
		spec.Env[k] = v
	}
	spec.Network.Log = &secretFindings{x: x, next: spec.Network.Log}
}

// uploadCABundle lays the CA bundle out in the sandbox.
func (x *execution) uploadCABundle(ctx context.Context) error {
	if x.broker == nil {
		return nil
	}
	dir, err := os.MkdirTemp("", "fullsend-ca-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	f := filepath.Join(dir, "ca-bundle.pem")
	if err := os.WriteFile(f, x.broker.CA().Bundle(), 0o644); err != nil {
		return err
	}
	if err := x.sess.Upload(ctx, f, CABundlePath); err != nil {
		return fmt.Errorf("secrets: CA bundle: %w", err)
	}
	return nil
}

// secretFindings is the egress log of a run with secrets: lines and
// decisions pass on to next; every refused request becomes a critical
// finding, a verdict event and a span event.
type secretFindings struct {
	x    *execution
	next io.Writer
}

var (
	_ egress.SecretRecorder = (*secretFindings)(nil)
	_ egress.Recorder       = (*secretFindings)(nil)
)

func (s *secretFindings) Write(b []byte) (int, error) {
	if s.next == nil {
		return len(b), nil
	}
	return s.next.Write(b)
}

func (s *secretFindings) EgressDecision(host string, port int, allowed bool, reason string) {
	if r, ok := s.next.(egress.Recorder); ok {
		r.EgressDecision(host, port, allowed, reason)
	}
}

// SecretRuleRefused is the rule of a request refused by the secrets broker.
const SecretRuleRefused = "secrets/placeholder-refused"

func (s *secretFindings) SecretRefused(dest, secret, reason string) {
	x := s.x
	if run := trace.FromContext(x.ctx); run.IsRecording() {
		run.AddEvent("secret_refused", oteltrace.WithAttributes(
			attribute.String("server.address", dest),
			attribute.String("fullsend.secret.name", secret),
			attribute.String("fullsend.secret.reason", reason),
		))
	}
	x.evMu.Lock()
	defer x.evMu.Unlock()
	phase := "sandbox"
	if x.iteration > 0 {
		phase = fmt.Sprintf("agent[%d]", x.iteration)
	}
	x.report.Findings = append(x.report.Findings, FindingRecord{
		Phase: phase, Path: dest, Scanner: "secrets", Rule: SecretRuleRefused,
		Severity: scan.Critical.String(), Message: reason, Blocked: true,
	})
	if x.events == nil {
		return
	}
	e := runtime.Event{Time: time.Now().UTC(), Kind: runtime.EventVerdict, Name: "secrets", Rule: SecretRuleRefused, Text: runtime.Truncate(strings.TrimSpace(reason))}
	if b, err := json.Marshal(e); err == nil {
		x.events.Write(append(b, '\n'))
	}
}
