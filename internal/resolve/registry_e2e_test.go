package resolve

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/ocicache/ocicachetest"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// Environment of the end-to-end test against a real registry server
// (.ci/run starts Debian's docker-registry, the CNCF distribution
// registry, on loopback with a temporary filesystem storage).
const (
	envTestRegistry        = "FULLSEND_TEST_REGISTRY"         // 127.0.0.1:PORT
	envTestRegistryStorage = "FULLSEND_TEST_REGISTRY_STORAGE" // its storage rootdirectory
)

// TestRegistryE2E: against a real registry, runner A resolves a remote
// harness graph from the forge and pushes it; runner B (empty cache, forge
// stopped) resolves it from the registry with zero forge requests; a
// re-tagged manifest and a blob tampered with on the registry's disk are
// refused (naming the registry and the digest), and the forge serves
// them again.
func TestRegistryE2E(t *testing.T) {
	host, storage := os.Getenv(envTestRegistry), os.Getenv(envTestRegistryStorage)
	if host == "" || storage == "" {
		t.Skipf("REGISTRY E2E SKIPPED: %s and %s are not set (.ci/run starts Debian's docker-registry on loopback and sets them)", envTestRegistry, envTestRegistryStorage)
	}
	h, _, err := net.SplitHostPort(host)
	if a, perr := netip.ParseAddr(h); err != nil || perr != nil || !a.IsLoopback() {
		t.Fatalf("%s=%q: want a loopback IP:PORT (tests never leave loopback)", envTestRegistry, host)
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	path := "fullsend-e2e/" + hex.EncodeToString(rnd[:])
	repository := host + "/" + path

	w, g := buildGraphRepo(t, func(r *repo) *world { return newWorld(t, r) }, "")
	w.useRegistry(repository, true)
	resolveOnce := func() (*Result, error) {
		o := w.opts()
		o.Yes = true
		return Resolve(context.Background(), g.harnessURL, o)
	}

	// Runner A: from the forge, pushed.
	if res, err := resolveOnce(); err != nil || len(res.Warnings) != 0 {
		t.Fatalf("runner A: %v, warnings %q", err, res.Warnings)
	}
	if got := w.sources(); got[audit.SourceForge] != 7 {
		t.Fatalf("runner A audit sources = %v", got)
	}

	// Runner B: empty cache, forge stopped.
	w.freshRunner(t)
	w.stopForge()
	res, err := resolveOnce()
	if err != nil {
		t.Fatalf("runner B: %v", err)
	}
	if n := w.srv.RequestCount(); n != 0 {
		t.Fatalf("runner B made %d forge requests, want 0", n)
	}
	if got := w.sources(); got[audit.SourceRegistry] != 7 || len(got) != 1 || len(res.Warnings) != 0 {
		t.Fatalf("runner B audit sources = %v, warnings %q", got, res.Warnings)
	}

	// A re-tagged manifest: leaf's genuine files under mid's tag.
	ocicachetest.PushManifest(t, host, path, "tree-"+string(g.mid), ocicachetest.GetManifest(t, host, path, "tree-"+string(g.leaf)))
	// A blob changed on the registry's disk, same length.
	agent := ref.SHA256(g.Files["agents/a.md"])
	data := filepath.Join(storage, "docker", "registry", "v2", "blobs", "sha256", string(agent[:2]), string(agent), "data")
	orig, err := os.ReadFile(data)
	if err != nil || !bytes.Equal(orig, g.Files["agents/a.md"]) {
		t.Fatalf("agent blob on the registry's disk: %v", err)
	}
	// Blob storage is shared by every repository of the registry: put the
	// genuine bytes back for later tests.
	t.Cleanup(func() { os.WriteFile(data, orig, 0o644) })
	if err := os.WriteFile(data, bytes.Replace(orig, []byte("agent a"), []byte("agent X"), 1), 0o644); err != nil {
		t.Fatal(err)
	}

	// Runner C: forge still stopped: both refusals surface in the error.
	w.freshRunner(t)
	_, err = resolveOnce()
	if err == nil || !strings.Contains(err.Error(), repository) || !strings.Contains(err.Error(), "registry copy was refused") {
		t.Fatalf("runner C: %v, want an error naming the registry's refused copy", err)
	}

	// Runner D: forge back: the refused entries come from the forge, the
	// warnings name the registry and both digests.
	w.freshRunner(t)
	w.srv.ClearFaults()
	w.srv.ResetRequests()
	res, err = resolveOnce()
	if err != nil {
		t.Fatalf("runner D: %v", err)
	}
	joined := strings.Join(res.Warnings, "\n")
	for _, want := range []string{repository, string(g.mid), string(agent)} {
		if !strings.Contains(joined, want) {
			t.Errorf("runner D warnings do not name %s:\n%s", want, joined)
		}
	}
	if got := w.sources(); got[audit.SourceForge] != 2 || got[audit.SourceRegistry] != 5 {
		t.Fatalf("runner D audit sources = %v, want 2 from the forge, 5 from the registry", got)
	}
	if _, b, err := w.store.ReadFile(agent); err != nil || !bytes.Equal(b, g.Files["agents/a.md"]) {
		t.Fatalf("runner D cached agent = %q, %v", b, err)
	}
}
