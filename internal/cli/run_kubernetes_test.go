//go:build linux

package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/kubernetes/k8stest"
	"github.com/fullsend-ai/fullsend/internal/sandbox/local"
)

// TestRunKubernetesFakeCluster runs the README's script example with
// --sandbox kubernetes against the fake API server: Pod and NetworkPolicy
// through client-go's REST client, every command through pods/exec over
// WebSocket (v5.channel.k8s.io), uploads and downloads as tar streams. The
// fake runs each Pod as a local sandbox session.
func TestRunKubernetesFakeCluster(t *testing.T) {
	needLocalSandbox(t)
	inner, err := local.New(sandbox.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Skip(err)
	}
	srv := k8stest.New(inner)
	defer srv.Close()
	kc, err := srv.Kubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kc)

	// A copy of examples/hello whose config.yaml selects the backend.
	dir := filepath.Join(t.TempDir(), "hello")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "examples", "hello"))); err != nil {
		t.Fatal(err)
	}
	cfg := `version: "1"
sandbox:
  kubernetes:
    namespace: fullsend-runs
    runtime_class: gvisor
    image: example.com/sandbox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
`
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	inGitRepo(t)
	ws := t.TempDir()
	code, out, errs := runCLI(t, "--workspace", ws, "run", "--sandbox", "kubernetes", filepath.Join(dir, "harness.yaml"))
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	for _, want := range []string{"  succeeded\n", "sandbox   kubernetes\n", "result    valid (iteration 1 of 2)\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if len(srv.ExecLog()) < 3 {
		t.Errorf("only %d execs went through pods/exec", len(srv.ExecLog()))
	}
	tars := slices.ContainsFunc(srv.ExecLog(), func(c []string) bool { return slices.Contains(c, "tar") })
	if !tars {
		t.Error("no tar transfer went through pods/exec")
	}
	if objs := srv.Objects(); len(objs) != 0 {
		t.Errorf("left behind after the run: %v", objs)
	}
}
