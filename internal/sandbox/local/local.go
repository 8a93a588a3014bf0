//go:build linux

package local

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/egress"
	"github.com/fullsend-ai/fullsend/internal/sandbox/internal/archive"
	"github.com/fullsend-ai/fullsend/internal/sandbox/internal/capture"
	"github.com/fullsend-ai/fullsend/internal/sandbox/local/guest"
	"github.com/fullsend-ai/fullsend/internal/syncbuf"
)

// Name of the backend.
const Name = "local"

// AgentUID and AgentGID are the ids commands see inside the sandbox.
const (
	AgentUID = 1000
	AgentGID = 1000
)

// ProvisionTimeout bounds how long provisioning may take.
const ProvisionTimeout = 15 * time.Second

// Backend is the local namespaces backend.
type Backend struct {
	opts sandbox.Options
	exe  string
}

// New returns the local backend. It fails with sandbox.ErrUnavailable (and
// the setting to change) when user namespaces cannot be created.
func New(o sandbox.Options) (*Backend, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("local sandbox: locate own binary: %w", err)
	}
	return &Backend{opts: o, exe: exe}, nil
}

// Name implements sandbox.Backend.
func (b *Backend) Name() string { return Name }

// Capabilities implements sandbox.Backend. Limits reports what this
// machine allows: cgroup controllers this process may use, else rlimits.
func (b *Backend) Capabilities() sandbox.Capabilities {
	c := sandbox.Capabilities{Isolation: "user+mount+pid+ipc+uts+net+cgroup namespaces", NetworkAllowlist: true, Seccomp: true, UpdateNetwork: true, Snapshot: true, HostMounts: true, HostServices: true}
	c.Landlock = guest.LandlockABI() > 0
	if !c.Landlock {
		c.Notes = append(c.Notes, "landlock: not available in this kernel")
	}
	c.Limits = limitSupport(detectCgroups())
	c.MemoryLimit = c.Limits.Memory.Level != sandbox.NotEnforced
	c.PidsLimit = c.Limits.Pids.Level != sandbox.NotEnforced
	c.CPULimit = c.Limits.CPU.Level != sandbox.NotEnforced
	c.Notes = append(c.Notes, c.Limits.Downgrades()...)
	return c
}

// limitSupport describes how each limit is enforced given env.
func limitSupport(env cgroupEnv) sandbox.LimitSupport {
	full := func(how string) sandbox.LimitEnforcement {
		return sandbox.LimitEnforcement{Level: sandbox.Enforced, How: how}
	}
	l := sandbox.LimitSupport{
		Tmp:       full("tmpfs size: writes past it fail with ENOSPC"),
		Workspace: full("/sandbox is a tmpfs of that size (ENOSPC); read-write host mounts: RLIMIT_FSIZE per file and a usage watch that ends the session"),
		Output:    full("host side: downloads staged and refused past it, exec output capped and the command killed"),
	}
	if env.has("memory") {
		l.Memory = full(env.version() + " memory limit on the agent's commands (OOM kills reported)")
	} else {
		l.Memory = sandbox.LimitEnforcement{Level: sandbox.Weaker, How: "RLIMIT_AS per process, no writable cgroup: allocations fail, no OOM kill is reported"}
	}
	if env.has("pids") {
		l.Pids = full(env.version() + " pids.max on the agent's commands")
	} else {
		l.Pids = sandbox.LimitEnforcement{Level: sandbox.Weaker, How: "RLIMIT_NPROC per uid, no writable cgroup: counts the sandbox's own processes too (and, unprivileged, all of the caller's)"}
	}
	if env.has("cpu") {
		l.CPU = full(env.version() + " CPU quota on the session")
	} else {
		l.CPU = sandbox.LimitEnforcement{Level: sandbox.NotEnforced, How: "no writable cpu cgroup"}
	}
	return l
}

func randomID() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// agentHostID picks the host uid/gid the sandbox maps to: the caller's own
// ids when unprivileged; when running as root, a dedicated unprivileged id
// per session (so the agent never runs as host root).
func agentHostID() (uid, gid int) {
	if os.Geteuid() != 0 {
		return os.Geteuid(), os.Getegid()
	}
	var b [4]byte
	rand.Read(b[:])
	id := 1_500_000_000 + int(binary.BigEndian.Uint32(b[:])%100_000_000)
	return id, id
}

