package config

import (
	"net/url"

	"github.com/fullsend-ai/fullsend/internal/lazyre"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// Kubernetes configures the kubernetes sandbox backend
// (sandbox.kubernetes). The kubeconfig comes from $KUBECONFIG,
// ~/.kube/config, or the in-cluster service account.
type Kubernetes struct {
	Namespace     string // namespace of the run Pods and NetworkPolicies
	RuntimeClass  string // Pod runtimeClassName (e.g. "gvisor"); "" = the cluster default
	Image         string // sandbox image, pinned: NAME@sha256:HEX
	EgressGateway string // http://HOST:PORT of `fullsend egress-gateway`
	SigningKeyEnv string // variable holding the gateway's signing key
}

var (
	dns1123Label     = lazyre.New(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	dns1123Subdomain = lazyre.New(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	pinnedImage      = lazyre.New(`^[a-zA-Z0-9][a-zA-Z0-9._/:-]*@sha256:[0-9a-f]{64}$`)
	envName          = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// PinnedImage reports whether image names its content by digest.
func PinnedImage(image string) bool { return pinnedImage.MatchString(image) }

// kubernetesYAML is sandbox.kubernetes; the file's keys replace the whole
// setting.
type kubernetesYAML struct {
	Namespace     string `yaml:"namespace"`
	RuntimeClass  string `yaml:"runtime_class"`
	Image         string `yaml:"image"`
	EgressGateway string `yaml:"egress_gateway"`
	SigningKeyEnv string `yaml:"signing_key_env"`
}

func (k *kubernetesYAML) CheckKey(f *yamlx.Fields, key string) error {
	bad := func(format string, a ...any) error {
		return f.Errorf(key, yamlx.ErrValue, format, a...)
	}
	switch key {
	case "namespace":
		if !dns1123Label.MatchString(k.Namespace) {
			return bad("%q is not a namespace name (lower-case DNS label)", k.Namespace)
		}
	case "runtime_class":
		if v := k.RuntimeClass; v != "" && (len(v) > 253 || !dns1123Subdomain.MatchString(v)) {
			return bad("%q is not a RuntimeClass name", v)
		}
	case "image":
		if !PinnedImage(k.Image) {
			return bad("%q is not pinned by digest (NAME@sha256:<64 hex>)", k.Image)
		}
	case "egress_gateway":
		v := k.EgressGateway
		u, err := url.Parse(v)
		if err != nil || u.Scheme != "http" || u.Hostname() == "" || u.Port() == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return bad("%q: want http://HOST:PORT of the fullsend egress gateway (e.g. http://fullsend-egress.fullsend.svc:3128)", v)
		}
	case "signing_key_env":
		if !envName.MatchString(k.SigningKeyEnv) {
			return bad("%q is not an environment variable name", k.SigningKeyEnv)
		}
	}
	return nil
}

// UnknownKey: every value is a string, checked before the key.
func (k *kubernetesYAML) UnknownKey(f *yamlx.Fields, e yamlx.Entry) error {
	field := f.Field(e.Key.Value)
	if _, err := yamlx.String(f.File, field, e.Value); err != nil {
		return err
	}
	return yamlx.Errorf(f.File, e.Key, field, yamlx.ErrUnknownField, "(known: namespace, runtime_class, image, egress_gateway, signing_key_env)")
}
