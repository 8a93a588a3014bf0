//go:build linux

package sandboxtest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/syncbuf"
)

const mib = 1 << 20

// fillScript writes up to n KiB of zeros to file and prints dd's complaint,
// then the file's size as "size=N".
func fillScript(file string, kib int) string {
	return fmt.Sprintf("dd if=/dev/zero of=%s bs=1024 count=%d 2>&1; echo size=$(wc -c < %s)", file, kib, file)
}

func sizeOf(t *testing.T, out string) int {
	t.Helper()
	i := strings.LastIndex(out, "size=")
	if i < 0 {
		t.Fatalf("no size in %q", out)
	}
	n, err := strconv.Atoi(strings.TrimSpace(out[i+5:]))
	if err != nil {
		t.Fatalf("size in %q: %v", out, err)
	}
	return n
}

// noBigHostFiles fails when dir holds a regular file of limit bytes or more.
func noBigHostFiles(t *testing.T, dir string, limit int64) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if st, err := d.Info(); err == nil && st.Size() >= limit {
				t.Errorf("sandbox data reached the host: %s (%d bytes)", p, st.Size())
			}
		}
		return nil
	})
}

// tmpLimit: /tmp is a tmpfs of Limits.TmpBytes; writing past it fails
// with ENOSPC inside and nothing reaches the host.
func (s *suite) tmpLimit(t *testing.T) {
	b, tmp := s.backend(t, true)
	ss := provisionOn(t, b, sandbox.Spec{Limits: sandbox.Limits{TmpBytes: 4 * mib}})
	out := string(sh(t, ss, fillScript("/tmp/big", 8*1024)).Stdout)
	if !strings.Contains(out, "No space left on device") {
		t.Errorf("writing 8 MiB into a 4 MiB /tmp: %q", out)
	}
	if n := sizeOf(t, out); n > 4*mib || n < 3*mib {
		t.Errorf("/tmp took %d bytes, want about 4 MiB", n)
	}
	if r := sh(t, ss, "rm /tmp/big && echo ok > /tmp/small && cat /tmp/small"); string(r.Stdout) != "ok\n" {
		t.Errorf("/tmp unusable after freeing it: %q %q", r.Stdout, r.Stderr)
	}
	noBigHostFiles(t, tmp, mib)
}

