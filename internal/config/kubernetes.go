package config

import (
	"net/url"

	"go.yaml.in/yaml/v4"

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

func (p *parser) kubernetes(n *yaml.Node, field string, k *Kubernetes) error {
	pairs, err := yamlx.Pairs(p.file, field, n)
	if err != nil {
		return err
	}
	for _, kv := range pairs {
		f := field + "." + kv[0].Value
		v, err := yamlx.String(p.file, f, kv[1])
		if err != nil {
			return err
		}
		bad := func(format string, a ...any) error {
			return yamlx.Errorf(p.file, kv[1], f, yamlx.ErrValue, format, a...)
		}
		switch kv[0].Value {
		case "namespace":
			if !dns1123Label.MatchString(v) {
				return bad("%q is not a namespace name (lower-case DNS label)", v)
			}
			k.Namespace = v
		case "runtime_class":
			if v != "" && (len(v) > 253 || !dns1123Subdomain.MatchString(v)) {
				return bad("%q is not a RuntimeClass name", v)
			}
			k.RuntimeClass = v
		case "image":
			if !PinnedImage(v) {
				return bad("%q is not pinned by digest (NAME@sha256:<64 hex>)", v)
			}
			k.Image = v
		case "egress_gateway":
			u, err := url.Parse(v)
			if err != nil || u.Scheme != "http" || u.Hostname() == "" || u.Port() == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
				return bad("%q: want http://HOST:PORT of the fullsend egress gateway (e.g. http://fullsend-egress.fullsend.svc:3128)", v)
			}
			k.EgressGateway = v
		case "signing_key_env":
			if !envName.MatchString(v) {
				return bad("%q is not an environment variable name", v)
			}
			k.SigningKeyEnv = v
		default:
			return yamlx.Errorf(p.file, kv[0], f, yamlx.ErrUnknownField, "(known: namespace, runtime_class, image, egress_gateway, signing_key_env)")
		}
	}
	return nil
}
