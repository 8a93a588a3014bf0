package kubernetes

// The backend's own view of the two API objects it creates: only the
// fields it sets or reads, with the JSON names of the Kubernetes API
// (core/v1 Pod, networking.k8s.io/v1 NetworkPolicy). Linking k8s.io/api
// and apimachinery for them cost the binary megabytes; the tests read
// these objects back strictly with the k8s.io/api types, so a misspelt or
// misplaced field fails there.

// ObjectMeta is the part of metadata the backend uses.
type ObjectMeta struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Pod is a core/v1 Pod.
type Pod struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	ObjectMeta `json:"metadata"`
	Spec       PodSpec    `json:"spec"`
	Status     *PodStatus `json:"status,omitempty"`
}

// PodSpec is the part of a Pod's spec the backend sets.
type PodSpec struct {
	ActiveDeadlineSeconds         *int64              `json:"activeDeadlineSeconds,omitempty"`
	AutomountServiceAccountToken  *bool               `json:"automountServiceAccountToken,omitempty"`
	Containers                    []Container         `json:"containers"`
	EnableServiceLinks            *bool               `json:"enableServiceLinks,omitempty"`
	HostIPC                       bool                `json:"hostIPC,omitempty"`
	HostNetwork                   bool                `json:"hostNetwork,omitempty"`
	HostPID                       bool                `json:"hostPID,omitempty"`
	RestartPolicy                 string              `json:"restartPolicy,omitempty"`
	RuntimeClassName              *string             `json:"runtimeClassName,omitempty"`
	SecurityContext               *PodSecurityContext `json:"securityContext,omitempty"`
	TerminationGracePeriodSeconds *int64              `json:"terminationGracePeriodSeconds,omitempty"`
	Volumes                       []Volume            `json:"volumes,omitempty"`
}

// PodSecurityContext is a Pod's securityContext.
type PodSecurityContext struct {
	FSGroup        *int64          `json:"fsGroup,omitempty"`
	RunAsGroup     *int64          `json:"runAsGroup,omitempty"`
	RunAsNonRoot   *bool           `json:"runAsNonRoot,omitempty"`
	RunAsUser      *int64          `json:"runAsUser,omitempty"`
	SeccompProfile *SeccompProfile `json:"seccompProfile,omitempty"`
}

// SeccompProfile names a seccomp profile type (RuntimeDefault).
type SeccompProfile struct {
	Type string `json:"type"`
}

// Container is one container of the Pod.
type Container struct {
	Command         []string             `json:"command,omitempty"`
	Env             []EnvVar             `json:"env,omitempty"`
	Image           string               `json:"image,omitempty"`
	ImagePullPolicy string               `json:"imagePullPolicy,omitempty"`
	Name            string               `json:"name"`
	Resources       ResourceRequirements `json:"resources"`
	SecurityContext *SecurityContext     `json:"securityContext,omitempty"`
	VolumeMounts    []VolumeMount        `json:"volumeMounts,omitempty"`
	WorkingDir      string               `json:"workingDir,omitempty"`
}

// EnvVar is a plain name=value variable.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
}

// ResourceRequirements holds quantities in their canonical text form
// (see quantity).
type ResourceRequirements struct {
	Limits   map[string]string `json:"limits,omitempty"`
	Requests map[string]string `json:"requests,omitempty"`
}

// SecurityContext is a container's securityContext.
type SecurityContext struct {
	AllowPrivilegeEscalation *bool           `json:"allowPrivilegeEscalation,omitempty"`
	Capabilities             *Capabilities   `json:"capabilities,omitempty"`
	Privileged               *bool           `json:"privileged,omitempty"`
	ReadOnlyRootFilesystem   *bool           `json:"readOnlyRootFilesystem,omitempty"`
	RunAsGroup               *int64          `json:"runAsGroup,omitempty"`
	RunAsNonRoot             *bool           `json:"runAsNonRoot,omitempty"`
	RunAsUser                *int64          `json:"runAsUser,omitempty"`
	SeccompProfile           *SeccompProfile `json:"seccompProfile,omitempty"`
}

// Capabilities lists capabilities to drop.
type Capabilities struct {
	Drop []string `json:"drop,omitempty"`
}

// VolumeMount mounts a volume in the container.
type VolumeMount struct {
	MountPath string `json:"mountPath"`
	Name      string `json:"name"`
}

// Volume is an emptyDir volume (the only kind the backend uses).
type Volume struct {
	EmptyDir *EmptyDir `json:"emptyDir,omitempty"`
	Name     string    `json:"name"`
}

// EmptyDir is an emptyDir volume source.
type EmptyDir struct {
	Medium    string `json:"medium,omitempty"`
	SizeLimit string `json:"sizeLimit,omitempty"`
}

// PodStatus is the part of a Pod's status the backend reads.
type PodStatus struct {
	Phase             string            `json:"phase,omitempty"`
	Reason            string            `json:"reason,omitempty"`
	Message           string            `json:"message,omitempty"`
	ContainerStatuses []ContainerStatus `json:"containerStatuses,omitempty"`
}

// ContainerStatus is the part of a container's status the backend reads.
type ContainerStatus struct {
	Name  string `json:"name"`
	Ready bool   `json:"ready"`
	State struct {
		Waiting *struct {
			Reason  string `json:"reason,omitempty"`
			Message string `json:"message,omitempty"`
		} `json:"waiting,omitempty"`
	} `json:"state"`
}

// Pod phases the backend acts on.
const (
	PodRunning   = "Running"
	PodSucceeded = "Succeeded"
	PodFailed    = "Failed"
)

// NetworkPolicy is a networking.k8s.io/v1 NetworkPolicy.
type NetworkPolicy struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	ObjectMeta `json:"metadata"`
	Spec       NetworkPolicySpec `json:"spec"`
}

// NetworkPolicySpec selects the run's Pod and lists what it may reach.
// No ingress rule: all ingress is denied.
type NetworkPolicySpec struct {
	Egress      []EgressRule  `json:"egress,omitempty"`
	PodSelector LabelSelector `json:"podSelector"`
	PolicyTypes []string      `json:"policyTypes,omitempty"`
}

// EgressRule allows traffic to peers on ports.
type EgressRule struct {
	Ports []PolicyPort `json:"ports,omitempty"`
	To    []PolicyPeer `json:"to,omitempty"`
}

// PolicyPort is a protocol and a port number.
type PolicyPort struct {
	Port     int32  `json:"port,omitempty"`
	Protocol string `json:"protocol,omitempty"`
}

// PolicyPeer is the Pods of the namespaces that match both selectors.
type PolicyPeer struct {
	NamespaceSelector *LabelSelector `json:"namespaceSelector,omitempty"`
	PodSelector       *LabelSelector `json:"podSelector,omitempty"`
}

// LabelSelector matches labels exactly.
type LabelSelector struct {
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}