// Provision implements sandbox.Backend.
func (b *Backend) Provision(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	spec, err := sandbox.Check(spec)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, ProvisionTimeout)
	defer cancel()
	s := &session{id: randomID(), spec: spec, limits: spec.Limits.Resolved(), backend: b, waiters: map[uint64]chan guest.Message{},
		initStderr: syncbuf.Buffer{Max: 64 << 10}}
	s.hostUID, s.hostGID = agentHostID()
	if err := s.start(ctx); err != nil {
		s.Terminate(context.Background())
		return nil, err
	}
	return s, nil
}

type session struct {
	id      string
	spec    sandbox.Spec
	limits  sandbox.Limits // spec.Limits with defaults
	backend *Backend

	hostUID, hostGID int
	cg               *cgroupSet
	cmd              *exec.Cmd
	initStderr       syncbuf.Buffer // the init's stderr, the first 64 KiB
	initCtl          *net.UnixConn
	super            *net.UnixConn
	proxy            *egress.Proxy

	wmu     sync.Mutex
	mu      sync.Mutex
	nextID  uint64
	waiters map[uint64]chan guest.Message
	dead    error
	// killedBy is why the backend ended the session itself (the workspace
	// watch), reported by every later call.
	killedBy  error
	stopWatch func()

	termOnce sync.Once
	termErr  error

	// reaped is set (under reapMu) before Terminate reaps the init: from
	// then on its pid may name another process.
	reapMu sync.RWMutex
	reaped bool
}

// prime runs while the supervisor starts an exec's pid 1, so that the pid
// 1's move into the exec's cgroups finds the grace period over (see
// cgroupSet.prime); it uses the init's pid only while the init is
// unreaped.
func (s *session) prime() {
	s.reapMu.RLock()
	defer s.reapMu.RUnlock()
	if !s.reaped {
		s.cg.prime(s.cmd.Process.Pid)
	}
}

func (s *session) ID() string { return s.id }

func unavailable(err error) error {
	hint := "enable unprivileged user namespaces"
	var parts []string
	for _, f := range []struct{ path, want string }{
		{"/proc/sys/kernel/unprivileged_userns_clone", "kernel.unprivileged_userns_clone=1"},
		{"/proc/sys/user/max_user_namespaces", "user.max_user_namespaces=15000"},
		{"/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "kernel.apparmor_restrict_unprivileged_userns=0"},
	} {
		if v, err := os.ReadFile(f.path); err == nil {
			parts = append(parts, fmt.Sprintf("%s (now %s)", f.want, strings.TrimSpace(string(v))))
		}
	}
	if len(parts) > 0 {
		hint += ": sysctl -w " + strings.Join(parts, ", ")
	} else {
		hint += " (CONFIG_USER_NS)"
	}
	return fmt.Errorf("local sandbox: %w: cannot create user namespace (%v); %s, or use --backend docker", sandbox.ErrUnavailable, err, hint)
}

func (s *session) start(ctx context.Context) error {
	var err error
	if s.cg, err = newCgroups(s.id, s.limits); err != nil {
		return fmt.Errorf("local sandbox: cgroups: %w", err)
	}
	home, err := s.cg.openHomes()
	if err != nil {
		return fmt.Errorf("local sandbox: %w", err)
	}
	defer guest.CloseAll(home)
	if err := s.startInit(); err != nil {
		return err
	}
	// Moving a task between cgroups waits for an RCU grace period, often
	// milliseconds: the init's move runs while it starts and builds the
	// root. Nothing it starts before being moved stays outside (it moves the
	// supervisor into the same groups).
	placed := make(chan error, 1)
	go func() { placed <- s.cg.add(s.cmd.Process.Pid) }()
	cfg, err := s.sendConfig(home)
	if err == nil {
		err = s.awaitInit(ctx, cfg.Proxy)
	}
	if perr := <-placed; err == nil && perr != nil {
		err = fmt.Errorf("local sandbox: %w", perr)
	}
	if err != nil {
		return err
	}
	if _, err := s.await(ctx, s.super, "supervisor"); err != nil {
		return err
	}
	go s.dispatch()
	s.watchMounts()
	return nil
}

// startInit starts the sandbox init in its new namespaces, with the
// control socket to the host and the supervisor's end of its own.
func (s *session) startInit() error {
	initCtl, initChild, err := socketPair()
	if err != nil {
		return err
	}
	s.initCtl = initCtl
	superCtl, superChild, err := socketPair()
	if err != nil {
		initChild.Close()
		return err
	}
	s.super = superCtl
	cmd := exec.Command("/proc/self/exe", "fullsend-sandbox-init")
	cmd.Env = append([]string{guest.EnvRole + "=init"}, guest.RaceEnv()...)
	cmd.ExtraFiles = []*os.File{initChild, superChild}
	cmd.Stderr = &s.initStderr
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC |
			syscall.CLONE_NEWUTS | syscall.CLONE_NEWNET | syscall.CLONE_NEWCGROUP,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: s.hostUID, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: s.hostGID, Size: 1}},
		GidMappingsEnableSetgroups: false,
		// Become the namespace's root (host uid H): without this the init
		// would keep the caller's host uid, unmapped inside when we are root.
		Credential: &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true},
		Pdeathsig:  syscall.SIGKILL,
	}
	err = cmd.Start()
	initChild.Close()
	superChild.Close()
	if err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EUSERS) {
			return unavailable(err)
		}
		return fmt.Errorf("local sandbox: start init: %w", err)
	}
	s.cmd = cmd
	return nil
}

