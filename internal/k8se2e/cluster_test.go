//go:build linux

package k8se2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/kubernetes"
)

// deployed applies deploy/kubernetes once (TestDeploy checks each step).
var deployed struct {
	once    sync.Once
	err     error
	key     string // the gateway's signing key
	runner  string // a kubeconfig holding the fullsend-runner ServiceAccount's token
	gateway string // http://CLUSTER-IP:3128 (the cluster has no DNS)
}

// deploy applies deploy/kubernetes through an overlay that sets the image
// (`images:`), the namespaces first: a server-side dry run cannot place
// objects in namespaces it only pretended to create.
func deploy(t *testing.T) {
	t.Helper()
	need(t)
	deployed.once.Do(func() { deployed.err = doDeploy(t) })
	if deployed.err != nil {
		t.Fatal(deployed.err)
	}
}

func doDeploy(t *testing.T) error {
	w, err := os.MkdirTemp(env.bin, "deploy-") // removed with env.bin
	if err != nil {
		return err
	}
	base := filepath.Join(w, "kubernetes")
	if err := os.CopyFS(base, os.DirFS(filepath.Join(env.root, "deploy", "kubernetes"))); err != nil {
		return err
	}
	if out, err := exec.Command(env.fullsend, "egress-gateway", "keygen", "-o", filepath.Join(base, "signing.key")).CombinedOutput(); err != nil {
		return fmt.Errorf("keygen: %v %s", err, out)
	}
	key, err := os.ReadFile(filepath.Join(base, "signing.key"))
	if err != nil {
		return err
	}
	deployed.key = strings.TrimSpace(string(key))
	img := env.images["gateway"]
	name, digest, _ := strings.Cut(img, "@")
	overlay := filepath.Join(w, "overlay")
	os.MkdirAll(overlay, 0o755)
	os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [../kubernetes]
images: [{name: fullsend, newName: %s, digest: %s}]
`, name, digest)), 0o644)
	steps := [][]string{
		{"apply", "-f", filepath.Join(base, "namespaces.yaml")},
		{"apply", "-k", overlay, "--dry-run=server"},
		{"apply", "-k", overlay},
		// A reused cluster's gateway holds an earlier key: it reads the
		// Secret at start.
		{"-n", "fullsend-system", "rollout", "restart", "deploy/fullsend-egress-gateway"},
		{"-n", "fullsend-system", "rollout", "status", "deploy/fullsend-egress-gateway", "--timeout=180s"},
	}
	for _, s := range steps {
		if out, err := kubectlRaw(env.admin, nil, s...); err != nil {
			return fmt.Errorf("kubectl %s: %v\n%s", strings.Join(s, " "), err, out)
		}
		t.Logf("kubectl %s: ok", strings.Join(s, " "))
	}
	ip, err := kubectlRaw(env.admin, nil, "-n", "fullsend-system", "get", "svc", "fullsend-egress-gateway", "-o", "jsonpath={.spec.clusterIP}")
	if err != nil {
		return fmt.Errorf("gateway Service: %v %s", err, ip)
	}
	deployed.gateway = "http://" + strings.TrimSpace(ip) + ":3128"
	tok, err := kubectlRaw(env.admin, nil, "-n", "fullsend-runs", "create", "token", "fullsend-runner", "--duration=2h")
	if err != nil {
		return fmt.Errorf("runner token: %v %s", err, tok)
	}
	ca, err := os.ReadFile(filepath.Join(env.dir, "pki", "ca.crt"))
	if err != nil {
		return err
	}
	server := "https://127.0.0.1:" + hostPort()
	deployed.runner = filepath.Join(w, "runner.kubeconfig")
	return os.WriteFile(deployed.runner, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, certificate-authority-data: %s}}]
users: [{name: runner, user: {token: %s}}]
contexts: [{name: c, context: {cluster: c, user: runner, namespace: fullsend-runs}}]
current-context: c
`, server, base64.StdEncoding.EncodeToString(ca), strings.TrimSpace(tok))), 0o600)
}

func hostPort() string {
	if p := os.Getenv("K8S_HOST_PORT"); p != "" {
		return p
	}
	return "16443"
}

