package cli

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/gateway"
	"github.com/fullsend-ai/fullsend/internal/syncbuf"
)

func TestEgressGatewayKeygen(t *testing.T) {
	code, out, errs := runCLI(t, "egress-gateway", "keygen")
	if code != 0 {
		t.Fatalf("keygen: %d %s", code, errs)
	}
	if _, err := gateway.ParseKey(out); err != nil {
		t.Fatalf("keygen printed %q: %v", out, err)
	}
	f := filepath.Join(t.TempDir(), "signing.key")
	if code, _, errs := runCLI(t, "egress-gateway", "keygen", "-o", f); code != 0 {
		t.Fatalf("keygen -o: %d %s", code, errs)
	}
	st, err := os.Stat(f)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v %v", st, err)
	}
	if code, _, errs := runCLI(t, "egress-gateway", "keygen", "-o", f); code == 0 || !strings.Contains(errs, "exists") {
		t.Fatalf("keygen overwrote %s: %d %s", f, code, errs)
	}
}

func TestEgressGatewayNeedsKey(t *testing.T) {
	code, _, errs := runCLI(t, "egress-gateway", "--listen", "127.0.0.1:0")
	if code != ExitFailure || !strings.Contains(oneStderrLine(t, errs), "$FULLSEND_EGRESS_KEY: not set") {
		t.Fatalf("no key: %d %q", code, errs)
	}
}

// lineWriter hands each stderr line to a channel.
type lineWriter struct{ ch chan string }

func (w lineWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w.ch <- l
	}
	return len(p), nil
}

func TestEgressGatewayServes(t *testing.T) {
	key, _ := gateway.NewKey()
	ch := make(chan string, 10)
	var out syncbuf.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: lineWriter{ch}, Getenv: func(k string) string {
		if k == DefaultEgressKeyEnv {
			return key
		}
		return ""
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- run(ctx, env, []string{"egress-gateway", "--listen", "127.0.0.1:0"}) }()
	var addr string
	select {
	case l := <-ch:
		var ok bool
		if addr, ok = strings.CutPrefix(l, "fullsend: egress gateway listening on "); !ok {
			t.Fatalf("first line %q", l)
		}
	case code := <-done:
		t.Fatalf("gateway exited %d", code)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	c.Close()
	if err != nil || resp.StatusCode != http.StatusProxyAuthRequired {
		t.Fatalf("no token: %v %v", resp, err)
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitInterrupted && code != 0 {
			t.Fatalf("exit %d", code)
		}
	case <-time.After(time.Minute):
		t.Fatal("gateway did not stop on cancel")
	}
	if !strings.Contains(out.String(), "run=? deny example.com:443: proxy authorization: egress token refused: missing") {
		t.Fatalf("decision log %q", out.String())
	}
}

func TestSandboxExecDryRun(t *testing.T) {
	dir := t.TempDir()
	cfg := `version: "1"
sandbox:
  backend: kubernetes
  kubernetes:
    namespace: fullsend-runs
    runtime_class: gvisor
    image: example.com/sandbox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
    egress_gateway: http://fullsend-egress-gateway.fullsend-system.svc:3128
`
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	// No kubeconfig, no key: a dry run contacts nothing and mints nothing.
	t.Setenv("KUBECONFIG", filepath.Join(dir, "none"))
	code, out, errs := runCLI(t, "--fullsend-dir", dir, "sandbox", "exec", "--dry-run", "--net", "github.com", "--memory", "1G", "--", "true")
	if code != 0 {
		t.Fatalf("dry run: %d %s", code, errs)
	}
	for _, want := range []string{"kind: NetworkPolicy\n", "---\napiVersion: v1\nkind: Pod\n", "runtimeClassName: gvisor\n", "memory: 1Gi\n",
		"value: http://run:TOKEN@fullsend-egress-gateway.fullsend-system.svc:3128\n", "readOnlyRootFilesystem: true\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	code, _, errs = runCLI(t, "--fullsend-dir", dir, "sandbox", "exec", "--backend", "local", "--dry-run", "--", "true")
	if code != ExitUsage || !strings.Contains(errs, "only the kubernetes backend") {
		t.Errorf("--dry-run with local: %d %q", code, errs)
	}
	code, _, errs = runCLI(t, "--fullsend-dir", dir, "sandbox", "exec", "--dry-run", "--image", "busybox:latest", "--", "true")
	if code == 0 || !strings.Contains(errs, "must be pinned by digest") {
		t.Errorf("unpinned image: %d %q", code, errs)
	}
}

// TestKubernetesNeedsSigningKey: with a gateway configured, the runner
// refuses to start without the key (it could not mint a token).
func TestKubernetesNeedsSigningKey(t *testing.T) {
	dir := t.TempDir()
	cfg := `version: "1"
sandbox:
  kubernetes:
    namespace: fullsend-runs
    image: example.com/sandbox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
    egress_gateway: http://gw.fullsend-system.svc:3128
    signing_key_env: MY_GATEWAY_KEY
`
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "--fullsend-dir", dir, "sandbox", "exec", "--backend", "kubernetes", "--", "true")
	if code != ExitFailure || !strings.Contains(oneStderrLine(t, errs), "$MY_GATEWAY_KEY (config.yaml sandbox.kubernetes.signing_key_env): not set") {
		t.Fatalf("no key: %d %q", code, errs)
	}
}