// sendConfig sends the init its configuration with the descriptors it
// needs: the binary and each mount (as root, detached mounts), then home,
// the cgroup.procs files the init moves the supervisor into.
func (s *session) sendConfig(home []*os.File) (*guest.InitConfig, error) {
	l := s.limits
	sup := guest.SuperConfig{AgentUID: AgentUID, AgentGID: AgentGID, FSize: uint64(l.WorkspaceBytes)}
	if _, ok := s.cg.enforced["pids"]; !ok {
		sup.Nproc = uint64(l.Pids)
	}
	if _, ok := s.cg.enforced["memory"]; !ok {
		sup.AS = uint64(l.MemoryBytes)
	}
	proxy := !s.spec.Network.None()
	if proxy {
		sup.ProxyPort = guest.ProxyPort
	}
	var files []*os.File
	defer func() { guest.CloseAll(files) }()
	addFile := func(f *os.File) int { files = append(files, f); return len(files) - 1 }
	root := os.Geteuid() == 0
	idm := &idmapper{initPid: s.cmd.Process.Pid, hostUID: s.hostUID, hostGID: s.hostGID}
	defer idm.close()
	// source describes a host path for the init: as root, a detached
	// (idmapped when asked) mount, because the agent's host uid may not even
	// traverse the path; otherwise the path itself, bound by the init.
	source := func(src, target string, ro, idmap bool) (guest.MountConfig, error) {
		st, err := os.Stat(src)
		if err != nil {
			return guest.MountConfig{}, fmt.Errorf("local sandbox: mount source: %w", err)
		}
		mc := guest.MountConfig{Source: src, Target: target, ReadOnly: ro, IsDir: st.IsDir(), FD: -1}
		if !root {
			return mc, nil
		}
		f, err := idm.mount(src, st, ro, idmap)
		if err != nil {
			return guest.MountConfig{}, fmt.Errorf("local sandbox: mount %s: %w", src, err)
		}
		mc.FD = addFile(f)
		return mc, nil
	}
	cfg := &guest.InitConfig{ID: s.id, Proxy: proxy, SandboxBytes: l.WorkspaceBytes, TmpBytes: l.TmpBytes, Home: len(home)}
	var err error
	if cfg.Exe, err = source(s.backend.exe, sandbox.BinaryPath, true, false); err != nil {
		return nil, err
	}
	for _, m := range s.spec.Mounts {
		mc, err := source(m.Source, m.Target, m.ReadOnly, true)
		if err != nil {
			return nil, err
		}
		if m.ReadOnly {
			sup.RO = append(sup.RO, m.Target)
		} else {
			sup.RW = append(sup.RW, m.Target)
		}
		cfg.Mounts = append(cfg.Mounts, mc)
	}
	cfg.Super = sup
	err = send(s.initCtl, guest.Message{Op: "config", Config: cfg}, append(files, home...)...)
	if err != nil {
		return nil, fmt.Errorf("local sandbox: configure init: %w", err)
	}
	return cfg, nil
}

