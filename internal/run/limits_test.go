package run_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// The org's sandbox.limits apply to every run; a harness resources: block
// lowers them; the result reaches the sandbox spec.
func TestPlanLimits(t *testing.T) {
	f := newFixture(t)
	p := f.mustPlan(baseHarness, run.Options{})
	if p.Limits != config.DefaultLimits() {
		t.Fatalf("limits = %+v, want the defaults", p.Limits)
	}
	f.cfg.Sandbox.Limits.Pids = 300
	p = f.mustPlan(baseHarness+"resources:\n  memory: 256Mi\n  tmp_size: 32Mi\n", run.Options{})
	want := config.DefaultLimits()
	want.Pids, want.MemoryBytes, want.TmpBytes = 300, 256<<20, 32<<20
	if p.Limits != want {
		t.Fatalf("limits = %+v, want %+v", p.Limits, want)
	}
	if l := p.Spec.Limits; l.MemoryBytes != 256<<20 || l.Pids != 300 || l.CPUs != 2 {
		t.Fatalf("spec limits = %+v", l)
	}
	// A raise is refused before anything is planned.
	_, err := f.plan(baseHarness+"resources:\n  pids: 301\n", run.Options{})
	if !errors.Is(err, yamlx.ErrValue) || !strings.Contains(err.Error(), "harness.yaml:11: resources.pids:") || !strings.Contains(err.Error(), "sandbox.limits.pids = 300") {
		t.Fatalf("raise: err = %v", err)
	}
}

// The sandbox image comes from the configuration of the backend that runs
// the plan.
func TestPlanImagePerBackend(t *testing.T) {
	f := newFixture(t)
	f.cfg.Sandbox.Docker.Image = "docker.example/img@sha256:" + strings.Repeat("a", 64)
	f.cfg.Sandbox.Kubernetes.Image = "k8s.example/img@sha256:" + strings.Repeat("b", 64)
	for backend, want := range map[string]string{"docker": f.cfg.Sandbox.Docker.Image, "kubernetes": f.cfg.Sandbox.Kubernetes.Image} {
		p := f.mustPlan(baseHarness, run.Options{Sandbox: backend})
		if p.Spec.Image != want {
			t.Errorf("%s: image %q, want %q", backend, p.Spec.Image, want)
		}
	}
}