// workspaceLimit: /sandbox holds at most Limits.WorkspaceBytes (ENOSPC); in
// a read-write host mount a file cannot outgrow it (EFBIG) and growing the
// mount beyond it ends the session with ErrWorkspaceLimit.
func (s *suite) workspaceLimit(t *testing.T) {
	b, tmp := s.backend(t, true)
	work := t.TempDir()
	caps := b.Capabilities()
	ss := provisionOn(t, b, sandbox.Spec{
		Mounts: s.mounts(t, sandbox.Mount{Source: work, Target: "/work"}),
		Limits: sandbox.Limits{WorkspaceBytes: 4 * mib},
	})
	out := string(sh(t, ss, fillScript("/sandbox/big", 8*1024)).Stdout)
	if !strings.Contains(out, "No space left on device") && !strings.Contains(out, "File too large") {
		t.Errorf("writing 8 MiB into a 4 MiB /sandbox: %q", out)
	}
	if n := sizeOf(t, out); n > 4*mib || n < 3*mib {
		t.Errorf("/sandbox took %d bytes, want about 4 MiB", n)
	}
	if ws := caps.Limits.Workspace; ws.Level != sandbox.Enforced {
		t.Skipf("SKIPPED BY CAPABILITY: the total of /sandbox is %s here (%s); one file's bound was checked", ws.Level, ws.How)
	}
	// Many files, each within the per-file bound: the file system is full.
	out = string(sh(t, ss, "rm /sandbox/big; for i in 1 2 3 4 5 6; do dd if=/dev/zero of=/sandbox/f$i bs=1024 count=1024 2>&1 | grep -o 'No space left on device'; done; du -sk /sandbox | cut -f1").Stdout)
	if !strings.Contains(out, "No space left on device") {
		t.Errorf("writing 6 files of 1 MiB into a 4 MiB /sandbox: %q", out)
	}
	lines := strings.Fields(out)
	if kib, err := strconv.Atoi(lines[len(lines)-1]); err != nil || kib > 4*1024+64 {
		t.Errorf("/sandbox holds %d KiB (%v)", kib, err)
	}
	noBigHostFiles(t, tmp, mib)
	sh(t, ss, "rm -f /sandbox/f*")
	if !caps.HostMounts {
		t.Skip("SKIPPED BY CAPABILITY: no host mounts (Capabilities.HostMounts false); /sandbox was checked")
	}

	out = string(sh(t, ss, fillScript("/work/big", 8*1024)).Stdout)
	if !strings.Contains(out, "File too large") {
		t.Errorf("one 8 MiB file in a read-write mount under a 4 MiB bound: %q", out)
	}
	if st, err := os.Stat(filepath.Join(work, "big")); err != nil || st.Size() > 4*mib {
		t.Errorf("host file: %v, %v", st, err)
	}
	// Many files within the per-file bound, beyond the total: the session ends.
	// The watch may end the session while this command still runs.
	fillCtx, fillCancel := context.WithTimeout(context.Background(), 60*time.Second)
	_, err := ss.Exec(fillCtx, sandbox.ExecRequest{Args: []string{"sh", "-c", "rm -f /work/big; for i in 1 2 3 4 5 6; do dd if=/dev/zero of=/work/f$i bs=1024 count=1024 2>/dev/null; done"}})
	fillCancel()
	if err != nil && !errors.Is(err, sandbox.ErrWorkspaceLimit) {
		t.Fatalf("filling the read-write mount: %v", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := ss.Exec(ctx, sandbox.ExecRequest{Args: []string{"true"}})
		cancel()
		if err != nil {
			if !errors.Is(err, sandbox.ErrWorkspaceLimit) || !strings.Contains(err.Error(), "workspace_size") {
				t.Errorf("session ended with %v, want ErrWorkspaceLimit naming workspace_size", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a read-write mount grew by 6 MiB under a 4 MiB bound and the session went on")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// outputLimit: stdout and stderr of an exec together, and what Download
// copies, are bounded by Limits.OutputBytes.
func (s *suite) outputLimit(t *testing.T) {
	const limit = 64 << 10
	ss := s.provision(t, sandbox.Spec{Limits: sandbox.Limits{OutputBytes: limit}})
	ctx := context.Background()

	// Exactly the limit, split between the streams: fine.
	r := run(t, ss, sandbox.ExecRequest{Args: []string{"sh", "-c", "head -c 40000 /dev/zero; head -c 25536 /dev/zero >&2"}})
	if len(r.Stdout)+len(r.Stderr) != limit || r.ExitCode != 0 {
		t.Errorf("output at the limit: %d+%d bytes, exit %d", len(r.Stdout), len(r.Stderr), r.ExitCode)
	}
	// Past it: the command is killed, the error says why, the output is cut at the limit.
	m := marker()
	var live syncbuf.Buffer
	rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	res, err := ss.Exec(rctx, sandbox.ExecRequest{Args: []string{"sh", "-c", "head -c 40000 /dev/zero >&2; head -c 1000000 /dev/zero; sleep " + m}, Stdout: &live})
	cancel()
	if !errors.Is(err, sandbox.ErrOutputLimit) || !strings.Contains(err.Error(), "output_size") || strings.Contains(err.Error(), "\n") {
		t.Errorf("exec past the limit: %v, want one line wrapping ErrOutputLimit naming output_size", err)
	}
	if n := len(res.Stdout) + len(res.Stderr); n != limit {
		t.Errorf("kept %d bytes, want %d", n, limit)
	}
	if len(live.String()) != len(res.Stdout) {
		t.Errorf("live copy %d bytes, result %d", len(live.String()), len(res.Stdout))
	}
	waitNoHostProcs(t, m)
	if r := sh(t, ss, "echo alive"); string(r.Stdout) != "alive\n" {
		t.Errorf("session broken after the output limit: %q %q", r.Stdout, r.Stderr)
	}

	// Download: at the limit fine, one byte more refused, nothing left behind.
	sh(t, ss, fmt.Sprintf("mkdir -p /sandbox/ok/d /sandbox/big/d && head -c %d /dev/zero > /sandbox/ok/a && head -c 1 /dev/zero > /sandbox/ok/d/b && head -c %d /dev/zero > /sandbox/big/a && head -c 2 /dev/zero > /sandbox/big/d/b", limit-1, limit-1))
	parent := t.TempDir()
	if err := ss.Download(ctx, "/sandbox/ok", filepath.Join(parent, "ok")); err != nil {
		t.Fatalf("download at the limit: %v", err)
	}
	if got := readTree(t, filepath.Join(parent, "ok")); len(got["a"])+len(got["d/b"]) != limit {
		t.Errorf("downloaded %d+%d bytes", len(got["a"]), len(got["d/b"]))
	}
	err = ss.Download(ctx, "/sandbox/big", filepath.Join(parent, "big"))
	if !errors.Is(err, sandbox.ErrOutputLimit) || !strings.Contains(err.Error(), "output_size") {
		t.Errorf("download past the limit: %v, want ErrOutputLimit naming output_size", err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 1 || ents[0].Name() != "ok" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("refused download left %v beside the earlier one", names)
	}
	// A single file too.
	err = ss.Download(ctx, "/sandbox/big/a", filepath.Join(parent, "one"))
	if err != nil {
		t.Errorf("single file under the limit: %v", err)
	}
	sh(t, ss, fmt.Sprintf("head -c %d /dev/zero > /sandbox/huge", limit+1))
	if err := ss.Download(ctx, "/sandbox/huge", filepath.Join(parent, "huge")); !errors.Is(err, sandbox.ErrOutputLimit) {
		t.Errorf("single file past the limit: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(parent, "huge")); err == nil {
		t.Errorf("refused single-file download left a file")
	}
}

// socketFamilies: only AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK sockets
// may be created inside; AF_VSOCK (no network namespace), AF_ALG and
// AF_PACKET fail with EAFNOSUPPORT.
func (s *suite) socketFamilies(t *testing.T) {
	ss := s.provision(t, sandbox.Spec{})
	probe := func(op string, fam int) string {
		r := run(t, ss, helperReq(op, strconv.Itoa(fam)))
		return strings.TrimSpace(string(r.Stdout))
	}
	refused := fmt.Sprintf("errno %d", 97) // EAFNOSUPPORT
	for name, fam := range map[string]int{"AF_VSOCK": 40, "AF_ALG": 38, "AF_PACKET": 17, "AF_KEY": 15, "AF_BLUETOOTH": 31, "AF_XDP": 44} {
		if got := probe("socket", fam); got != refused {
			t.Errorf("socket(%s): %q, want %q", name, got, refused)
		}
	}
	for name, fam := range map[string]int{"AF_UNIX": 1, "AF_INET": 2, "AF_NETLINK": 16} {
		if got := probe("socket", fam); got != "ok" {
			t.Errorf("socket(%s): %q, want ok", name, got)
		}
	}
	if got := probe("socketpair", 1); got != "ok" {
		t.Errorf("socketpair(AF_UNIX): %q", got)
	}
	if got := probe("socketpair", 40); got != refused {
		t.Errorf("socketpair(AF_VSOCK): %q, want %q", got, refused)
	}
	// The proxy path still works (AF_INET to the loopback endpoint).
	if r := run(t, ss, helperReq("dial", "127.0.0.1:1")); !strings.Contains(string(r.Stdout), "refused") {
		t.Errorf("AF_INET connect inside: %q", r.Stdout)
	}
}

// cannotSignalSandbox: an agent command sends every catchable signal and
// SIGKILL to every process it can see, and SIGSTOP to pid 1; the sandbox's
// own processes (local: the init and the supervisor; docker: the
// container's init and keep-alive processes) are out of its reach and the
// session keeps working.
func (s *suite) cannotSignalSandbox(t *testing.T) {
	ss := s.provision(t, sandbox.Spec{})
	script := `me=$$
pids=$(ls /proc | grep '^[0-9][0-9]*$')
for p in $pids; do
	[ "$p" = "$me" ] && continue
	for sig in HUP INT QUIT USR1 USR2 SEGV PIPE ALRM TERM KILL; do kill -s $sig $p 2>/dev/null; done
done
kill -s STOP 1 2>/dev/null
for sig in HUP TERM KILL; do kill -s $sig -1 2>/dev/null; done
echo survived`
	r := run(t, ss, sandbox.ExecRequest{Args: []string{"sh", "-c", script}, Timeout: 30 * time.Second})
	if strings.TrimSpace(string(r.Stdout)) != "survived" {
		t.Errorf("attacking exec did not finish: exit %d stdout %q stderr %q", r.ExitCode, r.Stdout, r.Stderr)
	}
	for i := 0; i < 3; i++ {
		if r := sh(t, ss, "echo alive"); string(r.Stdout) != "alive\n" {
			t.Fatalf("session broken after the attack: %q %q", r.Stdout, r.Stderr)
		}
	}
}

// outputFilesLimit: Download creates at most Limits.OutputFiles files and
// directories on the host (the downloaded root included); past it the
// error wraps ErrOutputFilesLimit, names output_files and nothing is left.
func (s *suite) outputFilesLimit(t *testing.T) {
	const limit = 20
	ss := s.provision(t, sandbox.Spec{Limits: sandbox.Limits{OutputFiles: limit}})
	ctx := context.Background()
	// ok: the root, a directory and 18 files (20); many: 21 entries.
	sh(t, ss, "mkdir -p /sandbox/ok/d /sandbox/many/d && cd /sandbox/ok && for i in $(seq 1 9); do : > f$i; : > d/g$i; done && "+
		"cd /sandbox/many && for i in $(seq 1 9); do : > f$i; : > d/g$i; done && : > d/extra")
	parent := t.TempDir()
	if err := ss.Download(ctx, "/sandbox/ok", filepath.Join(parent, "ok")); err != nil {
		t.Fatalf("download at the limit: %v", err)
	}
	if got := readTree(t, filepath.Join(parent, "ok")); len(got) != 18 {
		t.Errorf("downloaded %d files, want 18", len(got))
	}
	err := ss.Download(ctx, "/sandbox/many", filepath.Join(parent, "many"))
	if !errors.Is(err, sandbox.ErrOutputFilesLimit) || !strings.Contains(err.Error(), "output_files") || strings.Contains(err.Error(), "\n") {
		t.Errorf("download past the limit: %v, want one line wrapping ErrOutputFilesLimit naming output_files", err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 1 || ents[0].Name() != "ok" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("refused download left %v beside the earlier one", names)
	}
	if r := sh(t, ss, "echo alive"); string(r.Stdout) != "alive\n" {
		t.Errorf("session broken after the output files limit: %q %q", r.Stdout, r.Stderr)
	}
}
