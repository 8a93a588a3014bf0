package cli

import (
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/kubernetes"
)

// TestSandboxOptionsOnlyKubernetes: a run's SandboxOptions hook applies
// config.yaml's sandbox.kubernetes to the kubernetes backend alone; any
// other backend gets its options untouched, and is not failed by a
// gateway whose signing key is unset.
func TestSandboxOptionsOnlyKubernetes(t *testing.T) {
	env := &Env{Getenv: func(string) string { return "" }}
	cfg := &config.Config{Sandbox: config.Sandbox{Kubernetes: config.Kubernetes{Namespace: "runs", RuntimeClass: "gvisor"}}}
	var o sandbox.Options
	if err := env.sandboxOptions(cfg, "local", &o); err != nil || o.Namespace != "" || o.RuntimeClass != "" {
		t.Fatalf("local backend: %v, namespace %q, runtime class %q", err, o.Namespace, o.RuntimeClass)
	}
	if err := env.sandboxOptions(cfg, kubernetes.Name, &o); err != nil || o.Namespace != "runs" || o.RuntimeClass != "gvisor" {
		t.Fatalf("kubernetes backend: %v, namespace %q, runtime class %q", err, o.Namespace, o.RuntimeClass)
	}
	cfg.Sandbox.Kubernetes.EgressGateway = "http://127.0.0.1:9"
	if err := env.sandboxOptions(cfg, "local", &sandbox.Options{}); err != nil {
		t.Fatalf("local backend with a gateway: %v", err)
	}
	err := env.sandboxOptions(cfg, kubernetes.Name, &sandbox.Options{})
	if err == nil || !strings.Contains(err.Error(), "$"+DefaultEgressKeyEnv) {
		t.Fatalf("kubernetes backend, gateway, no key: %v", err)
	}
}
