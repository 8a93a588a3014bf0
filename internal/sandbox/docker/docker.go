package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
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
	"github.com/fullsend-ai/fullsend/internal/sandbox/internal/archive"
)

// Name of the backend.
const Name = "docker"

// ProxyPort is the in-container loopback port of the proxy forwarder.
const ProxyPort = 3128

const proxyDir = "/run/fullsend-proxy"

func init() {
	sandbox.Register(Name, func(o sandbox.Options) (sandbox.Backend, error) { return New(o) })
}

// Backend is the docker backend.
type Backend struct {
	opts sandbox.Options
	cli  *client.Client
	exe  string
}

// New connects to the engine (Options.DockerHost, else $DOCKER_HOST, else
// the default socket) and checks it answers.
func New(o sandbox.Options) (*Backend, error) {
	opts := []client.Opt{client.FromEnv, client.WithAPIVersionNegotiation()}
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
	return sandbox.Capabilities{Isolation: iso, NetworkAllowlist: true, MemoryLimit: true, PidsLimit: true, CPULimit: true, Seccomp: true, UpdateNetwork: true,
		Notes: []string{"seccomp: the engine's default profile", "landlock: not applied"}}
}

var digestRef = regexp.MustCompile(`^([a-z0-9][a-z0-9._/:-]*@)?sha256:[0-9a-f]{64}$`)

// CheckImage accepts digest-pinned references; tags only when allowTags.
func CheckImage(img string, allowTags bool) error {
	if img == "" {
		return fmt.Errorf("docker sandbox: no image (spec image, config sandbox.docker.image or --image)")
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
	cid     string
	dir     string
	user    string
	proxy   *egress.Proxy
	forward *client.HijackedResponse
	sockDir string

	termOnce sync.Once
	termErr  error
	mu       sync.Mutex
	dead     bool
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
	s := &session{b: b, id: randomID(), spec: spec, user: fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())}
	if err := s.start(ctx, img); err != nil {
		s.Terminate(context.Background())
		return nil, err
	}
	return s, nil
}

func (s *session) start(ctx context.Context, img string) error {
	var err error
	if s.dir, err = os.MkdirTemp(s.b.opts.TempDir, "fullsend-docker-"+s.id+"-"); err != nil {
		return fmt.Errorf("docker sandbox: %w", err)
	}
	sbDir := filepath.Join(s.dir, "sandbox")
	if err := os.Mkdir(sbDir, 0o700); err != nil {
		return err
	}
	mounts := []mount.Mount{
		{Type: mount.TypeBind, Source: sbDir, Target: sandbox.Root},
		{Type: mount.TypeBind, Source: s.b.exe, Target: sandbox.BinaryPath, ReadOnly: true},
	}
	for _, m := range s.spec.Mounts {
		mounts = append(mounts, mount.Mount{Type: mount.TypeBind, Source: m.Source, Target: m.Target, ReadOnly: m.ReadOnly})
	}
	proxy := !s.spec.Network.None()
	var ln net.Listener
	if proxy {
		// A unix socket path must stay under 108 bytes: use a short dir.
		pdir, err := os.MkdirTemp("", "fsx-"+s.id)
		if err != nil {
			return err
		}
		s.sockDir = pdir
		os.Chmod(pdir, 0o755)
		if ln, err = net.Listen("unix", filepath.Join(pdir, "proxy.sock")); err != nil {
			return fmt.Errorf("docker sandbox: proxy socket: %w", err)
		}
		os.Chmod(filepath.Join(pdir, "proxy.sock"), 0o666)
		s.proxy, err = egress.New(egress.Config{
			Allow: s.spec.Network.Allow, Services: s.spec.Network.Services,
			AllowedPrivateNetworks: s.b.opts.AllowedPrivateNetworks, Resolver: s.b.opts.Resolver, Log: s.spec.Network.Log,
		})
		if err != nil {
			ln.Close()
			return err
		}
		go s.proxy.Serve(ln)
		mounts = append(mounts, mount.Mount{Type: mount.TypeBind, Source: pdir, Target: proxyDir, ReadOnly: true})
	}
	labels := map[string]string{"fullsend.session": s.id}
	for k, v := range s.spec.Labels {
		labels[k] = v
	}
	res := container.Resources{NanoCPUs: int64(s.spec.Limits.CPUs * 1e9)}
	if m := s.spec.Limits.MemoryBytes; m > 0 {
		res.Memory, res.MemorySwap = m, m
	}
	if p := s.spec.Limits.Pids; p > 0 {
		n := int64(p + 4) // the keep-alive shell, its sleep, docker-init, the forwarder
		res.PidsLimit = &n
	}
	yes := true
	hc := &container.HostConfig{
		Mounts:         mounts,
		NetworkMode:    "none",
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges"},
		ReadonlyRootfs: true,
		Tmpfs:          map[string]string{"/tmp": "rw,nosuid,nodev,mode=1777"},
		Resources:      res,
		Runtime:        s.b.opts.OCIRuntime,
		Init:           &yes,
	}
	cfg := &container.Config{
		Image:      img,
		Cmd:        []string{"/bin/sh", "-c", "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait; done"},
		Labels:     labels,
		WorkingDir: "/",
		Hostname:   "sandbox",
	}
	created, err := s.b.cli.ContainerCreate(ctx, client.ContainerCreateOptions{Config: cfg, HostConfig: hc, Name: "fullsend-" + s.id})
	if err != nil {
		return fmt.Errorf("docker sandbox: create: %w", err)
	}
	s.cid = created.ID
	if _, err := s.b.cli.ContainerStart(ctx, s.cid, client.ContainerStartOptions{}); err != nil {
		return fmt.Errorf("docker sandbox: start: %w", err)
	}
	if os.Getuid() == 0 {
		os.Chown(sbDir, os.Getuid(), os.Getgid())
	}
	if proxy {
		if err := s.startForwarder(ctx); err != nil {
			return err
		}
	}
	return nil
}

