//go:build linux

package docker

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/egress"
	"github.com/fullsend-ai/fullsend/internal/sandbox/internal/capture"
	"github.com/fullsend-ai/fullsend/internal/sandbox/internal/execops"
	"github.com/fullsend-ai/fullsend/internal/sandbox/internal/watch"
	"github.com/fullsend-ai/fullsend/internal/sandbox/local/guest"
)

// Name of the backend.
const Name = "docker"

const proxyDir = "/run/fullsend-proxy"

// Backend is the docker backend.
type Backend struct {
	opts sandbox.Options
	cli  *client.Client
	exe  string
}

// New connects to the engine (Options.DockerHost, else $DOCKER_HOST, else
// the default socket) and checks it answers.
func New(o sandbox.Options) (*Backend, error) {
	opts := []client.Opt{client.FromEnv}
	if o.DockerHost != "" {
		opts = append(opts, client.WithHost(o.DockerHost))
	}
	cli, err := client.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("docker sandbox: %w: %v", sandbox.ErrUnavailable, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		cli.Close()
		return nil, fmt.Errorf("docker sandbox: %w: engine not reachable: %v", sandbox.ErrUnavailable, err)
	}
	exe := o.Binary
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("docker sandbox: locate own binary: %w", err)
		}
	}
	return &Backend{opts: o, cli: cli, exe: exe}, nil
}

// Name implements sandbox.Backend.
func (b *Backend) Name() string { return Name }

// Capabilities implements sandbox.Backend.
func (b *Backend) Capabilities() sandbox.Capabilities {
	iso := "container"
	if b.opts.OCIRuntime != "" {
		iso += " (" + b.opts.OCIRuntime + ")"
	}
	full := func(how string) sandbox.LimitEnforcement {
		return sandbox.LimitEnforcement{Level: sandbox.Enforced, How: how}
	}
	return sandbox.Capabilities{Isolation: iso, NetworkAllowlist: true, MemoryLimit: true, PidsLimit: true, CPULimit: true, Seccomp: true, UpdateNetwork: true, Snapshot: true, HostMounts: true, HostServices: true,
		Limits: sandbox.LimitSupport{
			Memory:    full("container memory limit, swap included (OOM kills reported)"),
			Pids:      full(fmt.Sprintf("container pids limit (Pids + %d for the container's own processes)", PidsReserve)),
			CPU:       full("container CPU quota"),
			Tmp:       full("tmpfs size"),
			Workspace: full("/sandbox is a tmpfs of that size (ENOSPC); read-write host mounts: RLIMIT_FSIZE per file and a usage watch that ends the session"),
			Output:    full("host side: downloads staged and refused past it, exec output capped and the command killed"),
		},
		Notes: []string{"seccomp: the engine's profile plus fullsend's (socket families, denied system calls) stacked on every command", "landlock: not applied",
			"process tree: each exec is one session (setsid refused), killed whole when the exec ends"}}
}

// PidsReserve is added to Limits.Pids for the container's own processes
// (docker-init, the keep-alive shell and its sleep, the proxy forwarder,
// the confine wrapper while it starts).
const PidsReserve = 8

// keepAliveUID picks the uid:gid of the container's own processes
// (docker-init, the keep-alive shell, the proxy forwarder): never the exec
// user, so commands cannot signal them.
func keepAliveUID(execUID int) int {
	if execUID == 65534 {
		return 65533
	}
	return 65534
}

var digestRef = regexp.MustCompile(`^([a-z0-9][a-z0-9._/:-]*@)?sha256:[0-9a-f]{64}$`)

// CheckImage accepts digest-pinned references; tags only when allowTags.
func CheckImage(img string, allowTags bool) error {
	if img == "" {
		return fmt.Errorf("docker sandbox: no image: set sandbox.docker.image in config.yaml to a digest-pinned image (name@sha256:…), or image: in the harness")
	}
	if digestRef.MatchString(img) || allowTags {
		return nil
	}
	return fmt.Errorf("docker sandbox: image %q: must be pinned by digest (name@sha256:…)", img)
}

