package kubernetes

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/kubernetes/k8stest"
)

// kubectlApply pipes y into `kubectl apply --dry-run=client -f -` against
// the fake API server (loopback; kubectl asks it for discovery and the
// OpenAPI document it validates with) and returns kubectl's exit error and
// output.
func kubectlApply(t *testing.T, kubectl, kubeconfig string, y []byte) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectl, "apply", "--dry-run=client", "--validate=true", "-f", "-")
	cmd.Stdin = bytes.NewReader(y)
	// A fresh HOME: kubectl keeps a discovery cache under ~/.kube.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "KUBECONFIG=" + kubeconfig}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestDryRunKubectl: what `fullsend sandbox exec --backend kubernetes
// --dry-run` prints passes kubectl's client-side checks (known kinds,
// fields valid for the k8s.io/api types), and the check does fail for an
// unknown field or kind.
func TestDryRunKubectl(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("KUBECTL SKIPPED: no kubectl on PATH (.ci/run installs Debian's kubernetes-client)")
	}
	srv := k8stest.NewTLS(nil)
	defer srv.Close()
	kc, err := srv.Kubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Namespace: "fullsend-runs", RuntimeClass: "gvisor", Image: testImage, EgressGateway: testGW}
	for name, spec := range map[string]sandbox.Spec{"network": goldenSpec, "no network": {}} {
		objs, err := DryRun(c, spec, goldenTime)
		if err != nil {
			t.Fatal(err)
		}
		y, err := objs.YAML()
		if err != nil {
			t.Fatal(err)
		}
		out, err := kubectlApply(t, kubectl, kc, y)
		if err != nil {
			t.Fatalf("%s: kubectl apply --dry-run=client: %v\n%s", name, err, out)
		}
		for _, want := range []string{"networkpolicy.networking.k8s.io/fullsend-dry-run created (dry run)", "pod/fullsend-dry-run created (dry run)"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: kubectl output lacks %q:\n%s", name, want, out)
			}
		}
		if name != "network" {
			continue
		}
		for what, c := range map[string]struct{ old, new, want string }{
			"unknown field": {"  restartPolicy: Never\n", "  restartPolicy: Never\n  hostPathz: true\n", `unknown field "hostPathz"`},
			"unknown kind":  {"kind: NetworkPolicy\n", "kind: NetworkPolicee\n", `no matches for kind "NetworkPolicee"`},
		} {
			bad := strings.Replace(string(y), c.old, c.new, 1)
			if bad == string(y) {
				t.Fatalf("%s: %q not in the output", what, c.old)
			}
			out, err := kubectlApply(t, kubectl, kc, []byte(bad))
			if err == nil || !strings.Contains(out, c.want) {
				t.Errorf("%s: kubectl accepted it or said something else (%v):\n%s", what, err, out)
			}
		}
	}
}
