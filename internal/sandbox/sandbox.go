package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sort"
	"sync"
	"time"
)

// Well-known paths inside every sandbox.
const (
	// Root is the read-write directory every sandbox has, backed by a host
	// temporary directory that Terminate removes.
	Root = "/sandbox"
	// BinaryPath is where the running fullsend binary is visible (read-only).
	BinaryPath = "/usr/local/bin/fullsend"
)

// Mount exposes a host path at an absolute sandbox path.
type Mount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"read_only"`
}

// Network is the egress policy. An empty Allow list means no network at all
// (an empty network namespace with loopback up). Otherwise every outbound
// connection goes through a host-side HTTP/CONNECT proxy that admits only the
// listed destinations.
type Network struct {
	// Allow lists "host" or "host:port" entries; "*.example.com" matches
	// subdomains only. A host without a port admits ports 80 and 443.
	Allow []string `json:"allow,omitempty"`
	// Services lists runner endpoints "IP:PORT" (loopback) reachable through
	// the proxy even though their address is internal.
	Services []string `json:"services,omitempty"`
	// Log receives one line per denied request ("deny HOST:PORT: reason").
	// May be nil.
	Log io.Writer `json:"-"`
}

// None reports whether the policy allows no egress at all.
func (n Network) None() bool { return len(n.Allow) == 0 && len(n.Services) == 0 }

// Limits bound what a session may consume. Zero means "backend default / no
// limit" for each field.
type Limits struct {
	WallTime    time.Duration `json:"wall_time,omitempty"`    // per exec, when ExecRequest.Timeout is zero
	MemoryBytes int64         `json:"memory_bytes,omitempty"` // whole session
	Pids        int           `json:"pids,omitempty"`         // whole session (tasks)
	CPUs        float64       `json:"cpus,omitempty"`         // CPU bandwidth, in cores
}

// Spec describes a sandbox to provision. Validate it with Check; backends
// call Check themselves.
type Spec struct {
	Mounts  []Mount           `json:"mounts,omitempty"`
	Network Network           `json:"network"`
	Limits  Limits            `json:"limits"`
	Env     map[string]string `json:"env,omitempty"`
	WorkDir string            `json:"work_dir,omitempty"` // default /sandbox
	Labels  map[string]string `json:"labels,omitempty"`
	// Image is the container image for image-based backends ("name@sha256:…").
	Image string `json:"image,omitempty"`
}

// Capabilities tell callers what a backend enforces, so they can degrade
// knowingly (or refuse).
type Capabilities struct {
	// Isolation names the mechanism ("namespaces+landlock+seccomp", "container", ...).
	Isolation string
	// NetworkAllowlist: per-host egress allowlist is enforced.
	NetworkAllowlist bool
	// MemoryLimit, PidsLimit, CPULimit: the corresponding Limits field is enforced.
	MemoryLimit, PidsLimit, CPULimit bool
	// Landlock and Seccomp report defence-in-depth layers actually available.
	Landlock, Seccomp bool
	// Snapshot, Resume, AttachMount, UpdateNetwork: the optional interfaces
	// below are implemented and usable.
	Snapshot, Resume, AttachMount, UpdateNetwork bool
	// Notes explains degraded features in one line each.
	Notes []string
}

// Backend provisions sessions. Implementations are safe for concurrent use.
type Backend interface {
	Name() string
	Capabilities() Capabilities
	Provision(ctx context.Context, s Spec) (Session, error)
}

// Session is one live sandbox. Exec may be called concurrently; Terminate is
// idempotent and always releases every host resource (processes, mounts,
// temp dirs, cgroups, proxies) even when it returns an error.
type Session interface {
	ID() string
	// Exec runs a command and waits for it. A non-zero exit status is not an
	// error; err is reserved for failures to run it at all.
	Exec(ctx context.Context, r ExecRequest) (ExecResult, error)
	// Upload copies a host file or directory tree to sandboxPath (which is
	// replaced/created; parents are created).
	Upload(ctx context.Context, hostPath, sandboxPath string) error
	// Download copies a sandbox file or tree to hostPath. Only regular files
	// and directories are copied; symlinks and special files are skipped.
	Download(ctx context.Context, sandboxPath, hostPath string) error
	Terminate(ctx context.Context) error
}

// ExecRequest is one command to run.
type ExecRequest struct {
	Args  []string
	Stdin []byte
	// StdinReader streams stdin when Stdin is nil (read until EOF or exit).
	StdinReader io.Reader
	Env         map[string]string // added to (and overriding) Spec.Env
	Cwd         string            // default Spec.WorkDir
	Timeout     time.Duration     // default Spec.Limits.WallTime; 0 = none
	// Stdout and Stderr, when set, receive a live copy of the output.
	Stdout, Stderr io.Writer
}

// ExecResult is what a command did. ExitCode is 128+signal when the command
// was killed by a signal, and -1 when it timed out.
type ExecResult struct {
	Stdout, Stderr []byte
	ExitCode       int
	TimedOut       bool
}

// Optional capabilities, checked by type assertion on a Session.

// Snapshotter captures a session's state.
type Snapshotter interface {
	Snapshot(ctx context.Context) (string, error)
}

// Resumer resumes a session from a snapshot id.
type Resumer interface {
	Resume(ctx context.Context, snapshotID string) (Session, error)
}

// MountAttacher adds a mount to a live session.
type MountAttacher interface {
	AttachMount(ctx context.Context, m Mount) error
}

// NetworkUpdater replaces the egress policy of a live session.
type NetworkUpdater interface {
	UpdateNetwork(ctx context.Context, n Network) error
}

// Resolver is the DNS lookup used by the egress proxy (injectable for tests).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure a backend. The zero value is the strict default.
type Options struct {
	// Resolver for the egress proxy; nil = net.DefaultResolver.
	Resolver Resolver
	// AllowedPrivateNetworks exempts these ranges from the proxy's internal
	// address refusal (org config allowed_private_networks).
	AllowedPrivateNetworks []netip.Prefix
	// TempDir is where session directories are created (default os.TempDir()).
	TempDir string
	// Binary is the host file exposed as /usr/local/bin/fullsend (default:
	// the running executable). The docker backend runs it inside the image.
	Binary string

	// Docker backend: engine socket (default $DOCKER_HOST or
	// unix:///var/run/docker.sock; a Podman socket works), OCI runtime name
	// ("runsc" for gVisor), default image, and whether images named by tag
	// (not digest) are accepted.
	DockerHost string
	OCIRuntime string
	Image      string
	AllowTags  bool
}

// Factory builds a backend.
type Factory func(Options) (Backend, error)

var (
	regMu    sync.Mutex
	registry = map[string]Factory{}
)

// Register makes a backend available to Open. Backends register from init;
// importing a backend package makes it available.
func Register(name string, f Factory) {
	regMu.Lock()
	defer regMu.Unlock()
	registry[name] = f
}

// Names lists the registered backends.
func Names() []string {
	regMu.Lock()
	defer regMu.Unlock()
	var out []string
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ErrUnknownBackend is returned by Open for a name nobody registered.
var ErrUnknownBackend = errors.New("unknown sandbox backend")

// ErrUnavailable wraps errors of backends that cannot run on this machine
// (no user namespaces, no Docker engine, ...).
var ErrUnavailable = errors.New("sandbox backend unavailable")

// Open returns the named backend ("local", "docker").
func Open(name string, o Options) (Backend, error) {
	regMu.Lock()
	f, ok := registry[name]
	regMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("sandbox backend %q: %w (known: %v)", name, ErrUnknownBackend, Names())
	}
	return f(o)
}