func randomID() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

type session struct {
	b       *Backend
	id      string
	spec    sandbox.Spec
	limits  sandbox.Limits // spec.Limits with defaults
	cid     string
	user    string // exec user uid:gid
	own     string // uid:gid of the container's own processes
	initPid int    // host pid of the container's init (0 = not visible)
	proxy   *egress.Proxy
	forward *client.HijackedResponse
	sockDir string

	termOnce  sync.Once
	termErr   error
	mu        sync.Mutex
	dead      bool
	killedBy  error
	stopWatch func()
}

// Provision implements sandbox.Backend.
func (b *Backend) Provision(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	spec, err := sandbox.Check(spec)
	if err != nil {
		return nil, err
	}
	img := spec.Image
	if img == "" {
		img = b.opts.Image
	}
	if err := CheckImage(img, b.opts.AllowTags); err != nil {
		return nil, err
	}
	if _, err := b.cli.ImageInspect(ctx, img); err != nil {
		return nil, fmt.Errorf("docker sandbox: image %s: %w (images are not pulled: docker pull it first)", img, err)
	}
	own := keepAliveUID(os.Getuid())
	s := &session{b: b, id: randomID(), spec: spec, limits: spec.Limits.Resolved(),
		user: fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()), own: fmt.Sprintf("%d:%d", own, own)}
	if err := s.start(ctx, img); err != nil {
		s.Terminate(context.Background())
		return nil, err
	}
	return s, nil
}

func (s *session) start(ctx context.Context, img string) error {
	mounts := []mount.Mount{
		{Type: mount.TypeBind, Source: s.b.exe, Target: sandbox.BinaryPath, ReadOnly: true},
	}
	for _, m := range s.spec.Mounts {
		mounts = append(mounts, mount.Mount{Type: mount.TypeBind, Source: m.Source, Target: m.Target, ReadOnly: m.ReadOnly})
	}
	proxy := !s.spec.Network.None()
	if proxy {
		m, err := s.startProxy()
		if err != nil {
			return err
		}
		mounts = append(mounts, m)
	}
	cfg, hc := s.containerConfig(img, mounts)
	created, err := s.b.cli.ContainerCreate(ctx, client.ContainerCreateOptions{Config: cfg, HostConfig: hc, Name: "fullsend-" + s.id})
	if err != nil {
		return fmt.Errorf("docker sandbox: create: %w", err)
	}
	s.cid = created.ID
	if _, err := s.b.cli.ContainerStart(ctx, s.cid, client.ContainerStartOptions{}); err != nil {
		return fmt.Errorf("docker sandbox: start: %w", err)
	}
	if in, err := s.b.cli.ContainerInspect(ctx, s.cid, client.ContainerInspectOptions{}); err == nil && in.Container.State != nil {
		s.initPid = in.Container.State.Pid
	}
	// Every command runs through the fullsend binary (the confine role):
	// check once that it runs in this image.
	var out bytes.Buffer
	code, _, err := s.exec(ctx, []string{sandbox.BinaryPath, "", "0"}, []string{guest.EnvRole + "=confine"}, s.user, "/", 0, nil, &out, &out, "")
	if err == nil && code != 0 {
		err = fmt.Errorf("exit %d: %s", code, strings.TrimSpace(out.String()))
	}
	if err != nil {
		return fmt.Errorf("docker sandbox: %s does not run in image %s (it must be a static build): %w", sandbox.BinaryPath, img, err)
	}
	if proxy {
		if err := s.startForwarder(ctx); err != nil {
			return err
		}
	}
	s.watchMounts()
	return nil
}

