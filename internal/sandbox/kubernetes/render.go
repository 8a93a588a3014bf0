package kubernetes

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// Labels and annotations the backend puts on its objects.
const (
	LabelManagedBy     = "app.kubernetes.io/managed-by"
	ManagedBy          = "fullsend"
	LabelRun           = "fullsend.dev/run"
	AnnotationDeadline = "fullsend.dev/deadline" // RFC 3339; past it the objects are leftovers
	AnnotationLabels   = "fullsend.dev/labels"   // the spec's labels, "k=v,k=v"
	// GatewayLabel selects the egress gateway's Pods (deploy/kubernetes).
	GatewayLabel = "app.kubernetes.io/name"
	GatewayName  = "fullsend-egress-gateway"
)

// Container and volume names, and the uid every process of the Pod runs as.
const (
	ContainerName = "sandbox"
	UID           = 65532
)

// Deadlines: a Pod lives at most its run's wall time plus ProvisionSlack
// (activeDeadlineSeconds), DefaultDeadline when the run has no wall time;
// never more than MaxDeadline (the gateway token's longest lifetime).
const (
	ProvisionSlack  = 10 * time.Minute
	DefaultDeadline = 6 * time.Hour
	MaxDeadline     = 24 * time.Hour
)

// Config is what the backend needs from config.yaml sandbox.kubernetes.
type Config struct {
	Namespace     string
	RuntimeClass  string // "" = the cluster's default runtime
	Image         string // NAME@sha256:HEX; Spec.Image wins when set
	EgressGateway string // http://HOST:PORT; required when a spec allows egress
}

// Objects are what one run creates.
type Objects struct {
	Pod           *corev1.Pod
	NetworkPolicy *networkingv1.NetworkPolicy
	Deadline      time.Time
}

// Deadline returns how long a Pod for s may live.
func Deadline(s sandbox.Spec) time.Duration {
	d := DefaultDeadline
	if s.Limits.WallTime > 0 {
		d = s.Limits.WallTime + ProvisionSlack
	}
	return min(d, MaxDeadline)
}

// gatewayTarget parses http://HOST:PORT into host, the gateway's
// namespace (the second label of a NAME.NS[.svc…] service name, else ns)
// and port.
func gatewayTarget(gw, ns string) (host, gwNS string, port int, err error) {
	u, err := url.Parse(gw)
	if err != nil || u.Scheme != "http" || u.Hostname() == "" || u.Port() == "" || u.User != nil {
		return "", "", 0, fmt.Errorf("kubernetes sandbox: egress gateway %q: want http://HOST:PORT (config.yaml sandbox.kubernetes.egress_gateway)", gw)
	}
	port, err = strconv.Atoi(u.Port())
	if err != nil || port < 1 || port > 65535 {
		return "", "", 0, fmt.Errorf("kubernetes sandbox: egress gateway %q: bad port", gw)
	}
	host, gwNS = u.Hostname(), ns
	if labels := strings.Split(host, "."); len(labels) >= 2 && net.ParseIP(host) == nil {
		gwNS = labels[1]
	}
	return host, gwNS, port, nil
}

