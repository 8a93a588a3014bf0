//go:build linux

package kubernetes_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/kubernetes"
	"github.com/fullsend-ai/fullsend/internal/sandbox/kubernetes/k8stest"
	"github.com/fullsend-ai/fullsend/internal/sandbox/local"
)

const e2eImage = "example.com/sandbox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// fakeCluster starts the fake API server backed by the local sandbox and a
// kubernetes backend talking to it (REST and WebSocket exec).
func fakeCluster(t *testing.T, o sandbox.Options) (*kubernetes.Backend, *k8stest.Server) {
	t.Helper()
	inner, err := local.New(sandbox.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Skipf("local sandbox unavailable: %v", err)
	}
	srv := k8stest.New(inner)
	t.Cleanup(srv.Close)
	rc := &kubernetes.Cluster{Server: srv.URL}
	cs, err := kubernetes.NewClient(rc)
	if err != nil {
		t.Fatal(err)
	}
	o.Namespace, o.Image = "runs", e2eImage
	b, err := kubernetes.NewWithClient(o, cs, kubernetes.NewExecutor(rc))
	if err != nil {
		t.Fatal(err)
	}
	return b, srv
}

func provisionFake(t *testing.T, spec sandbox.Spec) (sandbox.Session, *k8stest.Server) {
	t.Helper()
	b, srv := fakeCluster(t, sandbox.Options{})
	s, err := b.Provision(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Terminate(context.Background()) })
	return s, srv
}

func TestExecOverWebSocket(t *testing.T) {
	s, srv := provisionFake(t, sandbox.Spec{Env: map[string]string{"FROM_SPEC": "spec"}, WorkDir: "/sandbox"})
	ctx := context.Background()
	var live bytes.Buffer
	r, err := s.Exec(ctx, sandbox.ExecRequest{
		Args:   []string{"sh", "-c", `echo "out $FROM_SPEC $FROM_REQ $(pwd)"; echo err >&2; cat; exit 7`},
		Env:    map[string]string{"FROM_REQ": "req"},
		Cwd:    "/tmp",
		Stdin:  []byte("from stdin\n"),
		Stdout: &live,
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Stdout) != "out spec req /tmp\nfrom stdin\n" || string(r.Stderr) != "err\n" || r.ExitCode != 7 || r.TimedOut {
		t.Fatalf("exec: %+v (stdout %q stderr %q)", r, r.Stdout, r.Stderr)
	}
	if live.String() != string(r.Stdout) {
		t.Errorf("live stdout %q", live.String())
	}
	// A streamed stdin ends with the v5 CLOSE signal: cat sees EOF.
	r, err = s.Exec(ctx, sandbox.ExecRequest{Args: []string{"wc", "-c"}, StdinReader: strings.NewReader(strings.Repeat("x", 100000))})
	if err != nil || strings.TrimSpace(string(r.Stdout)) != "100000" || r.ExitCode != 0 {
		t.Fatalf("streamed stdin: %q %v", r.Stdout, err)
	}
	// Exit 0 and a missing command (127).
	if r, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"true"}}); err != nil || r.ExitCode != 0 {
		t.Fatalf("true: %+v %v", r, err)
	}
	if r, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"no-such-command-xyz"}}); err != nil || r.ExitCode != 127 {
		t.Fatalf("missing command: %+v %v", r, err)
	}
	if len(srv.ExecLog()) == 0 || srv.ExecLog()[0][0] != "/bin/sh" {
		t.Fatalf("execs %q", srv.ExecLog())
	}
}

func TestExecTimeoutAndOutputLimit(t *testing.T) {
	s, _ := provisionFake(t, sandbox.Spec{Limits: sandbox.Limits{OutputBytes: 1000}})
	ctx := context.Background()
	r, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"sh", "-c", "echo started; sleep 30"}, Timeout: 500 * time.Millisecond})
	if err != nil || !r.TimedOut || r.ExitCode != -1 {
		t.Fatalf("timeout: %+v %v", r, err)
	}
	r, err = s.Exec(ctx, sandbox.ExecRequest{Args: []string{"sh", "-c", "head -c 5000 /dev/zero"}})
	if !errors.Is(err, sandbox.ErrOutputLimit) || len(r.Stdout) > 1000 {
		t.Fatalf("output limit: %d bytes, %v", len(r.Stdout), err)
	}
}

