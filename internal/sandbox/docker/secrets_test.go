//go:build linux

package docker_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/docker"
	"github.com/fullsend-ai/fullsend/internal/secrets"
)

// refusals is a proxy log that records the broker's refusals.
type refusals struct {
	mu   sync.Mutex
	list []string
}

func (r *refusals) Write(b []byte) (int, error) { return len(b), nil }

func (r *refusals) SecretRefused(dest, secret, reason string) {
	r.mu.Lock()
	r.list = append(r.list, secret+" "+reason)
	r.mu.Unlock()
}

// TestSecretsBroker: the docker backend's egress proxy applies the run's
// secrets broker like the local backend's (one implementation): a
// container sees the placeholder, a request with it in a header to the
// secret's host service reaches it with the real value, and the same
// placeholder in a body is refused and recorded.
func TestSecretsBroker(t *testing.T) {
	setup(t)
	const real = "sk-REAL-docker-secret-value"
	var mu sync.Mutex
	var got []string
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Header.Get("X-Api-Key")+"|"+string(b))
		mu.Unlock()
		io.WriteString(w, "ok\n")
	}))
	defer svc.Close()
	addr := svc.Listener.Addr().String()
	br, err := secrets.New([]secrets.Secret{{Name: "API_KEY", Value: real, Hosts: []string{addr}}}, secrets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := docker.New(sandbox.Options{Image: image, Binary: binary})
	if err != nil {
		t.Skipf("DOCKER BACKEND SKIPPED: %v", err)
	}
	log := &refusals{}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := b.Provision(ctx, sandbox.Spec{Env: br.Env(), Network: sandbox.Network{Services: []string{addr}, Secrets: br, Log: log}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Terminate(context.Background())
	sh := func(cmd string) string {
		r, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"sh", "-c", cmd}})
		if err != nil {
			t.Fatal(err)
		}
		return string(r.Stdout) + string(r.Stderr)
	}
	if out := sh(`echo "$API_KEY"`); strings.TrimSpace(out) != br.Env()["API_KEY"] {
		t.Fatalf("the container sees %q", out)
	}
	wget := `env -u no_proxy -u NO_PROXY wget -q -O - `
	if out := sh(wget + `--header "X-Api-Key: $API_KEY" http://` + addr + `/v1/models`); !strings.Contains(out, "ok") {
		t.Fatalf("the swapped request failed: %q", out)
	}
	sh(wget + `--post-data "k=$API_KEY" http://` + addr + `/leak`)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != real+"|" {
		t.Errorf("the host service got %q, want the real value once, in the header", got)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.list) != 1 || !strings.Contains(log.list[0], "API_KEY") || !strings.Contains(log.list[0], "request body") {
		t.Errorf("refusals %q", log.list)
	}
}
