//go:build linux

package k8se2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox/kubernetes"
)

// TestConformance runs the sandbox conformance suite (package
// sandboxtest, through the kubernetes package's TestConformance) against
// the cluster, in a namespace enforcing PodSecurity "restricted", with the
// image holding that package's test binary. It skips only by declared
// capability; the skips are listed in the log.
func TestConformance(t *testing.T) {
	deploy(t)
	kubectl(t, []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: fullsend-e2e\n  labels: {pod-security.kubernetes.io/enforce: restricted}\n"), "apply", "-f", "-")
	runConformance(t, "")
}

func runConformance(t *testing.T, runtimeClass string) {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(env.bin, "kubernetes.test"), "-test.run", "^TestConformance$", "-test.v", "-test.timeout", "24m")
	cmd.Dir = filepath.Join(env.root, "internal", "sandbox", "kubernetes")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.admin, "FULLSEND_K8S_E2E=1",
		"FULLSEND_K8S_E2E_NAMESPACE=fullsend-e2e", "FULLSEND_K8S_E2E_IMAGE="+env.images["conformance"],
		"FULLSEND_K8S_E2E_RUNTIME_CLASS="+runtimeClass)
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	var summary []string
	for _, l := range strings.Split(string(out), "\n") {
		if s := strings.TrimSpace(l); strings.HasPrefix(s, "--- ") || strings.Contains(s, "SKIPPED BY CAPABILITY") || strings.Contains(s, "NOT CHECKED") {
			summary = append(summary, s)
		}
	}
	t.Logf("conformance (runtime class %q) in %s:\n%s", runtimeClass, time.Since(t0).Round(time.Second), strings.Join(summary, "\n"))
	if err != nil {
		t.Fatalf("conformance suite: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestConformance/ExitCodes") {
		t.Fatalf("the suite did not run:\n%s", out)
	}
}

// TestRunHello: `fullsend run --sandbox kubernetes` of examples/hello end
// to end under the runner's token; the NetworkPolicy caveat is printed.
func TestRunHello(t *testing.T) {
	deploy(t)
	// The harness's own fullsend dir (with config.yaml) outside the
	// repository the run works in, as an org's would be.
	hello := filepath.Join(t.TempDir(), "hello")
	if err := os.CopyFS(hello, os.DirFS(filepath.Join(env.root, "examples", "hello"))); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("version: \"1\"\nsandbox:\n  kubernetes:\n    namespace: fullsend-runs\n    image: %s\n", env.images["sandbox"])
	if err := os.WriteFile(filepath.Join(hello, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	d := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", d).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	t0 := time.Now()
	code, out, errs := fullsend(t, d, "--workspace", d, "run", "--sandbox", "kubernetes", filepath.Join(hello, "harness.yaml"))
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	t.Logf("fullsend run --sandbox kubernetes examples/hello: %s\n%s", time.Since(t0).Round(10*time.Millisecond), out)
	for _, want := range []string{"  succeeded\n", "sandbox   kubernetes\n", "result    valid (iteration "} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "result    valid (iteration 1 of 2)\n") {
		t.Logf("the result was valid only at a later iteration; the run's log:\n%s", errs)
	}
	if !strings.Contains(errs, "enforces NetworkPolicy") {
		t.Errorf("no warning that egress depends on the CNI:\n%s", errs)
	}
}

// hostProcs counts the host's processes whose command line is
// "sleep MARKER" (the cluster shares the host's pid namespace).
func hostProcs(marker string) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && string(b) == "sleep\x00"+marker+"\x00" {
			n++
		}
	}
	return n
}

