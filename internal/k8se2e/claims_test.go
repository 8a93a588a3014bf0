//go:build linux

package k8se2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/kubernetes"
)

// TestCapabilityClaims checks, on the cluster, the claims of the backend's
// Capabilities that the conformance suite does not: the cpu limit is the
// container's CFS quota; host mounts are refused (HostMounts false); and
// NetworkCaveat is there because this cluster's CNI does not enforce
// NetworkPolicy (a Pod under the run's default-deny reaches another Pod).
func TestCapabilityClaims(t *testing.T) {
	deploy(t)
	t.Setenv("KUBECONFIG", deployed.runner)
	b, err := kubernetes.New(sandbox.Options{Namespace: "fullsend-runs", Image: env.images["sandbox"]})
	if err != nil {
		t.Fatal(err)
	}
	caps := b.Capabilities()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	if caps.CPULimit && caps.Limits.CPU.Level == sandbox.Enforced {
		s, err := b.Provision(ctx, sandbox.Spec{Limits: sandbox.Limits{CPUs: 0.5}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"sh", "-c", "cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us 2>/dev/null || cat /sys/fs/cgroup/cpu.max"}})
		s.Terminate(ctx)
		if f := strings.Fields(string(r.Stdout)); err != nil || len(f) != 2 || f[0] != "50000" || f[1] != "100000" {
			t.Errorf("cpus 0.5: the container's CFS quota is %q (%v), want 50000 of 100000", r.Stdout, err)
		}
	}
	if !caps.HostMounts {
		if _, err := b.Provision(ctx, sandbox.Spec{Mounts: []sandbox.Mount{{Source: t.TempDir(), Target: "/work"}}}); err == nil || !strings.Contains(err.Error(), "cannot be mounted into a Pod") {
			t.Errorf("a host mount: %v, want it refused", err)
		}
	}

	// NetworkPolicy: a server Pod in fullsend-e2e, a run's Pod (its
	// NetworkPolicy denies all but the gateway) tries it.
	srv := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: np-server, namespace: fullsend-e2e}
spec:
  automountServiceAccountToken: false
  securityContext: {runAsNonRoot: true, runAsUser: 65532, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: c
    image: %q
    command: [sh, -c, "mkdir -p /tmp/w && echo up > /tmp/w/index.html && exec httpd -f -p 8080 -h /tmp/w"]
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`, env.images["sandbox"])
	kubectl(t, []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: fullsend-e2e\n  labels: {pod-security.kubernetes.io/enforce: restricted}\n"), "apply", "-f", "-")
	kubectl(t, []byte(srv), "apply", "-f", "-")
	defer kubectlRaw(env.admin, nil, "-n", "fullsend-e2e", "delete", "pod", "np-server", "--grace-period=0", "--force")
	kubectl(t, nil, "-n", "fullsend-e2e", "wait", "--for=condition=Ready", "pod/np-server", "--timeout=120s")
	ip := strings.TrimSpace(kubectl(t, nil, "-n", "fullsend-e2e", "get", "pod", "np-server", "-o", "jsonpath={.status.podIP}"))
	s, err := b.Provision(ctx, sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Terminate(ctx)
	if np := kubectl(t, nil, "-n", "fullsend-runs", "get", "networkpolicy", "fullsend-"+s.ID(), "-o", "jsonpath={.spec.policyTypes}"); !strings.Contains(np, "Egress") {
		t.Fatalf("the run's NetworkPolicy: %q", np)
	}
	r, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"sh", "-c", "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 " + ip + " 8080"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(r.Stdout), "up") {
		t.Logf("NetworkPolicy NOT enforced here: the run's Pod, under default-deny, reached %s:8080", ip)
		if caps.NetworkCaveat == "" || !strings.Contains(caps.NetworkCaveat, "NetworkPolicy") {
			t.Errorf("Capabilities do not say egress depends on NetworkPolicy enforcement: %q", caps.NetworkCaveat)
		}
	} else {
		t.Logf("NetworkPolicy enforced here: default-deny blocked %s:8080 (%q)", ip, r.Stderr)
	}
}