// startProxy serves the session's egress proxy on a unix socket in a
// fresh short directory, returned as the mount that brings it into the
// container.
func (s *session) startProxy() (mount.Mount, error) {
	// A unix socket path must stay under 108 bytes: use a short dir.
	pdir, err := os.MkdirTemp("", "fsx-"+s.id)
	if err != nil {
		return mount.Mount{}, err
	}
	s.sockDir = pdir
	os.Chmod(pdir, 0o755)
	ln, err := net.Listen("unix", filepath.Join(pdir, "proxy.sock"))
	if err != nil {
		return mount.Mount{}, fmt.Errorf("docker sandbox: proxy socket: %w", err)
	}
	os.Chmod(filepath.Join(pdir, "proxy.sock"), 0o666)
	s.proxy, err = egress.New(egress.Config{
		Allow: s.spec.Network.Allow, Services: s.spec.Network.Services,
		AllowedPrivateNetworks: s.b.opts.AllowedPrivateNetworks, Resolver: s.b.opts.Resolver, Log: s.spec.Network.Log,
		Secrets: s.spec.Network.Secrets,
	})
	if err != nil {
		ln.Close()
		return mount.Mount{}, err
	}
	go s.proxy.Serve(ln)
	return mount.Mount{Type: mount.TypeBind, Source: pdir, Target: proxyDir, ReadOnly: true}, nil
}

// containerConfig is the session's container: no network, no
// capabilities, a read-only root with size-limited tmpfs mounts, the
// spec's limits, and a shell that only waits.
func (s *session) containerConfig(img string, mounts []mount.Mount) (*container.Config, *container.HostConfig) {
	labels := map[string]string{"fullsend.session": s.id}
	for k, v := range s.spec.Labels {
		labels[k] = v
	}
	l := s.limits
	pids := int64(l.Pids + PidsReserve)
	res := container.Resources{NanoCPUs: int64(l.CPUs * 1e9), Memory: l.MemoryBytes, MemorySwap: l.MemoryBytes, PidsLimit: &pids}
	yes := true
	hc := &container.HostConfig{
		Mounts:         mounts,
		NetworkMode:    "none",
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges"},
		ReadonlyRootfs: true,
		// Both in memory and size-limited: ENOSPC inside, nothing on the
		// host's disks. /sandbox belongs to the exec user.
		Tmpfs: map[string]string{
			"/tmp":       fmt.Sprintf("rw,nosuid,nodev,mode=1777,size=%d", l.TmpBytes),
			sandbox.Root: fmt.Sprintf("rw,nosuid,nodev,mode=0755,size=%d,uid=%d,gid=%d", l.WorkspaceBytes, os.Getuid(), os.Getgid()),
			execDir:      fmt.Sprintf("rw,nosuid,nodev,noexec,mode=0700,size=64k,uid=%d,gid=%d", os.Getuid(), os.Getgid()),
		},
		Resources: res,
		Runtime:   s.b.opts.OCIRuntime,
		Init:      &yes,
	}
	cfg := &container.Config{
		Image:      img,
		User:       s.own,
		Cmd:        []string{"/bin/sh", "-c", "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait; done"},
		Labels:     labels,
		WorkingDir: "/",
		Hostname:   "sandbox",
	}
	return cfg, hc
}

// watchMounts ends the session (kills the container) when its read-write
// mounts grow past workspace_size.
func (s *session) watchMounts() {
	l := s.limits
	var rw []string
	for _, m := range s.spec.Mounts {
		if !m.ReadOnly {
			rw = append(rw, m.Source)
		}
	}
	s.stopWatch = watch.Start(rw, l.WorkspaceBytes, func(grown int64) {
		s.mu.Lock()
		s.killedBy = fmt.Errorf("docker sandbox %s: read-write mounts grew by %d bytes, more than workspace_size (%s): session ended: %w",
			s.id, grown, sandbox.FormatBytes(l.WorkspaceBytes), sandbox.ErrWorkspaceLimit)
		s.mu.Unlock()
		kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.b.cli.ContainerKill(kctx, s.cid, client.ContainerKillOptions{Signal: "KILL"})
	})
}