// await returns the next message on c, which must be "ready".
func (s *session) await(ctx context.Context, c *net.UnixConn, who string) ([]*os.File, error) {
	type result struct {
		m     guest.Message
		files []*os.File
		err   error
	}
	ch := make(chan result, 1)
	go func() {
		m, f, err := recv(c)
		ch <- result{m, f, err}
	}()
	var r result
	select {
	case r = <-ch:
	case <-ctx.Done():
		return nil, fmt.Errorf("local sandbox: provision: %w", ctx.Err())
	}
	if r.err != nil || r.m.Op != "ready" {
		guest.CloseAll(r.files)
		msg := r.m.Err
		if r.err != nil {
			msg = r.err.Error()
		}
		if e := strings.TrimSpace(s.initStderr.String()); e != "" {
			msg += ": " + e
		}
		return nil, fmt.Errorf("local sandbox: %s: %s", who, msg)
	}
	return r.files, nil
}

// awaitInit waits for the init's "ready" and, with network access, starts
// the egress proxy on the listening socket that comes with it.
func (s *session) awaitInit(ctx context.Context, proxy bool) error {
	files, err := s.await(ctx, s.initCtl, "init")
	if err != nil {
		return err
	}
	if !proxy {
		guest.CloseAll(files)
		return nil
	}
	if len(files) != 1 {
		guest.CloseAll(files)
		return fmt.Errorf("local sandbox: init sent no proxy endpoint")
	}
	ln, err := net.FileListener(files[0])
	files[0].Close()
	if err != nil {
		return fmt.Errorf("local sandbox: proxy endpoint: %w", err)
	}
	p, err := egress.New(egress.Config{
		Allow: s.spec.Network.Allow, Services: s.spec.Network.Services,
		AllowedPrivateNetworks: s.backend.opts.AllowedPrivateNetworks,
		Resolver:               s.backend.opts.Resolver, Log: s.spec.Network.Log,
		Secrets: s.spec.Network.Secrets,
	})
	if err != nil {
		ln.Close()
		return err
	}
	s.proxy = p
	go p.Serve(ln)
	return nil
}

