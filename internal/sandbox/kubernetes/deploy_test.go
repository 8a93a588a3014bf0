package kubernetes

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

func docsOf(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "kubernetes", file))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n---\n")
}

// TestDeployRBAC: the runner's Role is namespaced and grants exactly what
// the backend calls, nothing more.
func TestDeployRBAC(t *testing.T) {
	var role *rbacv1.Role
	for _, d := range docsOf(t, "rbac.yaml") {
		if strings.Contains(d, "\nkind: Role\n") {
			role = &rbacv1.Role{}
			if err := yaml.UnmarshalStrict([]byte(d), role); err != nil {
				t.Fatal(err)
			}
		}
		if strings.Contains(d, "ClusterRole") {
			t.Error("rbac.yaml grants cluster-wide rights")
		}
	}
	if role == nil || role.Namespace != "fullsend-runs" {
		t.Fatalf("no Role in fullsend-runs: %+v", role)
	}
	want := map[string][]string{"/pods": {"create", "get", "list", "delete"}, "/pods/exec": {"create", "get"}, "networking.k8s.io/networkpolicies": {"create", "list", "delete"}}
	got := map[string][]string{}
	for _, r := range role.Rules {
		if len(r.ResourceNames) != 0 || len(r.NonResourceURLs) != 0 {
			t.Errorf("rule %+v", r)
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				got[g+"/"+res] = append(got[g+"/"+res], r.Verbs...)
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("resources %v, want %v", got, want)
	}
	for k, v := range want {
		if !slices.Equal(got[k], v) {
			t.Errorf("%s: verbs %v, want %v", k, got[k], v)
		}
	}
}

// TestDeployGateway: the gateway Deployment is hardened like a run's Pod
// and labelled as the runs' NetworkPolicy expects.
func TestDeployGateway(t *testing.T) {
	var dep appsv1.Deployment
	if err := yaml.UnmarshalStrict([]byte(docsOf(t, "gateway.yaml")[0]), &dep); err != nil {
		t.Fatal(err)
	}
	ps := dep.Spec.Template.Spec
	if dep.Spec.Template.Labels[GatewayLabel] != GatewayName {
		t.Errorf("gateway Pods labelled %v, runs' policies select %s=%s", dep.Spec.Template.Labels, GatewayLabel, GatewayName)
	}
	if ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken || ps.HostNetwork || len(ps.Containers) != 1 {
		t.Error("gateway Pod: service account token, host network or extra containers")
	}
	sc := ps.Containers[0].SecurityContext
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("gateway container securityContext %+v", sc)
	}
	if ps.SecurityContext == nil || ps.SecurityContext.RunAsNonRoot == nil || !*ps.SecurityContext.RunAsNonRoot || ps.SecurityContext.SeccompProfile == nil {
		t.Error("gateway Pod securityContext")
	}
	if !slices.Equal(ps.Containers[0].Args, []string{"egress-gateway", "--listen", ":3128"}) {
		t.Errorf("args %q", ps.Containers[0].Args)
	}
}
