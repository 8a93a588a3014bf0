package egress_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox/egress"
)

// TestRefusalNamesTheKey: a refused internal destination says which
// config.yaml setting would admit it.
func TestRefusalNamesTheKey(t *testing.T) {
	p, err := egress.New(egress.Config{
		Allow:    []string{"local.test:9000", "corp.test:443", "127.0.0.1:4000"},
		Resolver: res,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host string
		port int
		want []string
	}{
		// The model gateway on the runner's loopback, allowlisted in a policy.
		{"127.0.0.1", 4000, []string{"internal address 127.0.0.1", `sandbox.host_services lists it ("127.0.0.1:4000")`}},
		// Not allowlisted at all.
		{"127.0.0.1", 4001, []string{"not in the sandbox allowlist", `sandbox.host_services lists it ("127.0.0.1:4001")`}},
		{"local.test", 9000, []string{`sandbox.host_services lists it ("127.0.0.1:9000")`}},
		{"corp.test", 443, []string{"internal address 10.1.2.3", `allowed_private_networks (e.g. "10.1.2.0/24")`}},
		{"api.github.com", 443, []string{"not in the sandbox allowlist (the harness policy's network_policies"}},
	} {
		_, err := p.Check(context.Background(), c.host, c.port)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s:%d: %v, want %q", c.host, c.port, err, w)
			}
		}
	}
}

// TestCloseCutsUpstream: Close returns while a tunnelled and a plain
// request are still waiting on an upstream that never answers; the
// upstream sees its connections closed.
func TestCloseCutsUpstream(t *testing.T) {
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	closed := make(chan struct{}, 4)
	accepted := make(chan struct{}, 4)
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			go func() { // never answers; reports when the proxy hangs up
				io.Copy(io.Discard, c)
				c.Close()
				closed <- struct{}{}
			}()
		}
	}()
	svc := up.Addr().String()
	p, addr := startProxy(t, egress.Config{Services: []string{svc}, Resolver: res})

	tunnel, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer tunnel.Close()
	fmt.Fprintf(tunnel, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", svc, svc)
	resp, err := http.ReadResponse(bufio.NewReader(tunnel), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	io.WriteString(tunnel, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
	plain, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	fmt.Fprintf(plain, "POST http://%s/v1/messages HTTP/1.1\r\nHost: %s\r\nContent-Length: 2\r\n\r\n{}", svc, svc)
	// Both requests reach the upstream (which holds them open) before Close.
	for i := 0; i < 2; i++ {
		select {
		case <-accepted:
		case <-time.After(20 * time.Second):
			t.Fatalf("request %d never reached the upstream", i+1)
		}
	}

	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second): // a liveness bound, not a speed figure
		t.Fatal("Close did not return while upstream requests were open")
	}
	for i := 0; i < 2; i++ {
		select {
		case <-closed:
		case <-time.After(20 * time.Second):
			t.Fatalf("upstream connection %d still open after Close", i+1)
		}
	}
}
