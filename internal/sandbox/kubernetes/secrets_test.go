package kubernetes

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/fullsend-ai/fullsend/internal/gateway"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/secrets"
)

// TestProvisionSecrets: the run's secrets broker travels sealed in the
// Pod's gateway token: the gateway's key opens it, while the Pod object
// (its environment included) holds the placeholder and never the value.
func TestProvisionSecrets(t *testing.T) {
	const real = "ghp_REAL_k8s_value_0123456789"
	cs := fake.NewClientset()
	readyOnCreate(cs, "")
	now := time.Now()
	b := newTestBackend(t, cs, now)
	br, err := secrets.New([]secrets.Secret{{Name: "GH_TOKEN", Value: real, Hosts: []string{"api.github.com"}}}, secrets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ph := br.Env()["GH_TOKEN"]
	ctx := context.Background()
	s, err := b.Provision(ctx, sandbox.Spec{Env: br.Env(), Network: sandbox.Network{Allow: []string{"api.github.com"}, Secrets: br}, Limits: sandbox.Limits{WallTime: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Terminate(ctx)
	pod, err := cs.CoreV1().Pods("fullsend-runs").Get(ctx, "fullsend-"+s.ID(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(pod)
	if strings.Contains(string(raw), real) || env(pod, "GH_TOKEN") != ph {
		t.Fatalf("the Pod holds the value, or not the placeholder (%q)", env(pod, "GH_TOKEN"))
	}
	tok, _ := strings.CutPrefix(env(pod, "HTTPS_PROXY"), "http://run:")
	tok, _, _ = strings.Cut(tok, "@")
	c, err := gateway.Verify(testKey, tok, now.Add(time.Minute))
	if err != nil || c.Secrets == "" {
		t.Fatalf("token %+v %v", c, err)
	}
	t.Logf("token with one secret: %d bytes", len(tok))
	// What the gateway opens with its key: the same placeholder, the value.
	blob, err := base64.RawURLEncoding.DecodeString(c.Secrets)
	if err != nil {
		t.Fatal(err)
	}
	opened, err := secrets.Open(gateway.SealKey(testKey), blob)
	if err != nil {
		t.Fatal(err)
	}
	if opened.Env()["GH_TOKEN"] != ph || !opened.Intercepts("api.github.com", 443) || opened.Values()[0] != real {
		t.Fatal("the sealed broker differs")
	}
}