// startForwarder runs "fullsend" in forwarder mode inside the container
// and waits until it listens.
func (s *session) startForwarder(ctx context.Context) error {
	ex, err := s.b.cli.ExecCreate(ctx, s.cid, client.ExecCreateOptions{
		User: s.user, AttachStdout: true, AttachStderr: true,
		Env: []string{envForward + "=" + proxyDir + "/proxy.sock"},
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

// killScript kills every process of the session whose leader's pid is in
// the file $1 (docker exec makes each exec a session leader).
// It uses shell builtins only, so it works when the pids limit is reached.
const killScript = `read -r sid < "$1" 2>/dev/null || exit 0; [ -n "$sid" ] || exit 0
for pass in 1 2 3 4 5; do found=
  for p in /proc/[0-9]*; do
    read -r line < "$p/stat" 2>/dev/null || continue
    set -- ${line##*) }
    case "$1" in Z|X) continue;; esac
    [ "$4" = "$sid" ] && kill -9 "${p#/proc/}" 2>/dev/null && found=1
  done
  [ -z "$found" ] && break
done`

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
	ex, err := s.b.cli.ExecCreate(ctx, s.cid, client.ExecCreateOptions{User: "0:0", Cmd: []string{"/bin/sh", "-c", killScript, "kill", pidFile}})
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
	var stdout, stderr bytes.Buffer
	var ow, ew io.Writer = &stdout, &stderr
	if r.Stdout != nil {
		ow = io.MultiWriter(&stdout, r.Stdout)
	}
	if r.Stderr != nil {
		ew = io.MultiWriter(&stderr, r.Stderr)
	}
	var in io.Reader
	if len(r.Stdin) > 0 {
		in = bytes.NewReader(r.Stdin)
	} else if r.StdinReader != nil {
		in = r.StdinReader
	}
	timeout := r.Timeout
	if timeout == 0 {
		timeout = s.spec.Limits.WallTime
	}
	code, timedOut, err := s.run(ctx, r.Args, r.Env, r.Cwd, timeout, in, ow, ew)
	return sandbox.ExecResult{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: code, TimedOut: timedOut}, err
}

func (s *session) run(ctx context.Context, args []string, env map[string]string, cwd string, timeout time.Duration, stdin io.Reader, stdout, stderr io.Writer) (int, bool, error) {
	s.mu.Lock()
	dead := s.dead
	s.mu.Unlock()
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
	pidFile := "/tmp/.fullsend-exec-" + randomID()
	// The wrapper records its pid (= the exec's session id), then becomes the command.
	cmd := append([]string{"/bin/sh", "-c", `echo $$ > "$0"; exec "$@"`, pidFile}, args...)
	ex, err := s.b.cli.ExecCreate(ctx, s.cid, client.ExecCreateOptions{
		User: s.user, AttachStdin: true, AttachStdout: true, AttachStderr: true,
		Env: s.env(env), WorkingDir: cwd, Cmd: cmd,
	})
	if err != nil {
		return 0, false, fmt.Errorf("docker sandbox %s: exec: %w", s.id, err)
	}
	att, err := s.b.cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return 0, false, fmt.Errorf("docker sandbox %s: exec: %w", s.id, err)
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
		return -1, false, fmt.Errorf("docker sandbox %s: exec %s: %w", s.id, args[0], ctx.Err())
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
			return -1, false, fmt.Errorf("docker sandbox %s: exec inspect: %w", s.id, err)
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
	if err := sandbox.CheckPath(sandboxPath); err != nil {
		return err
	}
	sandboxPath = path.Clean(sandboxPath)
	parent, base := path.Split(sandboxPath)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(retar(pw, hostPath, base)) }()
	var stderr bytes.Buffer
	code, _, err := s.run(ctx, []string{"sh", "-c", `mkdir -p "$1" && tar -x -f - -C "$1"`, "upload", parent}, nil, "/", 0, pr, io.Discard, &stderr)
	pr.Close()
	if err == nil && code != 0 {
		err = fmt.Errorf("tar exit %d: %s", code, strings.TrimSpace(stderr.String()))
	}
	if err != nil {
		return fmt.Errorf("docker sandbox %s: upload to %s: %w", s.id, sandboxPath, err)
	}
	return nil
}

// retar writes hostPath as a tar whose root is named base.
func retar(w io.Writer, hostPath, base string) error {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(archive.Write(pw, hostPath)) }()
	tr := tar.NewReader(pr)
	tw := tar.NewWriter(w)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return tw.Close()
		}
		if err != nil {
			pr.CloseWithError(err)
			return err
		}
		name := strings.TrimPrefix(strings.TrimPrefix(h.Name, "."), "/")
		h.Name = base
		if name != "" {
			h.Name = base + "/" + name
		}
		if err := tw.WriteHeader(h); err != nil {
			pr.CloseWithError(err)
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			pr.CloseWithError(err)
			return err
		}
	}
}

