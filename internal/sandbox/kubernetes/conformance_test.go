//go:build linux

package kubernetes_test

import (
	"os"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/gateway"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/kubernetes"
	"github.com/fullsend-ai/fullsend/internal/sandbox/sandboxtest"
)

// TestConformance runs the sandbox conformance suite against a real
// cluster (the current kubeconfig) when FULLSEND_K8S_E2E=1; see README
// "Running on Kubernetes" for kind. FULLSEND_K8S_E2E_NAMESPACE and
// FULLSEND_K8S_E2E_IMAGE (NAME@sha256:…, with sh, tar and the fullsend
// binary) are required; FULLSEND_K8S_E2E_RUNTIME_CLASS,
// FULLSEND_K8S_E2E_GATEWAY and FULLSEND_EGRESS_KEY are optional.
func TestConformance(t *testing.T) {
	if os.Getenv("FULLSEND_K8S_E2E") != "1" {
		t.Skip("FULLSEND_K8S_E2E is not 1: no cluster")
	}
	ns, img := os.Getenv("FULLSEND_K8S_E2E_NAMESPACE"), os.Getenv("FULLSEND_K8S_E2E_IMAGE")
	if ns == "" || img == "" {
		t.Fatal("FULLSEND_K8S_E2E=1 needs FULLSEND_K8S_E2E_NAMESPACE and FULLSEND_K8S_E2E_IMAGE")
	}
	sandboxtest.Run(t, func(t *testing.T, o sandbox.Options) sandbox.Backend {
		o.Namespace, o.Image, o.RuntimeClass = ns, img, os.Getenv("FULLSEND_K8S_E2E_RUNTIME_CLASS")
		if gw := os.Getenv("FULLSEND_K8S_E2E_GATEWAY"); gw != "" {
			key, err := gateway.ParseKey(os.Getenv("FULLSEND_EGRESS_KEY"))
			if err != nil {
				t.Fatal(err)
			}
			o.EgressGateway, o.SigningKey = gw, key
		}
		b, err := kubernetes.New(o)
		if err != nil {
			t.Fatalf("kubernetes backend: %v", err)
		}
		return b
	})
}