// dispatch routes supervisor replies to their waiters.
func (s *session) dispatch() {
	for {
		m, files, err := recv(s.super)
		guest.CloseAll(files)
		if err != nil {
			s.mu.Lock()
			s.dead = fmt.Errorf("local sandbox %s: supervisor gone", s.id)
			if s.killedBy != nil {
				s.dead = s.killedBy
			}
			for id, ch := range s.waiters {
				close(ch)
				delete(s.waiters, id)
			}
			s.mu.Unlock()
			return
		}
		s.mu.Lock()
		ch := s.waiters[m.ID]
		delete(s.waiters, m.ID)
		s.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

// request sends m with files and returns the channel of its reply.
func (s *session) request(m guest.Message, files ...*os.File) (uint64, chan guest.Message, error) {
	ch := make(chan guest.Message, 1)
	s.mu.Lock()
	if s.dead != nil {
		s.mu.Unlock()
		return 0, nil, s.dead
	}
	s.nextID++
	id := s.nextID
	s.waiters[id] = ch
	s.mu.Unlock()
	m.ID = id
	s.wmu.Lock()
	err := send(s.super, m, files...)
	s.wmu.Unlock()
	if err != nil {
		s.mu.Lock()
		delete(s.waiters, id)
		s.mu.Unlock()
		return 0, nil, fmt.Errorf("local sandbox %s: %w", s.id, err)
	}
	return id, ch, nil
}

// notify sends a guest.Message that gets no reply.
func (s *session) notify(m guest.Message) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	send(s.super, m)
}

func (s *session) env(extra map[string]string) []string {
	base := map[string]string{
		"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
		"HOME": sandbox.Root, "USER": "sandbox", "LOGNAME": "sandbox", "SHELL": "/bin/sh",
		"TMPDIR": "/tmp", "LANG": "C.UTF-8",
	}
	if !s.spec.Network.None() {
		for k, v := range sandbox.ProxyEnv(guest.ProxyPort) {
			base[k] = v
		}
	}
	for _, kv := range guest.RaceEnv() {
		base["GORACE"] = kv[len("GORACE="):]
	}
	for k, v := range s.spec.Env {
		base[k] = v
	}
	return sandbox.MergeEnv(base, extra)
}

// Exec implements sandbox.Session.
func (s *session) Exec(ctx context.Context, r sandbox.ExecRequest) (sandbox.ExecResult, error) {
	if len(r.Args) == 0 {
		return sandbox.ExecResult{}, fmt.Errorf("local sandbox %s: exec: no command", s.id)
	}
	for k := range r.Env {
		if err := sandbox.CheckEnvName(k); err != nil {
			return sandbox.ExecResult{}, err
		}
	}
	cwd := r.Cwd
	if cwd == "" {
		cwd = s.spec.WorkDir
	} else if err := sandbox.CheckPath(cwd); err != nil {
		return sandbox.ExecResult{}, err
	}
	timeout := r.Timeout
	if timeout == 0 {
		timeout = s.spec.Limits.WallTime
	}
	if err := s.killedErr(); err != nil {
		return sandbox.ExecResult{}, err
	}
	eg, err := s.cg.newExec()
	if err != nil {
		return sandbox.ExecResult{}, fmt.Errorf("local sandbox %s: exec %s: %w", s.id, r.Args[0], err)
	}
	defer eg.remove()
	go s.prime()
	p, err := stdioPipes()
	if err != nil {
		return sandbox.ExecResult{}, err
	}
	inR, inW, outR, outW, errR, errW := p[0], p[1], p[2], p[3], p[4], p[5]
	id, ch, err := s.request(guest.Message{Op: "exec", Args: r.Args, Env: s.env(r.Env), Cwd: cwd, TimeoutNS: int64(timeout)}, append([]*os.File{inR, outW, errW}, eg.procs...)...)
	guest.CloseAll([]*os.File{inR, outW, errW})
	eg.closeFiles()
	if err != nil {
		guest.CloseAll([]*os.File{inW, outR, errR})
		return sandbox.ExecResult{}, err
	}
	go func() {
		if len(r.Stdin) > 0 {
			inW.Write(r.Stdin)
		} else if r.StdinReader != nil {
			io.Copy(inW, r.StdinReader)
		}
		inW.Close()
	}()
	// stdout and stderr share the output budget; past it the command dies.
	budget := capture.New(s.limits.OutputBytes, func() { s.notify(guest.Message{Op: "kill", ID: id}) })
	var stdout, stderr bytes.Buffer
	var wg sync.WaitGroup
	copyOut := func(w io.Writer, src *os.File) {
		defer wg.Done()
		io.Copy(w, src)
		src.Close() // past the budget: the writer gets EPIPE until it dies
	}
	wg.Add(2)
	go copyOut(budget.Writer(&stdout, r.Stdout), outR)
	go copyOut(budget.Writer(&stderr, r.Stderr), errR)

	var m guest.Message
	var ok bool
	select {
	case m, ok = <-ch:
	case <-ctx.Done():
		s.notify(guest.Message{Op: "kill", ID: id})
		select {
		case m, ok = <-ch:
		case <-time.After(5 * time.Second):
		}
	}
	// Every process of the exec is gone with its pid namespace, so the
	// pipes are closed; bound the wait anyway.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		outR.Close()
		errR.Close()
		<-done
	}
	res := sandbox.ExecResult{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: m.Exit, TimedOut: m.TimedOut, OOMKilled: eg.oomKills() > 0}
	what := "exec " + r.Args[0]
	switch {
	case ctx.Err() != nil:
		return res, fmt.Errorf("local sandbox %s: %s: %w", s.id, what, ctx.Err())
	case !ok:
		return res, s.diedErr(what)
	case budget.Exceeded():
		return res, fmt.Errorf("local sandbox %s: %w", s.id, sandbox.OutputLimitError(what, s.limits.OutputBytes))
	case m.Err != "":
		return res, fmt.Errorf("local sandbox %s: %s: %s", s.id, what, m.Err)
	}
	return res, nil
}

// stdioPipes returns three pipes (read end, write end): stdin, stdout, stderr.
func stdioPipes() ([]*os.File, error) {
	var p []*os.File
	for i := 0; i < 3; i++ {
		r, w, err := os.Pipe()
		if err != nil {
			guest.CloseAll(p)
			return nil, err
		}
		p = append(p, r, w)
	}
	return p, nil
}

// killedErr is the reason the backend ended the session, if it did.
func (s *session) killedErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.killedBy
}

// diedErr explains a lost supervisor during what.
func (s *session) diedErr(what string) error {
	if err := s.killedErr(); err != nil {
		return err
	}
	return fmt.Errorf("local sandbox %s: %s: sandbox died", s.id, what)
}