// Download implements sandbox.Session ("tar -c" in the sandbox; works for
// tmpfs paths that the engine's copy API cannot see).
func (s *session) Download(ctx context.Context, sandboxPath, hostPath string) error {
	if err := sandbox.CheckPath(sandboxPath); err != nil {
		return err
	}
	sandboxPath = path.Clean(sandboxPath)
	parent, base := path.Split(sandboxPath)
	pr, pw := io.Pipe()
	xerr := make(chan error, 1)
	go func() {
		// Rename the root entry to "." for archive.Extract.
		tr := tar.NewReader(pr)
		tpr, tpw := io.Pipe()
		go func() {
			tw := tar.NewWriter(tpw)
			for {
				h, err := tr.Next()
				if err == io.EOF {
					tpw.CloseWithError(tw.Close())
					return
				}
				if err != nil {
					tpw.CloseWithError(err)
					return
				}
				n := strings.TrimPrefix(strings.TrimSuffix(h.Name, "/"), "./")
				if i := strings.IndexByte(n, '/'); i >= 0 {
					h.Name = "./" + n[i+1:]
				} else {
					h.Name = "."
				}
				if err := tw.WriteHeader(h); err != nil {
					tpw.CloseWithError(err)
					return
				}
				if _, err := io.Copy(tw, tr); err != nil {
					tpw.CloseWithError(err)
					return
				}
			}
		}()
		err := archive.Extract(tpr, hostPath, -1, -1)
		io.Copy(io.Discard, tpr)
		io.Copy(io.Discard, pr)
		xerr <- err
	}()
	var stderr bytes.Buffer
	code, _, err := s.run(ctx, []string{"tar", "-c", "-f", "-", "-C", parent, base}, nil, "/", 0, nil, pw, &stderr)
	pw.Close()
	xe := <-xerr
	switch {
	case err != nil:
	case code != 0:
		err = fmt.Errorf("tar exit %d: %s", code, strings.TrimSpace(stderr.String()))
	case xe != nil:
		err = xe
	}
	if err != nil {
		return fmt.Errorf("docker sandbox %s: download %s: %w", s.id, sandboxPath, err)
	}
	return nil
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
		for _, d := range []string{s.dir, s.sockDir} {
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
	if err := sandbox.CheckNetwork(n); err != nil {
		return err
	}
	if s.proxy == nil {
		if n.None() {
			return nil
		}
		return fmt.Errorf("%s %s: update network: session was provisioned without network access", "docker sandbox", s.id)
	}
	return s.proxy.Update(n.Allow, n.Services, s.b.opts.AllowedPrivateNetworks)
}

var _ sandbox.NetworkUpdater = (*session)(nil)