// startForwarder runs "fullsend" in forwarder mode inside the container
// and waits until it listens.
func (s *session) startForwarder(ctx context.Context) error {
	ex, err := s.b.cli.ExecCreate(ctx, s.cid, client.ExecCreateOptions{
		User: s.own, AttachStdout: true, AttachStderr: true,
		Env: []string{EnvForward + "=" + proxyDir + "/proxy.sock"},
		Cmd: []string{sandbox.BinaryPath, "fullsend-sandbox-forward"},
	})
	if err != nil {
		return fmt.Errorf("docker sandbox: proxy forwarder: %w", err)
	}
	att, err := s.b.cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return fmt.Errorf("docker sandbox: proxy forwarder: %w", err)
	}
	s.forward = &att.HijackedResponse
	line := make(chan string, 1)
	go func() {
		var out bytes.Buffer
		stdcopy.StdCopy(&lineWriter{buf: &out, ch: line}, &out, att.Reader)
		select {
		case line <- "exited: " + out.String():
		default:
		}
	}()
	select {
	case l := <-line:
		if !strings.HasPrefix(l, "listening") {
			return fmt.Errorf("docker sandbox: proxy forwarder (is %s runnable in the image?): %s", sandbox.BinaryPath, strings.TrimSpace(l))
		}
	case <-time.After(10 * time.Second):
		return fmt.Errorf("docker sandbox: proxy forwarder did not start")
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

type lineWriter struct {
	buf *bytes.Buffer
	ch  chan string
	mu  sync.Mutex
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if i := bytes.IndexByte(w.buf.Bytes(), '\n'); i >= 0 {
		select {
		case w.ch <- w.buf.String()[:i]:
		default:
		}
	}
	return len(p), nil
}

func (s *session) ID() string { return s.id }

func (s *session) env(extra map[string]string) []string {
	base := map[string]string{
		"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
		"HOME": sandbox.Root, "TMPDIR": "/tmp", "LANG": "C.UTF-8",
	}
	if !s.spec.Network.None() {
		for k, v := range sandbox.ProxyEnv(ProxyPort) {
			base[k] = v
		}
	}
	for k, v := range s.spec.Env {
		base[k] = v
	}
	return sandbox.MergeEnv(base, extra)
}

// execDir holds one empty file per exec, named "TOKEN.PID" after the exec's
// session leader, for the in-container kill fallback. It is a tmpfs of its
// own so that an agent filling /tmp cannot stop commands from starting.
const execDir = "/run/fullsend-exec"

// killScript is execops.KillSessionScript: the in-container fallback of
// killTree (docker exec makes each exec a session leader).
const killScript = execops.KillSessionScript

// killHostSession kills, from the host, every process of container cid whose
// session id is sid (the host pid of the exec's first process). It reports
// false when the container's processes are not visible here (remote engine)
// or cannot be signalled, so the caller falls back to killing from inside.
func killHostSession(cid string, sid int) bool {
	if sid <= 0 {
		return false
	}
	for pass := 0; pass < 100; pass++ {
		seen, found := false, false
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			p, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			cg, err := os.ReadFile("/proc/" + e.Name() + "/cgroup")
			if err != nil || !bytes.Contains(cg, []byte(cid)) {
				continue
			}
			seen = true
			b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
			if err != nil || sessionOf(b) != sid {
				continue
			}
			if err := syscall.Kill(p, syscall.SIGKILL); err != nil {
				return false
			}
			found = true
		}
		if !seen {
			return false
		}
		if !found {
			return true
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// sessionOf returns the session id of a live process from its stat line.
func sessionOf(stat []byte) int {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 5 || f[0] == "Z" || f[0] == "X" {
		return -1
	}
	n, _ := strconv.Atoi(f[3])
	return n
}

func (s *session) killTree(execID, pidFile string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if in, err := s.b.cli.ExecInspect(ctx, execID, client.ExecInspectOptions{}); err == nil && killHostSession(s.cid, in.PID) {
		return
	}
	ex, err := s.b.cli.ExecCreate(ctx, s.cid, client.ExecCreateOptions{User: s.user, Cmd: []string{"/bin/sh", "-c", killScript, "kill", pidFile}})
	if err != nil {
		return
	}
	att, err := s.b.cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return
	}
	io.Copy(io.Discard, att.Reader)
	att.Close()
}

// Exec implements sandbox.Session.
func (s *session) Exec(ctx context.Context, r sandbox.ExecRequest) (sandbox.ExecResult, error) {
	return s.ops().Exec(ctx, r)
}

// ops is the session's view for package execops: commands go through run
// and an Exec reports the container's OOM kills.
func (s *session) ops() execops.Ops {
	return execops.Ops{Name: "docker sandbox " + s.id, Run: s.run, Limits: s.limits, OOMKills: s.oomKills, Extract: extractCmd}
}

// extractCmd extracts an upload's tar stream under parent.
func extractCmd(parent, _ string) []string {
	return []string{"sh", "-c", `mkdir -p "$1" && tar -x -f - -C "$1"`, "upload", parent}
}

// oomKills counts the OOM kills of the container's memory cgroup, read
// from the host's cgroup file system when the engine runs here (the
// container's init is visible in /proc), else from the engine's sticky
// per-container flag (0 or 1).
func (s *session) oomKills() int64 {
	if s.initPid > 0 {
		if n, ok := hostOOMKills(s.initPid); ok {
			return n
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in, err := s.b.cli.ContainerInspect(ctx, s.cid, client.ContainerInspectOptions{})
	if err == nil && in.Container.State != nil && in.Container.State.OOMKilled {
		return 1
	}
	return 0
}

// hostOOMKills reads the oom_kill counter of pid's memory cgroup.
func hostOOMKills(pid int) (int64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.SplitN(l, ":", 3)
		if len(f) != 3 {
			continue
		}
		var file string
		switch {
		case f[0] == "0" && f[1] == "":
			file = filepath.Join("/sys/fs/cgroup", f[2], "memory.events")
		case strings.Contains(","+f[1]+",", ",memory,"):
			file = filepath.Join("/sys/fs/cgroup/memory", f[2], "memory.oom_control")
		default:
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(kv, "oom_kill "); ok {
				n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				return n, err == nil
			}
		}
	}
	return 0, false
}

// run executes args in the container through the confine role (seccomp
// filter, RLIMIT_FSIZE, pid file for killing the tree).
func (s *session) run(ctx context.Context, args []string, env map[string]string, cwd string, timeout time.Duration, stdin io.Reader, stdout, stderr io.Writer) (int, bool, error) {
	s.mu.Lock()
	dead, killed := s.dead, s.killedBy
	s.mu.Unlock()
	if killed != nil {
		return 0, false, killed
	}
	if dead {
		return 0, false, fmt.Errorf("docker sandbox %s: terminated", s.id)
	}
	if len(args) == 0 {
		return 0, false, fmt.Errorf("docker sandbox %s: exec: no command", s.id)
	}
	for k := range env {
		if err := sandbox.CheckEnvName(k); err != nil {
			return 0, false, err
		}
	}
	if cwd == "" {
		cwd = s.spec.WorkDir
	} else if err := sandbox.CheckPath(cwd); err != nil {
		return 0, false, err
	}
	pidFile := execDir + "/" + randomID()
	cmd := append([]string{sandbox.BinaryPath, pidFile, strconv.FormatInt(s.limits.WorkspaceBytes, 10)}, args...)
	code, timedOut, err := s.exec(ctx, cmd, append(s.env(env), guest.EnvRole+"=confine"), s.user, cwd, timeout, stdin, stdout, stderr, pidFile)
	if err != nil {
		s.mu.Lock()
		killed = s.killedBy
		s.mu.Unlock()
		if killed != nil {
			return code, timedOut, killed
		}
		if ctx.Err() == nil && !errors.Is(err, capture.ErrExceeded) {
			err = fmt.Errorf("docker sandbox %s: exec %s: %w", s.id, args[0], err)
		}
	}
	return code, timedOut, err
}

// exec runs cmd as user and waits for it. A timeout, a canceled ctx or an
// output writer that fails (the output budget) kills every process of the
// exec's session (pidFile names the session leader for the in-container
// fallback).
func (s *session) exec(ctx context.Context, cmd, env []string, user, cwd string, timeout time.Duration, stdin io.Reader, stdout, stderr io.Writer, pidFile string) (int, bool, error) {
	ex, err := s.b.cli.ExecCreate(ctx, s.cid, client.ExecCreateOptions{
		User: user, AttachStdin: true, AttachStdout: true, AttachStderr: true,
		Env: env, WorkingDir: cwd, Cmd: cmd,
	})
	if err != nil {
		return 0, false, err
	}
	att, err := s.b.cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return 0, false, err
	}
	defer att.Close()
	go func() {
		if stdin != nil {
			io.Copy(att.Conn, stdin)
		}
		att.CloseWrite()
	}()
	done := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(stdout, stderr, att.Reader)
		done <- err
	}()
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	timedOut := false
	var copyErr error
	select {
	case copyErr = <-done:
		if copyErr != nil {
			// An output writer refused more (or the stream broke): stop the command.
			s.killTree(ex.ID, pidFile)
		}
	case <-timer:
		timedOut = true
		s.killTree(ex.ID, pidFile)
	case <-ctx.Done():
		s.killTree(ex.ID, pidFile)
	}
	if timedOut || ctx.Err() != nil {
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			att.Close()
			<-done
		}
	}
	if ctx.Err() != nil {
		return -1, false, ctx.Err()
	}
	if timedOut {
		return -1, true, nil
	}
	// Whatever the command left in its session dies with it.
	s.killTree(ex.ID, pidFile)
	ictx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		in, err := s.b.cli.ExecInspect(ictx, ex.ID, client.ExecInspectOptions{})
		if err != nil {
			return -1, false, fmt.Errorf("exec inspect: %w", err)
		}
		if !in.Running {
			return in.ExitCode, false, copyErr
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Upload implements sandbox.Session: "tar -x" runs in the sandbox as the
// exec user, so the sandbox's permissions (read-only mounts) apply.
func (s *session) Upload(ctx context.Context, hostPath, sandboxPath string) error {
	return s.ops().Upload(ctx, hostPath, sandboxPath)
}

// Download implements sandbox.Session ("tar -c" in the sandbox; works for
// tmpfs paths that the engine's copy API cannot see). The stream is
// extracted into a staging directory beside hostPath, bounded by
// Limits.OutputBytes.
func (s *session) Download(ctx context.Context, sandboxPath, hostPath string) error {
	return s.ops().Download(ctx, sandboxPath, hostPath)
}

// Terminate implements sandbox.Session.
func (s *session) Terminate(ctx context.Context) error {
	s.termOnce.Do(func() {
		s.mu.Lock()
		s.dead = true
		s.mu.Unlock()
		var errs []error
		if s.cid != "" {
			if _, err := s.b.cli.ContainerRemove(context.Background(), s.cid, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
				errs = append(errs, err)
			}
		}
		if s.forward != nil {
			s.forward.Close()
		}
		if s.proxy != nil {
			s.proxy.Close()
		}
		if s.stopWatch != nil {
			s.stopWatch()
		}
		for _, d := range []string{s.sockDir} {
			if d == "" {
				continue
			}
			if err := os.RemoveAll(d); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			s.termErr = fmt.Errorf("docker sandbox %s: terminate: %w", s.id, errors.Join(errs...))
		}
	})
	return s.termErr
}

// UpdateNetwork implements sandbox.NetworkUpdater: it replaces the egress
// allowlist and services of a session provisioned with network access (the
// proxy endpoint exists only then). Connections already open are kept.
func (s *session) UpdateNetwork(ctx context.Context, n sandbox.Network) error {
	return egress.UpdateSession(s.proxy, "docker sandbox "+s.id, n, s.b.opts.AllowedPrivateNetworks)
}

var _ sandbox.NetworkUpdater = (*session)(nil)
