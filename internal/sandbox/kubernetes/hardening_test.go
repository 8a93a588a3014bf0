package kubernetes

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// TestHardening reads back the dry-run YAML (what a reviewer or GitOps
// sees and what Provision creates) and checks every hardening field.
func TestHardening(t *testing.T) {
	objs, err := DryRun(Config{Namespace: "fullsend-runs", RuntimeClass: "gvisor", Image: testImage, EgressGateway: testGW}, goldenSpec, goldenTime)
	if err != nil {
		t.Fatal(err)
	}
	y, err := objs.YAML()
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(y), "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("%d documents", len(docs))
	}
	var np networkingv1.NetworkPolicy
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &np); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &pod); err != nil {
		t.Fatal(err)
	}
	fail := func(format string, a ...any) { t.Helper(); t.Errorf(format, a...) }
	ps := pod.Spec
	if ps.RuntimeClassName == nil || *ps.RuntimeClassName != "gvisor" {
		fail("runtimeClassName %v", ps.RuntimeClassName)
	}
	if ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken {
		fail("automountServiceAccountToken not false")
	}
	if ps.EnableServiceLinks == nil || *ps.EnableServiceLinks {
		fail("enableServiceLinks not false")
	}
	if ps.HostNetwork || ps.HostPID || ps.HostIPC || ps.HostUsers != nil && *ps.HostUsers {
		fail("host namespaces")
	}
	if ps.RestartPolicy != corev1.RestartPolicyNever {
		fail("restartPolicy %s", ps.RestartPolicy)
	}
	if ps.ActiveDeadlineSeconds == nil || *ps.ActiveDeadlineSeconds != int64((30*time.Minute+ProvisionSlack)/time.Second) {
		fail("activeDeadlineSeconds %v", ps.ActiveDeadlineSeconds)
	}
	if sc := ps.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 ||
		sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		fail("pod securityContext %+v", sc)
	}
	for _, v := range ps.Volumes {
		if v.HostPath != nil || v.EmptyDir == nil {
			fail("volume %s is not an emptyDir", v.Name)
		}
	}
	if len(ps.InitContainers)+len(ps.EphemeralContainers) != 0 || len(ps.Containers) != 1 {
		fail("containers: %d init, %d ephemeral, %d", len(ps.InitContainers), len(ps.EphemeralContainers), len(ps.Containers))
	}
	c := ps.Containers[0]
	if c.Image != testImage || !digestRef.MatchString(c.Image) {
		fail("image %q not pinned", c.Image)
	}
	sc := c.SecurityContext
	if sc == nil {
		t.Fatal("no container securityContext")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		fail("allowPrivilegeEscalation not false")
	}
	if sc.Privileged == nil || *sc.Privileged {
		fail("privileged not false")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		fail("readOnlyRootFilesystem not true")
	}
	if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		fail("container not non-root")
	}
	if sc.Capabilities == nil || len(sc.Capabilities.Add) != 0 || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
		fail("capabilities %+v", sc.Capabilities)
	}
	if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		fail("container seccompProfile %+v", sc.SeccompProfile)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	sizes := map[string]corev1.EmptyDirVolumeSource{}
	for _, v := range ps.Volumes {
		sizes[v.Name] = *v.EmptyDir
	}
	q := func(n int64) resource.Quantity { return *resource.NewQuantity(n, resource.BinarySI) }
	if ed := sizes[mounts[sandbox.Root]]; ed.SizeLimit == nil || ed.SizeLimit.Cmp(q(4<<30)) != 0 {
		fail("/sandbox emptyDir sizeLimit %v", ed.SizeLimit)
	}
	if ed := sizes[mounts["/tmp"]]; ed.SizeLimit == nil || ed.SizeLimit.Cmp(q(256<<20)) != 0 || ed.Medium != corev1.StorageMediumMemory {
		fail("/tmp emptyDir %+v", ed)
	}
	for what, rl := range map[string]corev1.ResourceList{"limits": c.Resources.Limits, "requests": c.Resources.Requests} {
		if m := rl[corev1.ResourceMemory]; m.Cmp(q(2<<30)) != 0 {
			fail("%s memory %v", what, m.String())
		}
		// The cpu request is capped: requests = limits would reserve
		// whole nodes (the default cpus: 2 is all of a 2-core node).
		if cpu := rl[corev1.ResourceCPU]; cpu.MilliValue() != map[string]int64{"limits": 1500, "requests": CPURequestMilli}[what] {
			fail("%s cpu %v", what, cpu.String())
		}
		if es := rl[corev1.ResourceEphemeralStorage]; es.Cmp(q(4<<30)) != 0 {
			fail("%s ephemeral-storage %v", what, es.String())
		}
	}
	// NetworkPolicy: selects exactly this run's Pod, denies all ingress,
	// and lets it reach only DNS and the gateway.
	if np.Spec.PodSelector.MatchLabels[LabelRun] != pod.Labels[LabelRun] || len(np.Spec.PodSelector.MatchLabels) != 1 {
		fail("podSelector %v", np.Spec.PodSelector)
	}
	if len(np.Spec.PolicyTypes) != 2 || len(np.Spec.Ingress) != 0 {
		fail("policyTypes %v ingress %v", np.Spec.PolicyTypes, np.Spec.Ingress)
	}
	if len(np.Spec.Egress) != 2 {
		t.Fatalf("egress rules %d", len(np.Spec.Egress))
	}
	for _, r := range np.Spec.Egress {
		for _, p := range r.To {
			if p.IPBlock != nil || p.PodSelector == nil || len(p.PodSelector.MatchLabels) == 0 || p.NamespaceSelector == nil || len(p.NamespaceSelector.MatchLabels) == 0 {
				fail("egress peer too wide: %+v", p)
			}
		}
		if len(r.Ports) == 0 {
			fail("egress rule without ports")
		}
	}
	if gw := np.Spec.Egress[1]; gw.To[0].PodSelector.MatchLabels[GatewayLabel] != GatewayName || gw.Ports[0].Port.IntValue() != 3128 ||
		gw.To[0].NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] != "fullsend-system" {
		fail("gateway rule %+v", gw)
	}

	// Without network: egress denied entirely, no proxy variables.
	objs, err = DryRun(Config{Namespace: "fullsend-runs", Image: testImage}, sandbox.Spec{}, goldenTime)
	if err != nil {
		t.Fatal(err)
	}
	knp, err := toK8s[networkingv1.NetworkPolicy](objs.NetworkPolicy)
	if err != nil {
		t.Fatal(err)
	}
	kpod, err := toK8s[corev1.Pod](objs.Pod)
	if err != nil {
		t.Fatal(err)
	}
	if len(knp.Spec.Egress) != 0 || !slices.Contains(knp.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) || env(kpod, "HTTPS_PROXY") != "" {
		fail("no-network run: policy types %v, egress %v, proxy %q", knp.Spec.PolicyTypes, knp.Spec.Egress, env(kpod, "HTTPS_PROXY"))
	}
}

