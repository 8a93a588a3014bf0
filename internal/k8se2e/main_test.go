//go:build linux

package k8se2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// env is the cluster the tests run against, set up once by TestMain.
var env struct {
	skip     string // why the tests cannot run here ("" when they can)
	root     string // the repository
	scripts  string // test/k8s
	dir      string // $K8S_DIR
	admin    string // the admin kubeconfig (through the host bridge)
	bin      string // fullsend and kubernetes.test, static builds of this tree
	fullsend string
	started  bool // this process brought the cluster up (and takes it down)
	images   map[string]string
}

// TestMain starts (or reuses) the cluster, builds the project's binaries
// and images, runs the tests and takes the cluster down again if it
// started it, also when interrupted (SIGINT, SIGTERM); a cluster left by a
// run killed outright (SIGKILL, go test's -timeout) is taken down by the
// next run (the marker $K8S_DIR/test-owned), and test/k8s/e2e.sh runs
// down.sh on exit. FULLSEND_K8S_KEEP=1 leaves it up for the next run.
func TestMain(m *testing.M) {
	code := 0
	if err := setup(); err != nil {
		env.skip = err.Error()
		fmt.Fprintf(os.Stderr, "K8S E2E SKIPPED: %s\n", env.skip)
	} else {
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
		go func() {
			<-sigs
			teardown()
			os.Exit(2)
		}()
	}
	code = m.Run()
	teardown()
	os.Exit(code)
}

// need skips t, loudly, when the machine cannot run the cluster.
func need(t *testing.T) {
	t.Helper()
	if env.skip != "" {
		t.Skip("K8S E2E SKIPPED: " + env.skip)
	}
}

type skipReason string

func (s skipReason) Error() string { return string(s) }

func setup() error {
	if os.Geteuid() != 0 {
		return skipReason("not root (the cluster needs network namespaces, mounts and cgroups)")
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	env.root = filepath.Clean(filepath.Join(wd, "..", ".."))
	env.scripts = filepath.Join(env.root, "test", "k8s")
	env.dir = os.Getenv("K8S_DIR")
	if env.dir == "" {
		tmp := os.Getenv("TMPDIR")
		if tmp == "" {
			tmp = "/tmp"
		}
		env.dir = filepath.Join(tmp, "fullsend-k8s")
	}
	env.admin = filepath.Join(env.dir, "kubeconfig")
	var missing []string
	for _, c := range []string{"etcd", "containerd", "runc", "socat", "kubectl", "ip", "nsenter", "unshare", "openssl", "busybox", "curl"} {
		if _, err := exec.LookPath(c); err != nil {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return skipReason(fmt.Sprintf("missing %s (test/k8s/install.sh installs them from Debian)", strings.Join(missing, ", ")))
	}
	for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy"} {
		if _, err := os.Stat(filepath.Join(env.dir, "bin", c)); err != nil {
			return skipReason(fmt.Sprintf("no %s in %s/bin: test/k8s/build.sh builds them from the Go module proxy (about 26 CPU-minutes cold; test/k8s/e2e.sh, the nightly job, does it all)", c, env.dir))
		}
	}
	env.bin, err = os.MkdirTemp("", "fullsend-k8se2e-")
	if err != nil {
		return err
	}
	env.fullsend = filepath.Join(env.bin, "fullsend")
	build := func(args ...string) error {
		cmd := exec.Command("go", args...)
		cmd.Dir = env.root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // static: the images have no libc
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := build("build", "-trimpath", "-o", env.fullsend, "./cmd/fullsend"); err != nil {
		return err
	}
	if err := build("test", "-c", "-vet=off", "-o", filepath.Join(env.bin, "kubernetes.test"), "./internal/sandbox/kubernetes"); err != nil {
		return err
	}
	// A cluster a killed test run started (its marker is left) is adopted:
	// this run takes it down.
	owned := filepath.Join(env.dir, "test-owned")
	if _, err := os.Stat(owned); err == nil {
		env.started = true
	}
	if !clusterUp() {
		t0 := time.Now()
		if err := os.WriteFile(owned, nil, 0o600); err != nil {
			return err
		}
		env.started = true
		if out, err := script("up.sh"); err != nil {
			teardown()
			return fmt.Errorf("test/k8s/up.sh: %v\n%s", err, out)
		}
		fmt.Fprintf(os.Stderr, "k8se2e: cluster up in %s\n", time.Since(t0).Round(100*time.Millisecond))
	}
	// Images: the sandbox (busybox + fullsend), the gateway (entrypoint
	// fullsend) and the conformance image (busybox + the kubernetes test
	// binary as /usr/local/bin/fullsend: the suite's probes run it).
	env.images = map[string]string{}
	for _, im := range [][]string{
		{"sandbox", env.fullsend, `["/bin/sh"]`},
		{"gateway", env.fullsend, `["/usr/local/bin/fullsend"]`},
		{"conformance", filepath.Join(env.bin, "kubernetes.test"), `["/bin/sh"]`},
	} {
		out, err := script("images.sh", "sandbox", im[0], im[1], im[2])
		if err != nil {
			return fmt.Errorf("image %s: %v\n%s", im[0], err, out)
		}
		env.images[im[0]] = strings.TrimSpace(lastLine(out))
	}
	if out, err := script("images.sh", "import"); err != nil {
		return fmt.Errorf("image import: %v\n%s", err, out)
	}
	return nil
}

func teardown() {
	if env.bin != "" {
		os.RemoveAll(env.bin)
	}
	if env.started && os.Getenv("FULLSEND_K8S_KEEP") == "1" {
		os.Remove(filepath.Join(env.dir, "test-owned")) // kept on purpose: the next run reuses it
	}
	if env.started && os.Getenv("FULLSEND_K8S_KEEP") != "1" {
		t0 := time.Now()
		out, err := script("down.sh")
		fmt.Fprintf(os.Stderr, "k8se2e: cluster down in %s: %s %v\n", time.Since(t0).Round(100*time.Millisecond), strings.TrimSpace(out), err)
		if err == nil {
			os.Remove(filepath.Join(env.dir, "test-owned"))
		}
		env.started = false
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// script runs test/k8s/NAME with args.
func script(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(env.scripts, name), args...)
	cmd.Env = append(os.Environ(), "K8S_DIR="+env.dir)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func clusterUp() bool {
	if _, err := os.Stat(env.admin); err != nil {
		return false
	}
	out, err := kubectlRaw(env.admin, nil, "get", "node", "-o", "jsonpath={.items[*].status.conditions[?(@.type==\"Ready\")].status}")
	return err == nil && strings.TrimSpace(out) == "True"
}

// kubectlRaw runs kubectl with kubeconfig and stdin; a fresh HOME keeps
// its discovery cache out of the user's.
func kubectlRaw(kubeconfig string, stdin []byte, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	home, err := os.MkdirTemp("", "k8se2e-home-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(home)
	cmd := exec.CommandContext(ctx, "kubectl", args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "KUBECONFIG=" + kubeconfig}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// kubectl runs kubectl as the cluster admin and fails t on an error.
func kubectl(t *testing.T, stdin []byte, args ...string) string {
	t.Helper()
	out, err := kubectlRaw(env.admin, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}
