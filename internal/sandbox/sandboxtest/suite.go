//go:build linux

package sandboxtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/syncbuf"
)

// PidsSlack is how many tasks beyond Limits.Pids a backend may allow for
// its own helpers.
const PidsSlack = 12

// Factory builds the backend under test with o (it may t.Skip).
type Factory func(t *testing.T, o sandbox.Options) sandbox.Backend

type suite struct {
	factory Factory
}

// Run runs every conformance test against the backend.
func Run(t *testing.T, f Factory) {
	s := &suite{factory: f}
	tests := []struct {
		name string
		fn   func(*testing.T)
	}{
		{"ExitCodes", s.exitCodes},
		{"StdinEnvCwd", s.stdinEnvCwd},
		{"TimeoutKillsTree", s.timeoutKillsTree},
		{"ExecLeavesNothing", s.execLeavesNothing},
		{"ReadOnlyMount", s.readOnlyMount},
		{"ReadWriteMount", s.readWriteMount},
		{"OutsideSpecInvisible", s.outsideInvisible},
		{"NoNetwork", s.noNetwork},
		{"ProxyAllowlist", s.proxyAllowlist},
		{"ProxyRefusesInternal", s.proxyInternal},
		{"PidsLimit", s.pidsLimit},
		{"MemoryLimit", s.memoryLimit},
		{"TmpLimit", s.tmpLimit},
		{"WorkspaceLimit", s.workspaceLimit},
		{"OutputLimit", s.outputLimit},
		{"OutputFilesLimit", s.outputFilesLimit},
		{"SocketFamilies", s.socketFamilies},
		{"CannotSignalSandbox", s.cannotSignalSandbox},
		{"UploadDownload", s.uploadDownload},
		{"SnapshotRestore", s.snapshotRestore},
		{"TerminateCleansUp", s.terminate},
		{"SessionsIsolated", s.isolated},
		{"ConcurrentExec", s.concurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.fn)
	}
}

func (s *suite) backend(t *testing.T, privateLoopback bool) (sandbox.Backend, string) {
	tmp := t.TempDir()
	o := sandbox.Options{Resolver: Resolver{}, TempDir: tmp}
	if privateLoopback {
		o.AllowedPrivateNetworks = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	}
	return s.factory(t, o), tmp
}

// caps is the backend's declared capabilities (what the suite may skip by).
func (s *suite) caps(t *testing.T) sandbox.Capabilities {
	t.Helper()
	b, _ := s.backend(t, true)
	return b.Capabilities()
}

// needHostMounts skips a test of host directory mounts on a backend that
// declares it has none (a Kubernetes Pod).
func (s *suite) needHostMounts(t *testing.T) {
	t.Helper()
	if !s.caps(t).HostMounts {
		t.Skip("SKIPPED BY CAPABILITY: the backend mounts no host directories (Capabilities.HostMounts false)")
	}
}

// mounts is ms on a backend with host mounts, else none (the test checks
// the rest).
func (s *suite) mounts(t *testing.T, ms ...sandbox.Mount) []sandbox.Mount {
	t.Helper()
	if !s.caps(t).HostMounts {
		t.Log("no host mounts here (Capabilities.HostMounts false): checked without them")
		return nil
	}
	return ms
}

func (s *suite) provision(t *testing.T, spec sandbox.Spec) sandbox.Session {
	t.Helper()
	b, _ := s.backend(t, true)
	return provisionOn(t, b, spec)
}

// within runs op with a context that ends after 60 seconds (or when op
// returns); an error fails the test as "what: error".
func within[T any](t *testing.T, what string, op func(ctx context.Context) (T, error)) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	v, err := op(ctx)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

func provisionOn(t *testing.T, b sandbox.Backend, spec sandbox.Spec) sandbox.Session {
	t.Helper()
	ss := within(t, "provision", func(ctx context.Context) (sandbox.Session, error) { return b.Provision(ctx, spec) })
	t.Cleanup(func() {
		if err := ss.Terminate(context.Background()); err != nil {
			t.Errorf("terminate: %v", err)
		}
	})
	return ss
}

