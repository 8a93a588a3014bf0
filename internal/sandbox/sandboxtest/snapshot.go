//go:build linux

package sandboxtest

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// snapshotRestore: a backend announcing Capabilities.Snapshot keeps the
// writable state of one session (workspace, output, home files; regular
// files and directories, modes) and restores it into a fresh one, which
// loses what it had there except the skipped paths; symlinks, FIFOs and
// skipped paths are not kept; the bounds hold; a hostile stream is
// refused or filtered.
func (s *suite) snapshotRestore(t *testing.T) {
	b, _ := s.backend(t, true)
	if !b.Capabilities().Snapshot {
		t.Skipf("%s: no snapshots", b.Name())
	}
	a := provisionOn(t, b, sandbox.Spec{})
	sa, ok := a.(sandbox.Snapshotter)
	if !ok {
		t.Fatalf("%s announces Snapshot but its session is no sandbox.Snapshotter", b.Name())
	}
	skip := []string{"/sandbox/owned"}
	if r := sh(t, a, `mkdir -p /sandbox/workspace/d /sandbox/output /sandbox/.cache /sandbox/owned &&
printf alpha > /sandbox/workspace/a.txt && printf '#!/bin/sh\n' > /sandbox/workspace/d/run && chmod 755 /sandbox/workspace/d/run &&
printf out > /sandbox/output/o.json && printf home > /sandbox/.cache/h && printf old > /sandbox/owned/k &&
ln -s /etc/passwd /sandbox/workspace/link && mkfifo /sandbox/workspace/fifo &&
mkdir /sandbox/workspace/locked && printf L > /sandbox/workspace/locked/f && chmod -R a-w /sandbox/workspace/locked`); r.ExitCode != 0 {
		t.Fatalf("setup: %d %s", r.ExitCode, r.Stderr)
	}
	var snap bytes.Buffer
	within(t, "snapshot", func(ctx context.Context) (any, error) { return nil, sa.Snapshot(ctx, &snap, skip) })
	names := tarNames(t, snap.Bytes())
	for _, n := range []string{"./workspace/a.txt", "./workspace/d/run", "./output/o.json", "./.cache/h"} {
		if !names[n] {
			t.Errorf("snapshot lacks %s (has %v)", n, names)
		}
	}
	for n := range names {
		if strings.Contains(n, "owned") || strings.Contains(n, "link") || strings.Contains(n, "fifo") {
			t.Errorf("snapshot keeps %s", n)
		}
	}

	c := provisionOn(t, b, sandbox.Spec{})
	if r := sh(t, c, `mkdir -p /sandbox/workspace/ro /sandbox/owned && printf stale > /sandbox/workspace/stale && printf fresh > /sandbox/owned/k2 &&
printf x > /sandbox/workspace/ro/f && chmod -R a-w /sandbox/workspace/ro`); r.ExitCode != 0 {
		t.Fatalf("setup: %s", r.Stderr)
	}
	within(t, "restore", func(ctx context.Context) (any, error) {
		return nil, c.(sandbox.Snapshotter).Restore(ctx, bytes.NewReader(snap.Bytes()), skip)
	})
	r := sh(t, c, `cat /sandbox/workspace/a.txt /sandbox/output/o.json /sandbox/.cache/h /sandbox/owned/k2 /sandbox/workspace/locked/f; test -x /sandbox/workspace/d/run && echo +x; stat -c %a /sandbox/workspace/locked;
for f in /sandbox/workspace/stale /sandbox/workspace/ro /sandbox/owned/k /sandbox/workspace/link /sandbox/workspace/fifo; do test -e $f -o -L $f && echo "left $f"; done; true`)
	if got := string(r.Stdout); got != "alphaouthomefreshL+x\n555\n" {
		t.Errorf("restored state: %q (stderr %s)", got, r.Stderr)
	}

	// A hostile stream: an escaping name is refused, a symlink and a
	// device are dropped, an entry under a skipped path is ignored.
	hostile := func(hs ...tar.Header) *bytes.Reader {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, h := range hs {
			h := h
			body := []byte(nil)
			if h.Typeflag == tar.TypeReg {
				body = []byte("pwned")
				h.Size = int64(len(body))
			}
			if err := tw.WriteHeader(&h); err != nil {
				t.Fatal(err)
			}
			tw.Write(body)
		}
		tw.Close()
		return bytes.NewReader(buf.Bytes())
	}
	ctx := context.Background()
	err := c.(sandbox.Snapshotter).Restore(ctx, hostile(tar.Header{Typeflag: tar.TypeDir, Name: "./", Mode: 0o755}, tar.Header{Typeflag: tar.TypeReg, Name: "./../../tmp/evil", Mode: 0o644}), skip)
	if err == nil {
		t.Errorf("restore of an escaping name succeeded")
	}
	if r := sh(t, c, `test -e /tmp/evil && echo escaped; true`); len(r.Stdout) > 0 {
		t.Errorf("restore wrote outside /sandbox")
	}
	err = c.(sandbox.Snapshotter).Restore(ctx, hostile(tar.Header{Typeflag: tar.TypeDir, Name: "./", Mode: 0o755},
		tar.Header{Typeflag: tar.TypeSymlink, Name: "./ln", Linkname: "/etc"},
		tar.Header{Typeflag: tar.TypeChar, Name: "./null", Devmajor: 1, Devminor: 3, Mode: 0o666},
		tar.Header{Typeflag: tar.TypeReg, Name: "./owned/k2", Mode: 0o644},
		tar.Header{Typeflag: tar.TypeReg, Name: "./suid", Mode: 0o4755}), skip)
	if err != nil {
		t.Fatalf("restore of a filtered stream: %v", err)
	}
	if r := sh(t, c, `test -L /sandbox/ln && echo link; test -e /sandbox/null && echo dev; cat /sandbox/owned/k2; test -u /sandbox/suid && echo suid; true`); string(r.Stdout) != "fresh" {
		t.Errorf("hostile stream restored: %q", r.Stdout)
	}
	// Skip paths are checked.
	if err := sa.Snapshot(ctx, &bytes.Buffer{}, []string{"/etc"}); err == nil {
		t.Errorf("snapshot with a skip path outside /sandbox succeeded")
	}

	// snapshot_size and output_size bound a snapshot.
	small := provisionOn(t, b, sandbox.Spec{Limits: sandbox.Limits{SnapshotBytes: 4096}})
	sh(t, small, `mkdir -p /sandbox/workspace && head -c 8192 /dev/zero > /sandbox/workspace/big`)
	err = small.(sandbox.Snapshotter).Snapshot(ctx, &bytes.Buffer{}, nil)
	if !errors.Is(err, sandbox.ErrSnapshotLimit) || !strings.Contains(err.Error(), "snapshot_size") {
		t.Errorf("snapshot past snapshot_size: %v", err)
	}
	out := provisionOn(t, b, sandbox.Spec{Limits: sandbox.Limits{OutputBytes: 4096}})
	sh(t, out, `mkdir -p /sandbox/output && head -c 8192 /dev/zero > /sandbox/output/big`)
	err = out.(sandbox.Snapshotter).Snapshot(ctx, &bytes.Buffer{}, nil)
	if !errors.Is(err, sandbox.ErrSnapshotLimit) || !strings.Contains(err.Error(), "output_size") {
		t.Errorf("snapshot past output_size below /sandbox/output: %v", err)
	}
}

func tarNames(t *testing.T, data []byte) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		out[h.Name] = true
	}
	return out
}
