package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

const k8sDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestKubernetesConfig(t *testing.T) {
	c, warns, err := Parse("config.yaml", []byte(`version: "1"
sandbox:
  backend: kubernetes
  kubernetes:
    namespace: fullsend-runs
    runtime_class: gvisor
    image: ghcr.io/fullsend-ai/sandbox@`+k8sDigest+`
    egress_gateway: http://fullsend-egress.fullsend.svc:3128
    signing_key_env: FULLSEND_EGRESS_KEY
`))
	if err != nil || len(warns) != 0 {
		t.Fatalf("Parse: %v %v", err, warns)
	}
	want := Kubernetes{Namespace: "fullsend-runs", RuntimeClass: "gvisor", Image: "ghcr.io/fullsend-ai/sandbox@" + k8sDigest,
		EgressGateway: "http://fullsend-egress.fullsend.svc:3128", SigningKeyEnv: "FULLSEND_EGRESS_KEY"}
	if c.Sandbox.Backend != "kubernetes" || c.Sandbox.Kubernetes != want {
		t.Fatalf("sandbox %+v", c.Sandbox)
	}
}

func TestKubernetesConfigErrors(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"namespace: Bad_NS", "config.yaml:4: sandbox.kubernetes.namespace: invalid value"},
		{"runtime_class: GVISOR", "sandbox.kubernetes.runtime_class: invalid value"},
		{"image: busybox:latest", "config.yaml:4: sandbox.kubernetes.image: invalid value: \"busybox:latest\" is not pinned by digest"},
		{"image: busybox@sha256:abc", "not pinned by digest"},
		{"egress_gateway: https://gw:3128", "sandbox.kubernetes.egress_gateway: invalid value"},
		{"egress_gateway: http://gw", "sandbox.kubernetes.egress_gateway: invalid value"},
		{"egress_gateway: http://u:p@gw:3128", "sandbox.kubernetes.egress_gateway: invalid value"},
		{"signing_key_env: 'A-B'", "sandbox.kubernetes.signing_key_env: invalid value"},
		{"namespce: x", "config.yaml:4: sandbox.kubernetes.namespce: unknown field"},
	} {
		_, _, err := Parse("config.yaml", []byte("version: \"1\"\nsandbox:\n  kubernetes:\n    "+c.body+"\n"))
		var ye *yamlx.Error
		if err == nil || !errors.As(err, &ye) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.body, err, c.want)
		}
	}
	if _, _, err := Parse("config.yaml", []byte("version: \"1\"\nsandbox:\n  backend: kube\n")); err == nil || !strings.Contains(err.Error(), "local, docker, kubernetes") {
		t.Errorf("bad backend: %v", err)
	}
}