func run(t *testing.T, ss sandbox.Session, r sandbox.ExecRequest) sandbox.ExecResult {
	t.Helper()
	return within(t, fmt.Sprintf("exec %q", r.Args), func(ctx context.Context) (sandbox.ExecResult, error) { return ss.Exec(ctx, r) })
}

func sh(t *testing.T, ss sandbox.Session, script string) sandbox.ExecResult {
	t.Helper()
	return run(t, ss, sandbox.ExecRequest{Args: []string{"sh", "-c", script}})
}

func helperReq(op, arg string) sandbox.ExecRequest {
	// GORACE: a race-instrumented test binary otherwise lingers a second
	// at exit.
	return sandbox.ExecRequest{Args: []string{sandbox.BinaryPath, op, arg}, Env: map[string]string{helperEnv: "1", "GORACE": "atexit_sleep_ms=0"}}
}

func (s *suite) exitCodes(t *testing.T) {
	ss := s.provision(t, sandbox.Spec{})
	for _, c := range []struct {
		script string
		want   int
	}{{"true", 0}, {"exit 3", 3}, {"kill -9 $$", 137}, {"exit 255", 255}} {
		if got := sh(t, ss, c.script).ExitCode; got != c.want {
			t.Errorf("%q: exit %d, want %d", c.script, got, c.want)
		}
	}
	r := run(t, ss, sandbox.ExecRequest{Args: []string{"no-such-command-xyz"}})
	if r.ExitCode != 127 {
		t.Errorf("missing command: exit %d, want 127 (stderr %q)", r.ExitCode, r.Stderr)
	}
}

func (s *suite) stdinEnvCwd(t *testing.T) {
	ss := s.provision(t, sandbox.Spec{Env: map[string]string{"FROM_SPEC": "spec", "OVERRIDE": "spec"}})
	r := run(t, ss, sandbox.ExecRequest{
		Args:  []string{"sh", "-c", `cat; echo "$FROM_SPEC $OVERRIDE $FROM_REQ"; pwd; echo err >&2`},
		Stdin: []byte("hello stdin\n"),
		Env:   map[string]string{"OVERRIDE": "req", "FROM_REQ": "req2"},
		Cwd:   "/tmp",
	})
	want := "hello stdin\nspec req req2\n/tmp\n"
	if string(r.Stdout) != want || string(r.Stderr) != "err\n" || r.ExitCode != 0 {
		t.Errorf("got stdout %q stderr %q exit %d, want %q", r.Stdout, r.Stderr, r.ExitCode, want)
	}
	// The default cwd is the spec's WorkDir (/sandbox by default).
	if got := strings.TrimSpace(string(sh(t, ss, "pwd").Stdout)); got != sandbox.Root {
		t.Errorf("default cwd %q, want %s", got, sandbox.Root)
	}
	// Live copies of the output.
	var live bytes.Buffer
	run(t, ss, sandbox.ExecRequest{Args: []string{"echo", "live"}, Stdout: &live})
	if live.String() != "live\n" {
		t.Errorf("live stdout %q", live.String())
	}
}