// Render builds the Pod and NetworkPolicy of run id for spec s (already
// passed through sandbox.Check) at time now. proxyURL is the value of the
// HTTP(S)_PROXY variables ("" when the spec has no network).
func Render(c Config, s sandbox.Spec, id string, now time.Time, proxyURL string) (*Objects, error) {
	if len(s.Mounts) > 0 {
		return nil, fmt.Errorf("kubernetes sandbox: mount %s: host paths cannot be mounted into a Pod (the image provides the file system)", s.Mounts[0].Source)
	}
	if len(s.Network.Services) > 0 {
		return nil, fmt.Errorf("kubernetes sandbox: runner endpoint %s: a Pod cannot reach the runner host (sandbox.host_services and runtime fetch need the local or docker backend)", s.Network.Services[0])
	}
	img := s.Image
	if img == "" {
		img = c.Image
	}
	if img == "" {
		return nil, fmt.Errorf("kubernetes sandbox: no image (config.yaml sandbox.kubernetes.image or --image)")
	}
	if !digestRef.MatchString(img) {
		return nil, fmt.Errorf("kubernetes sandbox: image %q: must be pinned by digest (NAME@sha256:<64 hex>)", img)
	}
	if c.Namespace == "" {
		return nil, fmt.Errorf("kubernetes sandbox: no namespace (config.yaml sandbox.kubernetes.namespace)")
	}
	l := s.Limits.Resolved()
	life := Deadline(s)
	deadline := now.Add(life).UTC().Truncate(time.Second)
	name := "fullsend-" + id
	labels := map[string]string{LabelManagedBy: ManagedBy, LabelRun: id}
	ann := map[string]string{AnnotationDeadline: deadline.Format(time.RFC3339)}
	if len(s.Labels) > 0 {
		var kv []string
		for k, v := range s.Labels {
			kv = append(kv, k+"="+v)
		}
		sort.Strings(kv)
		ann[AnnotationLabels] = strings.Join(kv, ",")
	}
	meta := metav1.ObjectMeta{Name: name, Namespace: c.Namespace, Labels: labels, Annotations: ann}

	env := map[string]string{}
	for k, v := range s.Env {
		env[k] = v
	}
	var egress []networkingv1.NetworkPolicyEgressRule
	if !s.Network.None() {
		if c.EgressGateway == "" {
			return nil, fmt.Errorf("kubernetes sandbox: the spec allows egress but no gateway is configured (config.yaml sandbox.kubernetes.egress_gateway)")
		}
		_, gwNS, port, err := gatewayTarget(c.EgressGateway, c.Namespace)
		if err != nil {
			return nil, err
		}
		for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"} {
			env[k] = proxyURL
		}
		env["NO_PROXY"], env["no_proxy"] = "", ""
		udp, tcp := corev1.ProtocolUDP, corev1.ProtocolTCP
		dns, gwPort := intstr.FromInt32(53), intstr.FromInt32(int32(port))
		egress = []networkingv1.NetworkPolicyEgressRule{
			{
				To: []networkingv1.NetworkPolicyPeer{{
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}},
					PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
				}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &udp, Port: &dns}, {Protocol: &tcp, Port: &dns}},
			},
			{
				To: []networkingv1.NetworkPolicyPeer{{
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": gwNS}},
					PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{GatewayLabel: GatewayName}},
				}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &gwPort}},
			},
		}
	}
	var envVars []corev1.EnvVar
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		envVars = append(envVars, corev1.EnvVar{Name: k, Value: env[k]})
	}

	t, f := true, false
	uid := int64(UID)
	secs := int64(life / time.Second)
	grace := int64(5)
	seccomp := &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	res := corev1.ResourceList{
		corev1.ResourceMemory:           *resource.NewQuantity(l.MemoryBytes, resource.BinarySI),
		corev1.ResourceCPU:              *resource.NewMilliQuantity(int64(l.CPUs*1000), resource.DecimalSI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(l.WorkspaceBytes, resource.BinarySI),
	}
	var rc *string
	if c.RuntimeClass != "" {
		r := c.RuntimeClass
		rc = &r
	}
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: meta,
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			RuntimeClassName:              rc,
			AutomountServiceAccountToken:  &f,
			EnableServiceLinks:            &f,
			HostNetwork:                   false,
			HostPID:                       false,
			HostIPC:                       false,
			ActiveDeadlineSeconds:         &secs,
			TerminationGracePeriodSeconds: &grace,
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   &t,
				RunAsUser:      &uid,
				RunAsGroup:     &uid,
				FSGroup:        &uid,
				SeccompProfile: seccomp,
			},
			Containers: []corev1.Container{{
				Name:            ContainerName,
				Image:           img,
				ImagePullPolicy: corev1.PullIfNotPresent,
				// PID 1 sleeps until the Pod is deleted; commands come by exec.
				Command:    []string{"/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"},
				WorkingDir: sandbox.Root,
				Env:        envVars,
				SecurityContext: &corev1.SecurityContext{
					Privileged:               &f,
					AllowPrivilegeEscalation: &f,
					ReadOnlyRootFilesystem:   &t,
					RunAsNonRoot:             &t,
					RunAsUser:                &uid,
					RunAsGroup:               &uid,
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					SeccompProfile:           seccomp,
				},
				Resources: corev1.ResourceRequirements{Requests: res, Limits: res},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "sandbox", MountPath: sandbox.Root},
					{Name: "tmp", MountPath: "/tmp"},
				},
			}},
			Volumes: []corev1.Volume{
				{Name: "sandbox", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
					SizeLimit: resource.NewQuantity(l.WorkspaceBytes, resource.BinarySI)}}},
				{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
					Medium: corev1.StorageMediumMemory, SizeLimit: resource.NewQuantity(l.TmpBytes, resource.BinarySI)}}},
			},
		},
	}
	np := &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: *meta.DeepCopy(),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{LabelRun: id}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{},
			Egress:      egress,
		},
	}
	if np.Spec.Egress == nil {
		np.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{}
	}
	return &Objects{Pod: pod, NetworkPolicy: np, Deadline: deadline}, nil
}

// YAML renders the objects as a two-document YAML stream (NetworkPolicy
// first: applied in order, the Pod never runs unconfined).
func (o *Objects) YAML() ([]byte, error) {
	var b bytes.Buffer
	for i, obj := range []any{o.NetworkPolicy, o.Pod} {
		y, err := yaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(stripStatus(y))
	}
	return b.Bytes(), nil
}

// stripStatus drops the empty status and creationTimestamp fields the API
// types always marshal, so the output is what one would commit.
func stripStatus(y []byte) []byte {
	var out []string
	skip := false
	for _, l := range strings.SplitAfter(string(y), "\n") {
		if skip {
			if strings.HasPrefix(l, " ") {
				continue
			}
			skip = false
		}
		switch strings.TrimRight(l, "\n") {
		case "status: {}", "  creationTimestamp: null":
			continue
		case "status:":
			skip = true
			continue
		}
		out = append(out, l)
	}
	return []byte(strings.Join(out, ""))
}