// Upload implements sandbox.Session: the tree is extracted inside the
// sandbox by an archive helper with the agent's permissions and rules.
func (s *session) Upload(ctx context.Context, hostPath, sandboxPath string) error {
	pw, ch, err := s.pipeRequest("untar", sandboxPath, true)
	if err != nil {
		return err
	}
	werr := archive.Write(pw, hostPath)
	pw.Close()
	m, ok := waitReply(ctx, ch)
	switch {
	case werr != nil:
		return fmt.Errorf("local sandbox %s: upload %s: %w", s.id, hostPath, werr)
	case !ok:
		return s.diedErr("upload " + hostPath)
	case m.Err != "":
		return fmt.Errorf("local sandbox %s: upload to %s: %s", s.id, sandboxPath, m.Err)
	}
	return ctx.Err()
}

// Download implements sandbox.Session: the tree is written inside the
// sandbox by an archive helper with the agent's permissions and extracted
// on the host into a staging directory, bounded by Limits.OutputBytes and
// Limits.OutputFiles.
func (s *session) Download(ctx context.Context, sandboxPath, hostPath string) error {
	pr, ch, err := s.pipeRequest("tar", sandboxPath, false)
	if err != nil {
		return err
	}
	xerr := archive.ExtractStaged(pr, hostPath, s.limits.OutputBytes, s.limits.OutputFiles)
	pr.Close() // a refused stream stops the writer (EPIPE)
	m, ok := waitReply(ctx, ch)
	what := "download " + sandboxPath
	switch {
	case errors.Is(xerr, archive.ErrTooLarge):
		return fmt.Errorf("local sandbox %s: %w", s.id, sandbox.OutputLimitError(what, s.limits.OutputBytes))
	case errors.Is(xerr, archive.ErrTooMany):
		return fmt.Errorf("local sandbox %s: %w", s.id, sandbox.OutputFilesLimitError(what, s.limits.OutputFiles))
	case !ok:
		return s.diedErr(what)
	case m.Err != "":
		return fmt.Errorf("local sandbox %s: %s: %s", s.id, what, m.Err)
	case xerr != nil:
		return fmt.Errorf("local sandbox %s: %s: %w", s.id, what, xerr)
	}
	return ctx.Err()
}

// pipeRequest asks the supervisor for op on sandboxPath (checked first)
// with one end of a new pipe, the read end when guestReads, and returns
// the other end and the reply channel.
func (s *session) pipeRequest(op, sandboxPath string, guestReads bool) (*os.File, chan guest.Message, error) {
	if err := sandbox.CheckPath(sandboxPath); err != nil {
		return nil, nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	theirs, ours := pw, pr
	if guestReads {
		theirs, ours = pr, pw
	}
	_, ch, err := s.request(guest.Message{Op: op, Path: sandboxPath}, theirs)
	theirs.Close()
	if err != nil {
		ours.Close()
		return nil, nil, err
	}
	return ours, ch, nil
}

func waitReply(ctx context.Context, ch chan guest.Message) (guest.Message, bool) {
	select {
	case m, ok := <-ch:
		return m, ok
	case <-ctx.Done():
		return guest.Message{Err: ctx.Err().Error()}, true
	}
}

// Terminate implements sandbox.Session.
func (s *session) Terminate(ctx context.Context) error {
	s.termOnce.Do(func() {
		var errs []error
		if s.stopWatch != nil {
			s.stopWatch()
		}
		if s.cmd != nil && s.cmd.Process != nil {
			s.cmd.Process.Kill()
			s.reapMu.Lock()
			s.reaped = true
			s.reapMu.Unlock()
			s.cmd.Wait()
		}
		if s.initCtl != nil {
			s.initCtl.Close()
		}
		if s.super != nil {
			s.super.Close()
		}
		if s.proxy != nil {
			s.proxy.Close()
		}
		if s.cmd != nil && s.cmd.Process != nil {
			// The pid namespace is gone with its init, but its last tasks
			// may still be exiting: wait until the cgroups are empty.
			if err := s.cg.remove(); err != nil {
				errs = append(errs, err)
			}
		} else if s.cg != nil {
			s.cg.remove()
		}
		if len(errs) > 0 {
			s.termErr = fmt.Errorf("local sandbox %s: terminate: %w", s.id, errors.Join(errs...))
		}
	})
	return s.termErr
}

// UpdateNetwork implements sandbox.NetworkUpdater: it replaces the egress
// allowlist and services of a session provisioned with network access (the
// proxy endpoint exists only then). Connections already open are kept.
func (s *session) UpdateNetwork(ctx context.Context, n sandbox.Network) error {
	return egress.UpdateSession(s.proxy, "local sandbox "+s.id, n, s.backend.opts.AllowedPrivateNetworks)
}

var _ sandbox.NetworkUpdater = (*session)(nil)