func TestUploadDownloadTar(t *testing.T) {
	s, _ := provisionFake(t, sandbox.Spec{Limits: sandbox.Limits{OutputBytes: 4096}})
	ctx := context.Background()
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "d"), 0o755)
	os.WriteFile(filepath.Join(src, "d", "f.txt"), []byte("hello"), 0o644)
	os.WriteFile(filepath.Join(src, "top"), []byte("top"), 0o600)
	os.Symlink("/etc/passwd", filepath.Join(src, "link"))
	if err := s.Upload(ctx, src, "/sandbox/up"); err != nil {
		t.Fatal(err)
	}
	r, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"sh", "-c", "cat /sandbox/up/d/f.txt /sandbox/up/top; test -e /sandbox/up/link && echo LINK; true"}})
	if err != nil || string(r.Stdout) != "hellotop" {
		t.Fatalf("uploaded tree: %q %v", r.Stdout, err)
	}
	// Download: regular files come back; a symlink made inside is not
	// followed or copied.
	if _, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"sh", "-c", "ln -s /etc/shadow /sandbox/up/evil && echo new > /sandbox/up/d/new"}}); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "out")
	if err := s.Download(ctx, "/sandbox/up", dst); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "d", "new")); err != nil || string(b) != "new\n" {
		t.Fatalf("downloaded file: %q %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "evil")); !os.IsNotExist(err) {
		t.Fatalf("symlink downloaded: %v", err)
	}
	// Past OutputBytes: refused, nothing left behind.
	if _, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"sh", "-c", "head -c 8000 /dev/zero > /sandbox/big"}}); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(t.TempDir(), "big")
	if err := s.Download(ctx, "/sandbox/big", big); !errors.Is(err, sandbox.ErrOutputLimit) {
		t.Fatalf("big download: %v", err)
	}
	if _, err := os.Lstat(big); !os.IsNotExist(err) {
		t.Fatalf("refused download left %s", big)
	}
}

func TestFakeClusterTeardown(t *testing.T) {
	b, srv := fakeCluster(t, sandbox.Options{})
	s, err := b.Provision(context.Background(), sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Objects()); n != 2 {
		t.Fatalf("objects while running: %v", srv.Objects())
	}
	if err := s.Terminate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Objects()); n != 0 {
		t.Fatalf("objects after Terminate: %v", srv.Objects())
	}
}

// TestTimeoutKillsCommand: ending the exec stream does not by itself stop
// what the command started in the Pod (a kubelet lets it run), so after
// every exec, at its timeout or not, the backend sends a second exec that
// kills the session the first one recorded. (The fake runs each exec in its
// own pid namespace, so the kill itself is checked on a real cluster only,
// by the conformance suite; here the requests are.)
func TestTimeoutKillsCommand(t *testing.T) {
	s, srv := provisionFake(t, sandbox.Spec{})
	r, err := s.Exec(context.Background(), sandbox.ExecRequest{Args: []string{"sleep", "30"}, Timeout: 300 * time.Millisecond})
	if err != nil || !r.TimedOut || r.ExitCode != -1 {
		t.Fatalf("timeout: %+v %v", r, err)
	}
	if r, err := s.Exec(context.Background(), sandbox.ExecRequest{Args: []string{"true"}}); err != nil || r.ExitCode != 0 {
		t.Fatalf("true: %+v %v", r, err)
	}
	execs := srv.ExecLog()
	if len(execs) != 5 { // probe, (run, kill) twice
		t.Fatalf("execs %q", execs)
	}
	for _, pair := range [][2][]string{{execs[1], execs[2]}, {execs[3], execs[4]}} {
		run, kill := pair[0], pair[1]
		// sh -c WRAPPER fullsend-exec CWD ROLE=confine BINARY PIDFILE FSIZE CMD…
		if len(run) < 10 || run[5] != "FULLSEND_SANDBOX_ROLE=confine" || run[6] != sandbox.BinaryPath {
			t.Fatalf("exec not under the confine role: %q", run)
		}
		pidFile := run[7]
		if !strings.HasPrefix(pidFile, "/tmp/.fullsend-exec/") {
			t.Fatalf("exec %q", run)
		}
		if len(kill) != 6 || kill[0] != "/bin/sh" || kill[4] != pidFile || !strings.Contains(kill[5], "kill -9") {
			t.Fatalf("no kill of the session of %s after the exec: %q", pidFile, kill)
		}
	}
}

// TestKubeconfigTLSEndToEnd: kubernetes.New reads the kubeconfig ($KUBECONFIG)
// and reaches an HTTPS API server with its CA and bearer token, for the
// REST calls and for exec over wss://; a wrong token is refused.
func TestKubeconfigTLSEndToEnd(t *testing.T) {
	inner, err := local.New(sandbox.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Skipf("local sandbox unavailable: %v", err)
	}
	srv := k8stest.NewTLS(inner)
	defer srv.Close()
	kc, err := srv.Kubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kc)
	b, err := kubernetes.New(sandbox.Options{Namespace: "runs", Image: e2eImage})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := b.Provision(ctx, sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"cat"}, Stdin: []byte("over wss")})
	if err != nil || string(r.Stdout) != "over wss" {
		t.Fatalf("exec over wss: %q %v", r.Stdout, err)
	}
	if err := s.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(kc, []byte(strings.Replace(string(body), srv.Token(), "wrong", 1)), 0o600)
	b, err = kubernetes.New(sandbox.Options{Namespace: "runs", Image: e2eImage})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Provision(ctx, sandbox.Spec{}); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Fatalf("wrong token: %v", err)
	}
}