// TestKillOnTimeout: at --timeout the command and everything it started
// (a background job, a grandchild) die in the Pod: the processes are gone
// from the host's /proc, after they were seen running.
func TestKillOnTimeout(t *testing.T) {
	deploy(t)
	d := workdir(t, false)
	m := fmt.Sprintf("%d.%d", 4000+time.Now().Nanosecond()%5000, os.Getpid())
	seen := make(chan int, 1)
	go func() {
		max := 0
		for end := time.Now().Add(90 * time.Second); time.Now().Before(end) && max < 3; time.Sleep(50 * time.Millisecond) {
			max = maxInt(max, hostProcs(m))
		}
		seen <- max
	}()
	code, _, errs := fullsend(t, d, "sandbox", "exec", "--backend", "kubernetes", "--timeout", "20s", "--",
		"sh", "-c", "sleep "+m+" & sh -c 'sleep "+m+"' & sleep "+m)
	if code != 124 {
		t.Fatalf("exit %d, want 124 (timeout): %s", code, errs)
	}
	if n := <-seen; n < 3 {
		t.Fatalf("saw %d of the 3 sleepers running: the check would prove nothing", n)
	}
	if n := hostProcs(m); n != 0 {
		t.Fatalf("%d sleepers still alive after the timeout", n)
	}
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// TestEgressGateway: with the gateway of deploy/kubernetes, a Pod gets
// the proxy settings holding its run token; the gateway refuses a
// request without the token (407) or with a tampered one (407) and a host
// outside the run's allowlist (403), and lets the allowed one past both
// checks (here it then finds no DNS: its log says so). NetworkPolicy is
// not enforced by this cluster's CNI, which Capabilities says.
func TestEgressGateway(t *testing.T) {
	deploy(t)
	gw := strings.TrimPrefix(deployed.gateway, "http://")
	host, port, _ := strings.Cut(gw, ":")
	d := workdir(t, true)
	// Each probe: one proxied request by nc; the status line is printed.
	script := `probe() { printf 'GET http://%s/ HTTP/1.1\r\nHost: %s\r\n%bConnection: close\r\n\r\n' "$1" "$1" "$2" | nc -w 5 ` + host + ` ` + port + ` | head -1; }
tok=${HTTPS_PROXY#http://run:}; tok=${tok%@*}
echo "proxy=$HTTPS_PROXY"
echo "noauth: $(probe allowed.example)"
echo "tampered: $(probe allowed.example "Proxy-Authorization: Basic $(printf 'run:%sx' "$tok" | base64 -w0)\r\n")"
echo "denied: $(probe denied.example "Proxy-Authorization: Basic $(printf 'run:%s' "$tok" | base64 -w0)\r\n")"
echo "allowed: $(probe allowed.example "Proxy-Authorization: Basic $(printf 'run:%s' "$tok" | base64 -w0)\r\n")"`
	code, out, errs := fullsend(t, d, "sandbox", "exec", "--backend", "kubernetes", "--net", "allowed.example:80", "--", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	t.Logf("from the Pod:\n%s", out)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`proxy=http://run:[A-Za-z0-9._~-]+@` + regexp.QuoteMeta(gw) + `\n`),
		regexp.MustCompile(`noauth: HTTP/1.1 407`),
		regexp.MustCompile(`tampered: HTTP/1.1 407`),
		regexp.MustCompile(`denied: HTTP/1.1 403`),
		regexp.MustCompile(`allowed: HTTP/1.1 (403|502|504)`), // past the token and the allowlist, the gateway finds no DNS or route here
	} {
		if !want.MatchString(out) {
			t.Errorf("want %s in:\n%s", want, out)
		}
	}
	logs := kubectl(t, nil, "-n", "fullsend-system", "logs", "-l", "app.kubernetes.io/name=fullsend-egress-gateway", "--tail=100")
	for _, want := range []string{
		"deny allowed.example: proxy authorization: egress token refused: missing",
		"deny allowed.example: proxy authorization: egress token refused: bad signature",
		"deny denied.example:80: not in the sandbox allowlist",
		"deny allowed.example:80: resolve:", // the allowed host got past every check of the run's token
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("the gateway's log lacks %q:\n%s", want, logs)
		}
	}
	if strings.Contains(out, deployed.key) {
		t.Error("the signing key reached the Pod")
	}
	if !strings.Contains(kubernetes.NetworkCaveat, "NetworkPolicy") {
		t.Error("Capabilities' caveat does not name NetworkPolicy")
	}
}