// workdir makes a directory whose .fullsend/config.yaml selects the
// kubernetes backend in fullsend-runs with the sandbox image (and the
// gateway when gw).
func workdir(t *testing.T, gw bool) string {
	t.Helper()
	d := t.TempDir()
	cfg := fmt.Sprintf("version: \"1\"\nsandbox:\n  backend: kubernetes\n  kubernetes:\n    namespace: fullsend-runs\n    image: %s\n", env.images["sandbox"])
	if gw {
		cfg += "    egress_gateway: " + deployed.gateway + "\n    signing_key_env: FULLSEND_EGRESS_KEY\n"
	}
	os.MkdirAll(filepath.Join(d, ".fullsend"), 0o755)
	if err := os.WriteFile(filepath.Join(d, ".fullsend", "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

// fullsend runs the CLI in dir as the runner ServiceAccount and returns
// its exit code, stdout and stderr; a 403 anywhere fails t (the Role must
// be exactly enough).
func fullsend(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, env.fullsend, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KUBECONFIG="+deployed.runner, "FULLSEND_EGRESS_KEY="+deployed.key, "HOME="+t.TempDir())
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("fullsend %s: %v", strings.Join(args, " "), err)
	}
	if s := strings.ToLower(errb.String()); strings.Contains(s, "forbidden") || strings.Contains(s, " 403") {
		t.Fatalf("fullsend %s: refused by RBAC (the Role lacks a permission the backend uses):\n%s", strings.Join(args, " "), errb.String())
	}
	return code, out.String(), errb.String()
}

// TestDeploy: deploy/kubernetes applies on a fresh cluster (namespaces
// first, a server-side dry run, then for real) and the egress gateway
// Deployment becomes available.
func TestDeploy(t *testing.T) {
	deploy(t)
	out := kubectl(t, nil, "-n", "fullsend-system", "get", "deploy", "fullsend-egress-gateway", "-o", "jsonpath={.status.availableReplicas}")
	if n, _ := strconv.Atoi(out); n < 1 {
		t.Fatalf("gateway replicas available: %q", out)
	}
}

// TestRunnerRole: the backend, under the fullsend-runner ServiceAccount's
// token (deploy/kubernetes's Role and nothing else), provisions, runs
// commands, passes exit codes through and tears down: no 403 anywhere.
func TestRunnerRole(t *testing.T) {
	deploy(t)
	d := workdir(t, false)
	t0 := time.Now()
	code, out, errs := fullsend(t, d, "sandbox", "exec", "--backend", "kubernetes", "--", "sh", "-c", "echo hi; id -u; pwd")
	if code != 0 || out != "hi\n65532\n/sandbox\n" {
		t.Fatalf("sandbox exec: exit %d stdout %q stderr %q", code, out, errs)
	}
	t.Logf("fullsend sandbox exec --backend kubernetes -- echo hi: %s (provision, exec, teardown)", time.Since(t0).Round(10*time.Millisecond))
	if code, _, errs := fullsend(t, d, "sandbox", "exec", "--backend", "kubernetes", "--", "sh", "-c", "exit 7"); code != 7 {
		t.Fatalf("exit status: %d, want 7 (%s)", code, errs)
	}
	if out := kubectl(t, nil, "-n", "fullsend-runs", "get", "pods,networkpolicies", "-l", kubernetes.LabelManagedBy+"="+kubernetes.ManagedBy, "-o", "name"); strings.TrimSpace(out) != "" {
		t.Errorf("left behind: %s", out)
	}
}

// TestFigures measures, in process under the runner's token, the time to
// the first exec of a Pod, the latency of an exec and the teardown.
func TestFigures(t *testing.T) {
	deploy(t)
	t.Setenv("KUBECONFIG", deployed.runner)
	b, err := kubernetes.New(sandbox.Options{Namespace: "fullsend-runs", Image: env.images["sandbox"]})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t0 := time.Now()
	s, err := b.Provision(ctx, sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Terminate(ctx)
	r, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"true"}})
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("first exec: %+v %v", r, err)
	}
	first := time.Since(t0)
	const n = 10
	t1 := time.Now()
	for i := 0; i < n; i++ {
		if r, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"echo", strconv.Itoa(i)}}); err != nil || string(r.Stdout) != strconv.Itoa(i)+"\n" {
			t.Fatalf("exec %d: %q %v", i, r.Stdout, err)
		}
	}
	per := time.Since(t1) / n
	t2 := time.Now()
	if err := s.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	down := time.Since(t2)
	t.Logf("FIGURES: time to first exec %s; exec latency %s (mean of %d, each with its session kill); teardown %s",
		first.Round(10*time.Millisecond), per.Round(time.Millisecond), n, down.Round(time.Millisecond))
}

// TestDryRunServer: what `fullsend sandbox exec --dry-run` prints, with
// and without egress, passes `kubectl apply --dry-run=server` (the real
// API server's validation and admission: PodSecurity restricted in
// fullsend-runs).
func TestDryRunServer(t *testing.T) {
	deploy(t)
	for _, net := range []string{"none", "github.com"} {
		d := workdir(t, net != "none")
		code, out, errs := fullsend(t, d, "sandbox", "exec", "--backend", "kubernetes", "--dry-run", "--net", net, "--", "true")
		if code != 0 {
			t.Fatalf("--dry-run --net %s: exit %d %s", net, code, errs)
		}
		if res, err := kubectlRaw(env.admin, []byte(out), "apply", "--dry-run=server", "-f", "-"); err != nil {
			t.Errorf("--net %s: server dry run refused it: %v\n%s", net, err, res)
		}
	}
}

// TestRestricted: the runs' namespace enforces PodSecurity "restricted"
// (a root Pod is refused: the control), and the backend's Pod is admitted
// there (TestRunnerRole ran one).
func TestRestricted(t *testing.T) {
	deploy(t)
	if l := kubectl(t, nil, "get", "ns", "fullsend-runs", "-o", `jsonpath={.metadata.labels.pod-security\.kubernetes\.io/enforce}`); l != "restricted" {
		t.Fatalf("fullsend-runs enforce label %q", l)
	}
	root := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: root-probe, namespace: fullsend-runs}
spec:
  containers: [{name: c, image: %q, command: [sleep, "60"], securityContext: {runAsUser: 0}}]
`, env.images["sandbox"])
	out, err := kubectlRaw(env.admin, []byte(root), "apply", "--dry-run=server", "-f", "-")
	if err == nil || !strings.Contains(out, `violates PodSecurity "restricted`) {
		t.Fatalf("a root Pod was not refused by PodSecurity: %v %s", err, out)
	}
	d := workdir(t, false)
	if code, _, errs := fullsend(t, d, "sandbox", "exec", "--backend", "kubernetes", "--", "true"); code != 0 {
		t.Fatalf("the backend's Pod under restricted: exit %d %s", code, errs)
	}
}