func TestRenderRefuses(t *testing.T) {
	c := Config{Namespace: "fullsend-runs", Image: testImage, EgressGateway: testGW}
	for _, x := range []struct {
		c    Config
		s    sandbox.Spec
		want string
	}{
		{c, sandbox.Spec{Mounts: []sandbox.Mount{{Source: "/home/u/.ssh", Target: "/x"}}}, "mount /home/u/.ssh: host paths cannot be mounted"},
		{c, sandbox.Spec{Network: sandbox.Network{Services: []string{"127.0.0.1:4000"}}}, "runner endpoint 127.0.0.1:4000"},
		{c, sandbox.Spec{Image: "busybox:latest"}, `image "busybox:latest": must be pinned by digest`},
		{Config{Namespace: "n"}, sandbox.Spec{}, "no image: set sandbox.kubernetes.image in config.yaml"},
		{Config{Image: testImage}, sandbox.Spec{}, "no namespace"},
		{Config{Namespace: "n", Image: testImage}, sandbox.Spec{Network: sandbox.Network{Allow: []string{"github.com"}}}, "no gateway is configured"},
	} {
		if _, err := Render(x.c, x.s, "id", goldenTime, "http://run:t@gw:3128"); err == nil || !strings.Contains(err.Error(), x.want) {
			t.Errorf("Render(%+v) = %v, want %q", x.s, err, x.want)
		}
	}
	if _, err := NewWithClient(sandbox.Options{Namespace: "n", EgressGateway: testGW}, nil, nil); err == nil || !strings.Contains(err.Error(), "no signing key") {
		t.Errorf("gateway without key: %v", err)
	}
	if _, err := NewWithClient(sandbox.Options{}, nil, nil); err == nil || !strings.Contains(err.Error(), "no namespace") {
		t.Errorf("no namespace: %v", err)
	}
}
