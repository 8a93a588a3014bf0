//go:build linux

package docker_test

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/docker"
	"github.com/fullsend-ai/fullsend/internal/sandbox/sandboxtest"
)

var (
	setupOnce sync.Once
	skipWhy   string
	image     string
	binary    string
)

// setup checks the engine, builds a tiny image from a static busybox (no
// registry) and a static copy of this test binary (mounted as
// /usr/local/bin/fullsend: the proxy forwarder and the suite's probes).
func setup(t *testing.T) {
	setupOnce.Do(func() {
		cli, err := client.New(client.FromEnv)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err = cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true})
			cancel()
		}
		if err != nil {
			skipWhy = fmt.Sprintf("no Docker engine: %v", err)
			return
		}
		bb, err := exec.LookPath("busybox")
		if err != nil {
			skipWhy = "busybox (static) not installed: apt-get install busybox-static"
			return
		}
		if out, _ := exec.Command("file", bb).Output(); len(out) > 0 && !bytes.Contains(out, []byte("statically")) {
			skipWhy = bb + " is not static"
			return
		}
		image, err = importBusybox(cli, bb)
		if err != nil {
			skipWhy = "import busybox image: " + err.Error()
			return
		}
		dir, _ := os.MkdirTemp("", "fullsend-docker-test-")
		binary = filepath.Join(dir, "docker.test")
		cmd := exec.Command("go", "test", "-c", "-o", binary, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			skipWhy = fmt.Sprintf("build static test binary: %v: %s", err, out)
		}
	})
	if skipWhy != "" {
		t.Skipf("DOCKER BACKEND SKIPPED: %s", skipWhy)
	}
}

func TestMain(m *testing.M) {
	sandboxtest.Reexec()
	code := m.Run()
	if binary != "" {
		os.RemoveAll(filepath.Dir(binary))
	}
	os.Exit(code)
}

func importBusybox(cli *client.Client, bb string) (string, error) {
	content, err := os.ReadFile(bb)
	if err != nil {
		return "", err
	}
	list, err := exec.Command(bb, "--list").Output()
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range []string{"bin/", "tmp/", "etc/", "run/", "usr/", "usr/local/", "usr/local/bin/", "sandbox/"} {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755})
	}
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "bin/busybox", Mode: 0o755, Size: int64(len(content))})
	tw.Write(content)
	for _, a := range strings.Fields(string(list)) {
		if a != "busybox" {
			tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + a, Linkname: "busybox", Mode: 0o777})
		}
	}
	pw := "root:x:0:0:root:/root:/bin/sh\n"
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "etc/passwd", Mode: 0o644, Size: int64(len(pw))})
	tw.Write([]byte(pw))
	tw.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rc, err := cli.ImageImport(ctx, client.ImageImportSource{Source: &buf, SourceName: "-"}, "fullsend-sandboxtest-busybox:latest", client.ImageImportOptions{})
	if err != nil {
		return "", err
	}
	io.Copy(io.Discard, rc)
	rc.Close()
	in, err := cli.ImageInspect(ctx, "fullsend-sandboxtest-busybox:latest")
	if err != nil {
		return "", err
	}
	return in.ID, nil
}

func TestConformance(t *testing.T) {
	setup(t)
	sandboxtest.Run(t, func(t *testing.T, o sandbox.Options) sandbox.Backend {
		o.Image, o.Binary = image, binary
		b, err := docker.New(o)
		if err != nil {
			t.Skipf("DOCKER BACKEND SKIPPED: %v", err)
		}
		return b
	})
}

func TestImageMustBeDigest(t *testing.T) {
	for _, c := range []struct {
		img  string
		tags bool
		ok   bool
	}{
		{"busybox:latest", false, false},
		{"busybox", false, false},
		{"busybox:latest", true, true},
		{"docker.io/library/busybox@sha256:" + strings.Repeat("a", 64), false, true},
		{"sha256:" + strings.Repeat("b", 64), false, true},
		{"busybox@sha256:abc", false, false},
		{"", true, false},
	} {
		if err := docker.CheckImage(c.img, c.tags); (err == nil) != c.ok {
			t.Errorf("CheckImage(%q, %v) = %v", c.img, c.tags, err)
		}
	}
}
