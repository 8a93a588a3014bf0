package kubernetes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

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

// PID1 is the script the Pod's container runs.
const PID1 = "trap '' HUP INT QUIT TERM USR1 USR2 ALRM PIPE; while :; do sleep 3600 & wait $!; done"

// CPURequestMilli caps the Pod's cpu request (millicores); its limit is
// Limits.CPUs.
const CPURequestMilli = 250

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
	Pod           *Pod
	NetworkPolicy *NetworkPolicy
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
		return nil, fmt.Errorf("kubernetes sandbox: no image: set sandbox.kubernetes.image in config.yaml to a digest-pinned image (name@sha256:…), or give `fullsend sandbox exec --image` for one command")
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
	meta := ObjectMeta{Name: name, Namespace: c.Namespace, Labels: labels, Annotations: ann}

	env := map[string]string{}
	for k, v := range s.Env {
		env[k] = v
	}
	var egress []EgressRule
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
		egress = []EgressRule{
			{
				To: []PolicyPeer{{
					NamespaceSelector: &LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}},
					PodSelector:       &LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
				}},
				Ports: []PolicyPort{{Protocol: "UDP", Port: 53}, {Protocol: "TCP", Port: 53}},
			},
			{
				To: []PolicyPeer{{
					NamespaceSelector: &LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": gwNS}},
					PodSelector:       &LabelSelector{MatchLabels: map[string]string{GatewayLabel: GatewayName}},
				}},
				Ports: []PolicyPort{{Protocol: "TCP", Port: int32(port)}},
			},
		}
	}
	var envVars []EnvVar
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		envVars = append(envVars, EnvVar{Name: k, Value: env[k]})
	}
	pod := renderPod(c, img, meta, envVars, l, life)
	np := &NetworkPolicy{
		APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy",
		ObjectMeta: meta,
		Spec: NetworkPolicySpec{
			PodSelector: LabelSelector{MatchLabels: map[string]string{LabelRun: id}},
			PolicyTypes: []string{"Ingress", "Egress"},
			Egress:      egress,
		},
	}
	return &Objects{Pod: pod, NetworkPolicy: np, Deadline: deadline}, nil
}

func renderPod(c Config, img string, meta ObjectMeta, env []EnvVar, l sandbox.Limits, life time.Duration) *Pod {
	t, f := true, false
	uid := int64(UID)
	secs := int64(life / time.Second)
	grace := int64(5)
	seccomp := &SeccompProfile{Type: "RuntimeDefault"}
	res := map[string]string{
		"memory":            bytesQuantity(l.MemoryBytes),
		"cpu":               milliQuantity(int64(l.CPUs * 1000)),
		"ephemeral-storage": bytesQuantity(l.WorkspaceBytes),
	}
	// The scheduler places the Pod by its requests: an agent mostly waits
	// on its model, so it asks for at most CPURequestMilli and may burst
	// to its limit (requests = limits would reserve whole nodes: cpus: 2,
	// the default, is all of a 2-core node).
	req := maps.Clone(res)
	req["cpu"] = milliQuantity(min(int64(l.CPUs*1000), CPURequestMilli))
	var rc *string
	if c.RuntimeClass != "" {
		r := c.RuntimeClass
		rc = &r
	}
	// The metadata maps are shared with the NetworkPolicy: copy them.
	meta.Labels, meta.Annotations = maps.Clone(meta.Labels), maps.Clone(meta.Annotations)
	return &Pod{
		APIVersion: "v1", Kind: "Pod",
		ObjectMeta: meta,
		Spec: PodSpec{
			RestartPolicy:                 "Never",
			RuntimeClassName:              rc,
			AutomountServiceAccountToken:  &f,
			EnableServiceLinks:            &f,
			ActiveDeadlineSeconds:         &secs,
			TerminationGracePeriodSeconds: &grace,
			SecurityContext: &PodSecurityContext{
				RunAsNonRoot:   &t,
				RunAsUser:      &uid,
				RunAsGroup:     &uid,
				FSGroup:        &uid,
				SeccompProfile: seccomp,
			},
			Containers: []Container{{
				Name:            ContainerName,
				Image:           img,
				ImagePullPolicy: "IfNotPresent",
				// PID 1 sleeps until the Pod is deleted (and reaps the
				// orphans of execs); commands come by exec. It ignores the
				// signals a shell would otherwise catch (sh -c catches
				// SIGINT): the kernel drops every other signal sent to a
				// pid namespace's init from inside (an exec's
				// `kill -TERM 1`, `kill -KILL 1`). The kubelet's SIGKILL from
				// outside still ends it.
				Command:    []string{"/bin/sh", "-c", PID1},
				WorkingDir: sandbox.Root,
				Env:        env,
				SecurityContext: &SecurityContext{
					Privileged:               &f,
					AllowPrivilegeEscalation: &f,
					ReadOnlyRootFilesystem:   &t,
					RunAsNonRoot:             &t,
					RunAsUser:                &uid,
					RunAsGroup:               &uid,
					Capabilities:             &Capabilities{Drop: []string{"ALL"}},
					SeccompProfile:           seccomp,
				},
				Resources: ResourceRequirements{Requests: req, Limits: res},
				VolumeMounts: []VolumeMount{
					{Name: "sandbox", MountPath: sandbox.Root},
					{Name: "tmp", MountPath: "/tmp"},
				},
			}},
			Volumes: []Volume{
				{Name: "sandbox", EmptyDir: &EmptyDir{SizeLimit: bytesQuantity(l.WorkspaceBytes)}},
				{Name: "tmp", EmptyDir: &EmptyDir{Medium: "Memory", SizeLimit: bytesQuantity(l.TmpBytes)}},
			},
		},
	}
}

// YAML renders the objects as a two-document YAML stream (NetworkPolicy
// first: applied in order, the Pod never runs unconfined), keys sorted as
// kubectl and sigs.k8s.io/yaml write them.
func (o *Objects) YAML() ([]byte, error) {
	var b bytes.Buffer
	for i, obj := range []any{o.NetworkPolicy, o.Pod} {
		j, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		var tree any // JSON is YAML: maps come back sorted on output
		if err := yaml.Load(j, &tree); err != nil {
			return nil, err
		}
		y, err := yaml.Dump(tree, yaml.WithV2Defaults(), yaml.WithCompactSeqIndent(true))
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(y)
	}
	return b.Bytes(), nil
}