// hostProcs lists host processes whose command line contains marker.
func hostProcs(marker string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		if strings.Contains(string(b), marker) {
			out = append(out, e.Name()+":"+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// hostCmdlines counts the host processes whose command line is cmdline
// (arguments NUL-terminated).
func hostCmdlines(cmdline string) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && string(b) == cmdline {
			n++
		}
	}
	return n
}

func marker() string {
	return fmt.Sprintf("%d.%d", 3000+time.Now().Nanosecond()%5000, time.Now().UnixNano()%100000)
}

func waitNoHostProcs(t *testing.T, m string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ps := hostProcs("sleep\x00" + m)
		if len(ps) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left behind: %v", ps)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *suite) timeoutKillsTree(t *testing.T) {
	ss := s.provision(t, sandbox.Spec{})
	m := marker()
	start := time.Now()
	r := run(t, ss, sandbox.ExecRequest{
		Args:    []string{"sh", "-c", "sleep " + m + " & sh -c 'sleep " + m + "' & sleep " + m},
		Timeout: 500 * time.Millisecond,
	})
	if !r.TimedOut {
		t.Fatalf("not timed out: exit %d", r.ExitCode)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("timeout took %v", d)
	}
	waitNoHostProcs(t, m)
	// And none is visible inside either.
	if out := sh(t, ss, "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '").Stdout; strings.Contains(string(out), m) {
		t.Errorf("grandchild still alive inside: %q", out)
	}
	// Spec.Limits.WallTime applies when the request has no timeout.
	ss2 := s.provision(t, sandbox.Spec{Limits: sandbox.Limits{WallTime: 300 * time.Millisecond}})
	if r := sh(t, ss2, "sleep "+m); !r.TimedOut {
		t.Errorf("WallTime not applied: %+v", r)
	}
	waitNoHostProcs(t, m)
}

func (s *suite) readOnlyMount(t *testing.T) {
	s.needHostMounts(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	ss := s.provision(t, sandbox.Spec{Mounts: []sandbox.Mount{{Source: dir, Target: "/ro", ReadOnly: true}}})
	if r := sh(t, ss, "cat /ro/f"); string(r.Stdout) != "original" {
		t.Fatalf("read RO mount: %q %q", r.Stdout, r.Stderr)
	}
	for _, script := range []string{"echo changed > /ro/f", "touch /ro/new", "rm -f /ro/f", "mkdir /ro/d", "mv /ro/f /ro/g"} {
		if r := sh(t, ss, script); r.ExitCode == 0 {
			t.Errorf("%q succeeded on a read-only mount", script)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "f"))
	ents, _ := os.ReadDir(dir)
	if string(b) != "original" || len(ents) != 1 {
		t.Errorf("host dir changed: %q, %d entries", b, len(ents))
	}
	// The system is read-only too.
	for _, script := range []string{"touch /usr/x", "touch /etc/x", "echo x >> /etc/passwd", "touch /x"} {
		if r := sh(t, ss, script); r.ExitCode == 0 {
			t.Errorf("%q succeeded", script)
		}
	}
}

func (s *suite) readWriteMount(t *testing.T) {
	s.needHostMounts(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "existing"), []byte("a"), 0o644)
	ss := s.provision(t, sandbox.Spec{Mounts: []sandbox.Mount{{Source: dir, Target: "/work/repo"}}})
	if r := sh(t, ss, "echo b >> /work/repo/existing && mkdir -p /work/repo/d && echo new > /work/repo/d/n && cat /work/repo/existing"); r.ExitCode != 0 || string(r.Stdout) != "ab\n" {
		t.Fatalf("write RW mount: exit %d %q %q", r.ExitCode, r.Stdout, r.Stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "d", "n"))
	if err != nil || string(b) != "new\n" {
		t.Fatalf("host does not see the file: %q %v", b, err)
	}
	// Files created in the sandbox belong to the mount source's owner on the
	// host (or to the invoking user), never to another account.
	var dst, fst = statOwner(dir), statOwner(filepath.Join(dir, "d", "n"))
	if dst != fst && fst != os.Getuid() {
		t.Errorf("created file owned by uid %d; source dir owner %d, caller %d", fst, dst, os.Getuid())
	}
	// /sandbox and /tmp are writable.
	if r := sh(t, ss, "echo x > /sandbox/x && echo y > /tmp/y && cat /sandbox/x /tmp/y"); string(r.Stdout) != "x\ny\n" {
		t.Errorf("/sandbox or /tmp not writable: %q %q", r.Stdout, r.Stderr)
	}
}

func (s *suite) outsideInvisible(t *testing.T) {
	home := t.TempDir()
	secret := filepath.Join(home, ".secret-token")
	os.WriteFile(secret, []byte("TOPSECRET"), 0o644)
	os.Chmod(home, 0o755)
	work := t.TempDir()
	ss := s.provision(t, sandbox.Spec{Mounts: s.mounts(t, sandbox.Mount{Source: work, Target: "/work"})})
	r := sh(t, ss, "cat "+secret+"; ls "+home+"; cat /etc/shadow; ls /root; cat /proc/1/environ; find / -xdev -name .secret-token 2>/dev/null")
	if strings.Contains(string(r.Stdout), "TOPSECRET") || strings.Contains(string(r.Stdout), ".secret-token") {
		t.Errorf("secret visible: %q", r.Stdout)
	}
	if r := sh(t, ss, "test -e "+secret); r.ExitCode == 0 {
		t.Errorf("%s exists inside the sandbox", secret)
	}
	// Host processes are invisible.
	if r := sh(t, ss, "ls /proc | grep -c '^[0-9]'"); r.ExitCode == 0 {
		n, _ := strconv.Atoi(strings.TrimSpace(string(r.Stdout)))
		if n > 10 {
			t.Errorf("%d processes visible inside", n)
		}
	}
}

func listenLoopback(t *testing.T) (net.Listener, *int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n int32
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			n++
			mu.Unlock()
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return ln, &n
}

func (s *suite) noNetwork(t *testing.T) {
	ln, accepted := listenLoopback(t)
	ss := s.provision(t, sandbox.Spec{})
	r := run(t, ss, helperReq("dial", ln.Addr().String()))
	if r.ExitCode == 0 || *accepted != 0 {
		t.Errorf("host loopback reachable without network: %q", r.Stdout)
	}
	// Loopback inside works.
	if r := run(t, ss, helperReq("dial", "127.0.0.1:1")); !strings.Contains(string(r.Stdout), "refused") {
		t.Errorf("sandbox loopback not up: %q", r.Stdout)
	}
	// No proxy variables are set.
	if r := sh(t, ss, "env | grep -i _proxy"); r.ExitCode == 0 {
		t.Errorf("proxy env set under none: %q", r.Stdout)
	}
}

func okServer(t *testing.T, tlsServer bool) (*httptest.Server, string) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok-from-host") })
	var srv *httptest.Server
	if tlsServer {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return srv, port
}

// needHostProxy skips the proxy tests on a backend without an egress
// allowlist or whose proxy cannot reach the runner host: their test
// servers listen on the runner's loopback, their names resolve through
// the suite's Resolver in the runner.
func (s *suite) needHostProxy(t *testing.T) {
	t.Helper()
	if c := s.caps(t); !c.NetworkAllowlist || !c.HostServices {
		t.Skipf("SKIPPED BY CAPABILITY: needs an egress allowlist enforced by a proxy that reaches the runner host (NetworkAllowlist %v, HostServices %v)", c.NetworkAllowlist, c.HostServices)
	}
}

func (s *suite) proxyAllowlist(t *testing.T) {
	s.needHostProxy(t)
	_, port := okServer(t, false)
	_, tport := okServer(t, true)
	_, sport := okServer(t, false)
	var log syncbuf.Buffer
	ss := s.provision(t, sandbox.Spec{Network: sandbox.Network{
		Allow:    []string{"allowed.test:" + port, "*.wild.test:" + tport},
		Services: []string{"127.0.0.1:" + sport},
		Log:      &log,
	}})
	check := func(url, want string) {
		t.Helper()
		r := run(t, ss, helperReq("get", url))
		if !strings.HasPrefix(string(r.Stdout), want) {
			t.Errorf("GET %s: %q (stderr %q), want prefix %q", url, r.Stdout, r.Stderr, want)
		}
	}
	check("http://allowed.test:"+port+"/", "200 ok-from-host")
	check("https://a.wild.test:"+tport+"/", "200 ok-from-host") // CONNECT
	check("http://127.0.0.1:"+sport+"/", "")                    // NO_PROXY covers loopback: not via proxy
	check("http://denied.test:"+port+"/", "403")
	check("https://wild.test:"+tport+"/", "error") // "*." does not match the apex; CONNECT refused
	check("http://allowed.test:1/", "403")         // port not allowed
	l := log.String()
	for _, want := range []string{"deny denied.test:" + port, "deny wild.test:" + tport, "deny allowed.test:1"} {
		if !strings.Contains(l, want) {
			t.Errorf("denial log lacks %q:\n%s", want, l)
		}
	}
	// A direct connection (bypassing the proxy) is impossible.
	if r := run(t, ss, helperReq("dial", "127.0.0.1:"+port)); r.ExitCode == 0 {
		t.Errorf("direct connection to host loopback succeeded")
	}
	// The runner service is reachable through the proxy by IP even though
	// loopback is internal (curl honours lower-case https_proxy/http_proxy).
	if r := sh(t, ss, "command -v curl >/dev/null || exit 99; curl -s --noproxy '' http://127.0.0.1:"+sport+"/"); r.ExitCode != 99 && string(r.Stdout) != "ok-from-host" {
		t.Errorf("service via curl: %q %q", r.Stdout, r.Stderr)
	}
	if r := sh(t, ss, "command -v curl >/dev/null || exit 99; curl -s http://allowed.test:"+port+"/"); r.ExitCode != 99 && string(r.Stdout) != "ok-from-host" {
		t.Errorf("allowed via curl: %q %q", r.Stdout, r.Stderr)
	}
}

func (s *suite) proxyInternal(t *testing.T) {
	s.needHostProxy(t)
	_, port := okServer(t, false)
	var log syncbuf.Buffer
	b, _ := s.backend(t, false) // loopback NOT exempted
	ss := provisionOn(t, b, sandbox.Spec{Network: sandbox.Network{Allow: []string{"allowed.test:" + port}, Log: &log}})
	r := run(t, ss, helperReq("get", "http://allowed.test:"+port+"/"))
	if !strings.HasPrefix(string(r.Stdout), "403") {
		t.Errorf("internal address reachable: %q", r.Stdout)
	}
	if !strings.Contains(log.String(), "internal address") {
		t.Errorf("log: %q", log.String())
	}
}

// spawnCount starts 60 sleeping processes in ss and returns how many were
// alive at most, as seen from the host.
//
// It waits for the spawn loop to be over, not for a fixed time: the exec's
// shell runs the loop in a subshell (a failed fork ends the subshell, not
// the count) and then execs into a sleeper of its own marker, which needs
// no new task. Seeing that sleeper on the host means every fork the loop
// could make has been made; once no forked child is still on its way to
// exec sleep, the count is final. (A fixed window — it was 3 seconds — let a
// loaded machine end the count before the sandbox had started its 60
// processes: the "control without limit" failed under load.)
func spawnCount(t *testing.T, ss sandbox.Session) int {
	t.Helper()
	m := marker()
	over := "1" + m // never contains "sleep\x00"+m: m starts with a digit from 3
	script := "(i=0; while [ $i -lt 60 ]; do sleep " + m + " & i=$((i+1)); done) 2>/dev/null; exec sleep " + over
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		ss.Exec(ctx, sandbox.ExecRequest{Args: []string{"sh", "-c", script}, Timeout: 2 * time.Minute})
	}()
	most := 0
	count := func() { most = max(most, len(hostProcs("sleep\x00"+m))) }
	deadline := time.Now().Add(90 * time.Second)
	for {
		if count(); most >= 60 {
			break
		}
		// Once the loop is over, a child forked but not yet turned into
		// a sleeper still runs the shell (same command line): wait for
		// those too.
		if len(hostProcs("sleep\x00"+over)) > 0 && hostCmdlines("sh\x00-c\x00"+script+"\x00") == 0 {
			count() // every process the loop started is alive and counted
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("spawn loop not over after 90 s (%d processes seen)", most)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-exited
	waitNoHostProcs(t, m)
	waitNoHostProcs(t, over)
	return most
}

// forkBomb runs pidsLimit's fork bomb in ss under an exec timeout and
// returns the peak number of its sleepers seen from the host, whether the
// bomb was over before the exec ended, and the exec's result. Nothing of
// it is left on the host when it returns.
func forkBomb(t *testing.T, ss sandbox.Session, timeout time.Duration) (int, bool, sandbox.ExecResult, error) {
	t.Helper()
	m := marker()
	over := "1" + m // never contains "sleep\x00"+m: m starts with a digit from 3
	sleep := "sleep " + m
	bomb := "( (while :; do " + sleep + " & done); " + sleep + " & exec sleep " + over + " ) & exec " + sleep
	pending := "sh\x00-c\x00" + bomb + "\x00" // the shells, and children not yet sleepers
	type peak struct {
		n    int
		over bool
	}
	result := make(chan peak)
	stop := make(chan struct{})
	// The exec's timer starts after start: what the host sees before
	// start+timeout is the bomb's doing, not the teardown's (killing the
	// bomb lets the subshell reach its final exec too).
	start := time.Now()
	go func() {
		var p peak
		for {
			select {
			case <-stop:
				result <- p
				return
			default:
			}
			p.n = max(p.n, len(hostProcs("sleep\x00"+m)))
			if !p.over && len(hostProcs("sleep\x00"+over)) > 0 && hostCmdlines(pending) == 0 && time.Since(start) < timeout {
				p.over = true
				p.n = max(p.n, len(hostProcs("sleep\x00"+m)))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second+timeout)
	r, err := ss.Exec(ctx, sandbox.ExecRequest{Args: []string{"sh", "-c", bomb}, Timeout: timeout})
	cancel()
	close(stop)
	p := <-result
	waitNoHostProcs(t, m)
	waitNoHostProcs(t, over)
	return p.n, p.over, r, err
}

func (s *suite) pidsLimit(t *testing.T) {
	// Backends may reserve a few tasks for their own helpers (see the
	// backend's documentation); 60 processes must not all start.
	b, _ := s.backend(t, true)
	pids := b.Capabilities().Limits.Pids
	if pids.Level == sandbox.NotEnforced {
		t.Skipf("SKIPPED BY CAPABILITY: pids limit not enforced here (%s)", pids.How)
	}
	ss := provisionOn(t, b, sandbox.Spec{Limits: sandbox.Limits{Pids: 24}})
	if n := spawnCount(t, ss); n == 0 || n > 24+PidsSlack {
		t.Errorf("processes alive under pids=24: %d", n)
	}
	// A fork bomb that fills the budget in an order no timing changes: the
	// exec's shell forks once (a subshell) and becomes a sleeper; the
	// subshell forks the bomb and waits; the bomb forks sleepers until a
	// fork fails, which ends it (its sleepers stay); the subshell forks one
	// more sleeper into the freed pid and becomes a sleeper of its own
	// marker, which tells the host the bomb is over. (Two bombs started
	// side by side by the exec's shell could fill the budget before the
	// shell's own second fork and end the exec early.) Forks fail inside,
	// the limit holds, the exec ends at its timeout, nothing is left on the
	// host, and the session survives. The exec must outlast the bomb: on a
	// loaded machine, where the bomb is not over within the exec's timeout,
	// it runs again with twice the timeout.
	var (
		n    int
		over bool
		r    sandbox.ExecResult
		err  error
	)
	timeout := 3 * time.Second
	for {
		n, over, r, err = forkBomb(t, ss, timeout)
		if n > 24+PidsSlack {
			t.Errorf("fork bomb peaked at %d processes under pids=24", n)
		}
		if over || timeout >= 24*time.Second {
			break
		}
		t.Logf("fork bomb not over within its exec timeout of %v (loaded machine): again with %v", timeout, 2*timeout)
		timeout *= 2
	}
	if !over {
		t.Errorf("fork bomb not over within its exec timeout of %v", timeout)
	}
	// Proof the bomb filled the budget; a weaker fallback (a per-user
	// rlimit) shares it with the caller's own processes.
	if pids.Level == sandbox.Enforced && n < 12 {
		t.Errorf("fork bomb peaked at only %d processes under pids=24", n)
	} else if pids.Level != sandbox.Enforced {
		t.Logf("PIDS LIMIT %s here (%s): fork bomb peaked at %d", pids.Level, pids.How, n)
	}
	if err != nil {
		t.Fatalf("fork bomb ended the session: %v", err)
	}
	if !r.TimedOut {
		t.Errorf("fork bomb exec ended before its timeout: exit %d %q", r.ExitCode, r.Stderr)
	}
	if r := sh(t, ss, "echo alive"); string(r.Stdout) != "alive\n" {
		t.Errorf("session broken after fork bomb: %q %q", r.Stdout, r.Stderr)
	}
	if n := spawnCount(t, ss); n == 0 || n > 24+PidsSlack {
		t.Errorf("after the bomb, processes alive under pids=24: %d", n)
	}
	// Control: without a limit (the default is far above 60) the same loop starts every process.
	if n := spawnCount(t, s.provision(t, sandbox.Spec{})); n < 60 {
		t.Errorf("control without limit: only %d processes", n)
	}
}

func (s *suite) memoryLimit(t *testing.T) {
	b, _ := s.backend(t, true)
	ss := provisionOn(t, b, sandbox.Spec{Limits: sandbox.Limits{MemoryBytes: 128 << 20}})
	small := `awk 'BEGIN{s="x"; for(i=0;i<20;i++) s=s s; print length(s)}'`
	if r := sh(t, ss, small); strings.TrimSpace(string(r.Stdout)) != "1048576" || r.OOMKilled {
		t.Fatalf("1 MiB allocation failed: %q %q exit %d oom %v", r.Stdout, r.Stderr, r.ExitCode, r.OOMKilled)
	}
	big := `awk 'BEGIN{s="x"; for(i=0;i<31;i++) s=s s; print length(s)}'` // 2 GiB
	r := run(t, ss, sandbox.ExecRequest{Args: []string{"sh", "-c", big}, Timeout: 30 * time.Second})
	if r.ExitCode == 0 || r.TimedOut {
		t.Errorf("2 GiB allocation under a 128 MiB limit: exit %d timedOut %v stdout %q", r.ExitCode, r.TimedOut, r.Stdout)
	}
	if mem := b.Capabilities().Limits.Memory; mem.Level == sandbox.Enforced {
		if !r.OOMKilled {
			t.Errorf("OOM kill not reported (%s): exit %d stderr %q", mem.How, r.ExitCode, r.Stderr)
		}
	} else {
		t.Logf("MEMORY OOM REPORT NOT CHECKED: memory limit is %s here (%s)", mem.Level, mem.How)
	}
	if r := sh(t, ss, "echo alive"); string(r.Stdout) != "alive\n" || r.OOMKilled {
		t.Errorf("session dead after OOM: %q, oom %v", r.Stderr, r.OOMKilled)
	}
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readTree(t *testing.T, dir string) map[string]string {
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			b, _ := os.ReadFile(p)
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	return out
}

func (s *suite) uploadDownload(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{"a.txt": "alpha", "sub/b.txt": "beta", "sub/deep/c": strings.Repeat("c", 100000), "empty": ""}
	writeTree(t, src, files)
	os.Chmod(filepath.Join(src, "a.txt"), 0o755)
	ro := t.TempDir()
	ss := s.provision(t, sandbox.Spec{Mounts: s.mounts(t, sandbox.Mount{Source: ro, Target: "/ro", ReadOnly: true})})
	ctx := context.Background()
	if err := ss.Upload(ctx, src, "/sandbox/in"); err != nil {
		t.Fatal(err)
	}
	if r := sh(t, ss, "cat /sandbox/in/sub/b.txt && test -x /sandbox/in/a.txt && echo x > /sandbox/in/new"); string(r.Stdout) != "beta" || r.ExitCode != 0 {
		t.Fatalf("uploaded tree: %q %q", r.Stdout, r.Stderr)
	}
	dst := filepath.Join(t.TempDir(), "out")
	if err := ss.Download(ctx, "/sandbox/in", dst); err != nil {
		t.Fatal(err)
	}
	got := readTree(t, dst)
	files["new"] = "x\n"
	if fmt.Sprint(got) != fmt.Sprint(files) {
		t.Errorf("round trip differs:\n got %v\nwant %v", keys(got), keys(files))
	}
	// Single file both ways.
	if err := ss.Upload(ctx, filepath.Join(src, "sub", "b.txt"), "/tmp/one"); err != nil {
		t.Fatal(err)
	}
	one := filepath.Join(t.TempDir(), "one")
	if err := ss.Download(ctx, "/tmp/one", one); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(one); string(b) != "beta" {
		t.Errorf("single file round trip: %q", b)
	}
	// Uploads obey the sandbox's permissions.
	if err := ss.Upload(ctx, src, "/ro/x"); err == nil {
		t.Errorf("upload into a read-only mount (or, without mounts, the read-only root) succeeded")
	}
	if err := ss.Download(ctx, "/nonexistent", filepath.Join(t.TempDir(), "x")); err == nil {
		t.Errorf("download of a missing path succeeded")
	}
	// Sandbox paths are checked like a Spec's.
	for _, p := range []string{"sandbox/in", "/sandbox/../etc"} {
		if err := ss.Upload(ctx, src, p); !errors.Is(err, sandbox.ErrInvalidSpec) {
			t.Errorf("upload to %q: %v, want ErrInvalidSpec", p, err)
		}
		if err := ss.Download(ctx, p, filepath.Join(t.TempDir(), "x")); !errors.Is(err, sandbox.ErrInvalidSpec) {
			t.Errorf("download of %q: %v, want ErrInvalidSpec", p, err)
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s(%d)", k, len(v)))
	}
	return out
}

func (s *suite) terminate(t *testing.T) {
	b, tmp := s.backend(t, true)
	work := t.TempDir()
	mountsBefore, _ := os.ReadFile("/proc/self/mountinfo")
	ss, err := b.Provision(context.Background(), sandbox.Spec{Mounts: s.mounts(t, sandbox.Mount{Source: work, Target: "/work"}), Limits: sandbox.Limits{Pids: 64, MemoryBytes: 256 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	m := marker()
	done := make(chan error, 1)
	go func() {
		_, err := ss.Exec(context.Background(), sandbox.ExecRequest{Args: []string{"sh", "-c", "sleep " + m + " & sleep " + m}})
		done <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for len(hostProcs("sleep\x00"+m)) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if len(hostProcs("sleep\x00"+m)) < 2 {
		t.Fatalf("processes never started")
	}
	if err := ss.Terminate(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("exec still blocked after terminate")
	}
	waitNoHostProcs(t, m)
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("temp dir left behind: %v", ents)
	}
	mountsAfter, _ := os.ReadFile("/proc/self/mountinfo")
	if string(mountsBefore) != string(mountsAfter) || strings.Contains(string(mountsAfter), ss.ID()) {
		t.Errorf("host mount table changed: %s", mountDiff(string(mountsBefore), string(mountsAfter)))
	}
	if leftovers := cgroupLeftovers(ss.ID()); len(leftovers) > 0 {
		t.Errorf("cgroups left behind: %v", leftovers)
	}
	if err := ss.Terminate(context.Background()); err != nil {
		t.Errorf("second terminate: %v", err)
	}
	if _, err := ss.Exec(context.Background(), sandbox.ExecRequest{Args: []string{"true"}}); err == nil {
		t.Errorf("exec after terminate succeeded")
	}
}

// mountDiff names the mount points only one of two mountinfo tables has.
func mountDiff(before, after string) string {
	points := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			if f := strings.Fields(l); len(f) > 4 {
				m[f[4]] = true
			}
		}
		return m
	}
	b, a := points(before), points(after)
	var out []string
	for p := range a {
		if !b[p] {
			out = append(out, "+"+p)
		}
	}
	for p := range b {
		if !a[p] {
			out = append(out, "-"+p)
		}
	}
	return strings.Join(out, " ")
}

func cgroupLeftovers(id string) []string {
	var out []string
	filepath.WalkDir("/sys/fs/cgroup", func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.Count(p, "/") > 7 {
			return filepath.SkipDir
		}
		if strings.Contains(d.Name(), id) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func (s *suite) isolated(t *testing.T) {
	s1 := s.provision(t, sandbox.Spec{})
	s2 := s.provision(t, sandbox.Spec{})
	m := marker()
	go s1.Exec(context.Background(), sandbox.ExecRequest{Args: []string{"sh", "-c", "echo one > /sandbox/mine; echo t > /tmp/mine; sleep " + m}, Timeout: 20 * time.Second})
	deadline := time.Now().Add(5 * time.Second)
	for len(hostProcs("sleep\x00"+m)) < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	r := sh(t, s2, "ls /sandbox /tmp; cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '")
	if strings.Contains(string(r.Stdout), "mine") || strings.Contains(string(r.Stdout), m) {
		t.Errorf("session 2 sees session 1: %q", r.Stdout)
	}
	if r := sh(t, s1, "cat /sandbox/mine /tmp/mine"); string(r.Stdout) != "one\nt\n" {
		t.Errorf("session 1 lost its files: %q %q", r.Stdout, r.Stderr)
	}
}

func (s *suite) concurrent(t *testing.T) {
	ss := s.provision(t, sandbox.Spec{})
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r, err := ss.Exec(context.Background(), sandbox.ExecRequest{Args: []string{"sh", "-c", fmt.Sprintf("sleep 0.1; echo %d", i)}})
			if err != nil || strings.TrimSpace(string(r.Stdout)) != strconv.Itoa(i) {
				errs <- fmt.Sprintf("exec %d: %q %v", i, r.Stdout, err)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
