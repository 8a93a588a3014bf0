//go:build linux

package local_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/backends"
	"github.com/fullsend-ai/fullsend/internal/sandbox/local"
	"github.com/fullsend-ai/fullsend/internal/sandbox/sandboxtest"
)

func provision(t *testing.T, spec sandbox.Spec) sandbox.Session {
	t.Helper()
	b, err := local.New(sandbox.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Skip(err)
	}
	s, err := b.Provision(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Terminate(context.Background()) })
	return s
}

func sh(t *testing.T, s sandbox.Session, script string) sandbox.ExecResult {
	t.Helper()
	r, err := s.Exec(context.Background(), sandbox.ExecRequest{Args: []string{"sh", "-c", script}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestHardening checks the layers below the namespaces: unprivileged uid,
// no capabilities, no_new_privs, seccomp, no new namespaces.
func TestHardening(t *testing.T) {
	s := provision(t, sandbox.Spec{})
	if r := sh(t, s, "id -u; id -g"); string(r.Stdout) != "1000\n1000\n" {
		t.Errorf("ids inside: %q", r.Stdout)
	}
	st := string(sh(t, s, "cat /proc/self/status").Stdout)
	for _, want := range []string{"CapInh:\t0000000000000000", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000", "CapAmb:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2"} {
		if !strings.Contains(st, want) {
			t.Errorf("status lacks %q", want)
		}
	}
	for _, script := range []string{
		"unshare -U true", "unshare -r true", "unshare -m true", "unshare -n true",
		"mount -t tmpfs x /tmp", "echo 1 > /proc/sys/user/max_user_namespaces",
	} {
		if r := sh(t, s, script); r.ExitCode == 0 {
			t.Errorf("%q succeeded inside the sandbox", script)
		}
	}
	// clone3 cannot be filtered by seccomp: the user namespace limit covers it.
	r, err := s.Exec(context.Background(), sandbox.ExecRequest{Args: []string{sandbox.BinaryPath, "userns", "/bin/true"}, Env: map[string]string{"FULLSEND_SANDBOXTEST_HELPER": "1"}})
	if err != nil || r.ExitCode == 0 || !strings.Contains(string(r.Stdout), "error") {
		t.Errorf("new user namespace via clone3: %q %q %v", r.Stdout, r.Stderr, err)
	}
	// Host-side identity: never host root.
	m := fmt.Sprintf("%d.%d", 7000+time.Now().Nanosecond()%1000, os.Getpid())
	go s.Exec(context.Background(), sandbox.ExecRequest{Args: []string{"sleep", m}, Timeout: 10 * time.Second})
	deadline := time.Now().Add(5 * time.Second)
	found := false
	for !found && time.Now().Before(deadline) {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			cl, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if !strings.Contains(string(cl), "sleep\x00"+m) {
				continue
			}
			found = true
			status, _ := os.ReadFile("/proc/" + e.Name() + "/status")
			for _, l := range strings.Split(string(status), "\n") {
				if strings.HasPrefix(l, "Uid:") {
					f := strings.Fields(l)
					if os.Getuid() == 0 && f[1] == "0" {
						t.Errorf("sandboxed process runs as host root: %s", l)
					}
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !found {
		t.Errorf("sandboxed process not found on the host")
	}
}

// TestEtcMinimal: host identity and secrets in /etc are not visible.
func TestEtcMinimal(t *testing.T) {
	s := provision(t, sandbox.Spec{})
	r := sh(t, s, "ls /etc; cat /etc/passwd")
	for _, bad := range []string{"shadow", "ssh", "sudoers", "root:x:0:0:root:/root:/bin/bash"} {
		if strings.Contains(string(r.Stdout), bad) {
			t.Errorf("/etc exposes %q", bad)
		}
	}
	if !strings.Contains(string(r.Stdout), "sandbox:x:1000") {
		t.Errorf("generated passwd missing: %q", r.Stdout)
	}
	if r := sh(t, s, "test -x /usr/local/bin/fullsend && ! test -w /usr/local/bin/fullsend"); r.ExitCode != 0 {
		t.Errorf("fullsend binary not read-only executable at %s", sandbox.BinaryPath)
	}
}

func TestCapabilities(t *testing.T) {
	b, err := local.New(sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := b.Capabilities()
	if b.Name() != "local" || !c.NetworkAllowlist || !c.Seccomp || !c.PidsLimit || !c.MemoryLimit {
		t.Errorf("capabilities: %+v", c)
	}
}

func TestOpenRegistered(t *testing.T) {
	b, err := backends.Open("local", sandbox.Options{})
	if err != nil || b.Name() != "local" {
		t.Errorf("Open(local) = %v, %v", b, err)
	}
}

func TestUpdateNetwork(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hi") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	b, err := local.New(sandbox.Options{TempDir: t.TempDir(), Resolver: sandboxtest.Resolver{}, AllowedPrivateNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	if err != nil {
		t.Skip(err)
	}
	s, err := b.Provision(context.Background(), sandbox.Spec{Network: sandbox.Network{Allow: []string{"other.test"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Terminate(context.Background())
	get := func() string {
		r, err := s.Exec(context.Background(), sandbox.ExecRequest{Args: []string{sandbox.BinaryPath, "get", "http://late.test:" + port + "/"}, Env: map[string]string{"FULLSEND_SANDBOXTEST_HELPER": "1"}})
		if err != nil {
			t.Fatal(err)
		}
		return string(r.Stdout)
	}
	if got := get(); !strings.HasPrefix(got, "403") {
		t.Fatalf("before update: %q", got)
	}
	nu, ok := s.(sandbox.NetworkUpdater)
	if !ok {
		t.Fatal("local session is not a NetworkUpdater")
	}
	if err := nu.UpdateNetwork(context.Background(), sandbox.Network{Allow: []string{"late.test:" + port}}); err != nil {
		t.Fatal(err)
	}
	if got := get(); !strings.HasPrefix(got, "200 hi") {
		t.Errorf("after update: %q", got)
	}
	// A session without network cannot gain it.
	s2, err := b.Provision(context.Background(), sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Terminate(context.Background())
	if err := s2.(sandbox.NetworkUpdater).UpdateNetwork(context.Background(), sandbox.Network{Allow: []string{"x.test"}}); err == nil {
		t.Errorf("network added to a none session")
	}
}

// hostCount counts host processes whose command line contains m.
func hostCount(m string) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.Contains(string(b), m) {
			n++
		}
	}
	return n
}

// TestForkBombDoesNotStarveOtherExecs: while a fork bomb holds the agent's
// whole pids budget, other execs still start and run: the supervisor and
// each exec's pid 1 live outside that budget, and a command is moved into
// it, not forked there (and "echo" needs no fork).
//
// The bomb fills the budget to the last pid, in an order that no timing
// changes: the exec's shell forks a subshell and becomes a sleep; the
// subshell forks the bomb and waits; the bomb forks sleeps until a fork
// fails, which ends it; the subshell, having reaped it, forks one more
// sleep into the freed pid and becomes a sleep itself. Every pid of the
// budget is then a sleep.
func TestForkBombDoesNotStarveOtherExecs(t *testing.T) {
	b, err := local.New(sandbox.Options{})
	if err != nil {
		t.Skip(err)
	}
	if pids := b.Capabilities().Limits.Pids; pids.Level != sandbox.Enforced {
		t.Skipf("PIDS LIMIT NOT ENFORCED BY CGROUPS HERE (%s): skipped", pids.How)
	}
	const budget = 32
	s := provision(t, sandbox.Spec{Limits: sandbox.Limits{Pids: budget}})
	m := fmt.Sprintf("%d.%d", 7000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	bomb := make(chan error, 1)
	bctx, stopBomb := context.WithCancel(context.Background())
	defer stopBomb()
	go func() {
		sleep := "sleep " + m
		script := "( (while :; do " + sleep + " & done); " + sleep + " & exec " + sleep + " ) & exec " + sleep
		r, err := s.Exec(bctx, sandbox.ExecRequest{Args: []string{"sh", "-c", script}, Timeout: 30 * time.Second})
		if err == nil {
			err = fmt.Errorf("exit %d, stderr %q", r.ExitCode, r.Stderr)
		}
		bomb <- err
	}()
	deadline := time.Now().Add(20 * time.Second)
	for hostCount("sleep\x00"+m) < budget {
		select {
		case err := <-bomb:
			t.Fatalf("the fork bomb ended at %d processes: %v", hostCount("sleep\x00"+m), err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fork bomb never reached %d processes (%d)", budget, hostCount("sleep\x00"+m))
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i := 0; i < 3; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"echo", "alive"}})
		cancel()
		if err != nil || string(r.Stdout) != "alive\n" {
			t.Errorf("exec during the fork bomb: %q %q exit %d, %v", r.Stdout, r.Stderr, r.ExitCode, err)
		}
	}
	// The budget is spent for every exec: one that forks is refused.
	if r := sh(t, s, "true & wait"); r.ExitCode == 0 {
		t.Errorf("a fork succeeded with the pids budget spent: %q", r.Stderr)
	}
	if n := hostCount("sleep\x00" + m); n != budget {
		t.Errorf("fork bomb at %d processes under pids=%d", n, budget)
	}
	stopBomb()
	if err := <-bomb; !errors.Is(err, context.Canceled) {
		t.Errorf("fork bomb exec: %v, want context.Canceled", err)
	}
	if r := sh(t, s, "echo alive"); string(r.Stdout) != "alive\n" {
		t.Errorf("after the fork bomb: %q %q", r.Stdout, r.Stderr)
	}
}

// TestExecSeesOnlyItself: each exec has its own pid namespace and /proc;
// the sandbox init, the supervisor and other execs are invisible, and pid 1
// is the exec's own reaper.
func TestExecSeesOnlyItself(t *testing.T) {
	s := provision(t, sandbox.Spec{})
	m := fmt.Sprintf("%d.%d", 8000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	other := make(chan struct{})
	go func() {
		s.Exec(context.Background(), sandbox.ExecRequest{Args: []string{"sleep", m}, Timeout: 20 * time.Second})
		close(other)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for hostCount("sleep\x00"+m) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	r := sh(t, s, `for p in /proc/[0-9]*; do printf '%s ' "${p#/proc/}"; tr '\0' ' ' < $p/cmdline; echo; done`)
	out := string(r.Stdout)
	for _, bad := range []string{"fullsend-sandbox-init", "fullsend-sandbox-supervisor", m} {
		if strings.Contains(out, bad) {
			t.Errorf("%q visible inside an exec:\n%s", bad, out)
		}
	}
	if !strings.HasPrefix(out, "1 fullsend-sandbox-pid1 ") {
		t.Errorf("pid 1 is not the exec's own: %s", out)
	}
	if n := strings.Count(out, "\n"); n > 4 {
		t.Errorf("%d processes visible:\n%s", n, out)
	}
	if err := s.Terminate(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-other
}

// BenchmarkExec measures one exec of /bin/true in a provisioned session
// (its own pid namespace, /proc, hardening and cgroup each time).
func BenchmarkExec(b *testing.B) {
	bk, err := local.New(sandbox.Options{})
	if err != nil {
		b.Skip(err)
	}
	s, err := bk.Provision(context.Background(), sandbox.Spec{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Terminate(context.Background())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r, err := s.Exec(context.Background(), sandbox.ExecRequest{Args: []string{"/bin/true"}}); err != nil || r.ExitCode != 0 {
			b.Fatal(r, err)
		}
	}
}

// BenchmarkProvision measures provisioning and terminating a session.
func BenchmarkProvision(b *testing.B) {
	bk, err := local.New(sandbox.Options{})
	if err != nil {
		b.Skip(err)
	}
	for i := 0; i < b.N; i++ {
		s, err := bk.Provision(context.Background(), sandbox.Spec{})
		if err != nil {
			b.Fatal(err)
		}
		s.Terminate(context.Background())
	}
}

// hostPid returns the host pid of the process whose command line starts
// with m, waiting up to 10 seconds for it to appear.
func hostPid(t *testing.T, m string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.HasPrefix(string(b), m) {
				return pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no process %q on the host", m)
	return 0
}

// procField returns a field of /proc/PID/status.
func procField(t *testing.T, pid int, field string) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return ""
}

// TestExecPlacement: an exec's command runs in the exec's own cgroup under
// "agent" from its first instruction, while its pid 1, the supervisor and
// the init are in the session's own groups, outside "agent"; and the command
// holds no descriptor of theirs, only its stdio.
func TestExecPlacement(t *testing.T) {
	b, err := local.New(sandbox.Options{})
	if err != nil {
		t.Skip(err)
	}
	s := provision(t, sandbox.Spec{})
	r, err := s.Exec(context.Background(), sandbox.ExecRequest{Args: []string{"ls", "/proc/self/fd"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(r.Stdout)); strings.Join(got, " ") != "0 1 2 3" { // 3: ls's own directory
		t.Errorf("descriptors of a command: %q, want 0 1 2 3", got)
	}
	if pids := b.Capabilities().Limits.Pids; pids.Level != sandbox.Enforced {
		t.Skipf("PIDS LIMIT NOT ENFORCED BY CGROUPS HERE (%s): placement not checked", pids.How)
	}
	r, err = s.Exec(context.Background(), sandbox.ExecRequest{Args: []string{"cat", "/proc/self/cgroup"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(r.Stdout), "/fullsend-"+s.ID()+"/agent/e") {
		t.Errorf("the command does not start in its exec's group:\n%s", r.Stdout)
	}
	m := fmt.Sprintf("%d.%d", 9000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Exec(context.Background(), sandbox.ExecRequest{Args: []string{"sleep", m}, Timeout: 20 * time.Second})
	}()
	pid := hostPid(t, "sleep\x00"+m)
	for _, who := range []string{"command", "pid 1", "supervisor", "init"} {
		cg, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		if err != nil {
			t.Fatal(err)
		}
		inAgent := strings.Contains(string(cg), "/fullsend-"+s.ID()+"/agent/")
		if !strings.Contains(string(cg), "/fullsend-"+s.ID()) || inAgent != (who == "command") {
			t.Errorf("%s (pid %d) in the wrong groups:\n%s", who, pid, cg)
		}
		if who == "supervisor" {
			checkCloexec(t, pid)
		}
		pid, _ = strconv.Atoi(procField(t, pid, "PPid"))
	}
	if err := s.Terminate(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-done
}

// checkCloexec: every descriptor of process pid above stdio is
// close-on-exec, so that nothing it starts (a pid 1, an archive helper)
// inherits one it was not handed on purpose.
func checkCloexec(t *testing.T, pid int) {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fdinfo", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Logf("descriptors of %d not readable here: %v", pid, err)
		return
	}
	for _, e := range ents {
		fd, _ := strconv.Atoi(e.Name())
		info, err := os.ReadFile(dir + "/" + e.Name())
		if fd < 3 || err != nil {
			continue
		}
		for _, l := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(l, "flags:"); ok {
				flags, _ := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
				if flags&syscall.O_CLOEXEC == 0 {
					target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
					t.Errorf("descriptor %d (%s) of process %d is inherited by what it starts", fd, target, pid)
				}
			}
		}
	}
}

// TestExecCannotSignalItsPid1: the pid 1 that started the command ignores
// what the command sends it and still reports the command's own status.
func TestExecCannotSignalItsPid1(t *testing.T) {
	s := provision(t, sandbox.Spec{})
	r := sh(t, s, "for sig in TERM INT HUP USR1 XFSZ KILL STOP; do kill -s $sig 1; done; sleep 0.1; exit 5")
	if r.ExitCode != 5 {
		t.Errorf("exit %d, stderr %q; want the command's 5", r.ExitCode, r.Stderr)
	}
}
