package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/fullsend-ai/fullsend/internal/secrets"
)

// Well-known paths inside every sandbox.
const (
	// Root is the read-write directory every sandbox has. Its size is
	// bounded by Limits.WorkspaceBytes and Terminate releases it.
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
	// Secrets, when set, is the run's secrets broker, which the egress
	// proxy applies (package secrets).
	Secrets *secrets.Broker `json:"-"`
}

// None reports whether the policy allows no egress at all.
func (n Network) None() bool { return len(n.Allow) == 0 && len(n.Services) == 0 }

// Limits bound what a session may consume. Zero means "backend default"
// (the Default* constants) for every field except WallTime, where zero means
// no timeout. Backends report in Capabilities.Limits how each one is
// enforced; Resolved gives the values a backend applies.
type Limits struct {
	WallTime    time.Duration `json:"wall_time,omitempty"`    // per exec, when ExecRequest.Timeout is zero
	MemoryBytes int64         `json:"memory_bytes,omitempty"` // the agent's commands together (files in tmpfs count)
	Pids        int           `json:"pids,omitempty"`         // the agent's commands together (tasks: processes and threads)
	CPUs        float64       `json:"cpus,omitempty"`         // CPU bandwidth of the whole session, in cores

	TmpBytes       int64 `json:"tmp_bytes,omitempty"`       // size= of the /tmp tmpfs
	WorkspaceBytes int64 `json:"workspace_bytes,omitempty"` // bytes the sandbox may write under /sandbox
	OutputBytes    int64 `json:"output_bytes,omitempty"`    // bytes Download may copy out, and host-side capture of each Exec's stdout/stderr
	OutputFiles    int   `json:"output_files,omitempty"`    // files and directories one Download may create on the host
	SnapshotBytes  int64 `json:"snapshot_bytes,omitempty"`  // file content one Snapshot may keep (Snapshotter)
}

// Default limits, applied by backends to zero Limits fields.
const (
	DefaultMemoryBytes    int64   = 4 << 30
	DefaultPids           int     = 1024
	DefaultCPUs           float64 = 2
	DefaultTmpBytes       int64   = 1 << 30
	DefaultWorkspaceBytes int64   = 10 << 30
	DefaultOutputBytes    int64   = 64 << 20
	DefaultOutputFiles    int     = 10000
	DefaultSnapshotBytes  int64   = 1 << 30
	// SnapshotEntries bounds the files and directories of one snapshot.
	SnapshotEntries = 1 << 20
)

// Resolved returns l with every zero field except WallTime replaced by its
// default.
func (l Limits) Resolved() Limits {
	orDefault(&l.MemoryBytes, DefaultMemoryBytes)
	orDefault(&l.Pids, DefaultPids)
	orDefault(&l.CPUs, DefaultCPUs)
	orDefault(&l.TmpBytes, DefaultTmpBytes)
	orDefault(&l.WorkspaceBytes, DefaultWorkspaceBytes)
	orDefault(&l.OutputBytes, DefaultOutputBytes)
	orDefault(&l.OutputFiles, DefaultOutputFiles)
	orDefault(&l.SnapshotBytes, DefaultSnapshotBytes)
	return l
}

// Lower returns l with every limit set in h (non-zero) and lower than l's
// replaced by h's: the org's limits (l) lowered by a harness's resources:
// (h). WallTime is l's: it is not a resources: key.
func (l Limits) Lower(h Limits) Limits {
	lower(&l.MemoryBytes, h.MemoryBytes)
	lower(&l.Pids, h.Pids)
	lower(&l.CPUs, h.CPUs)
	lower(&l.TmpBytes, h.TmpBytes)
	lower(&l.WorkspaceBytes, h.WorkspaceBytes)
	lower(&l.OutputBytes, h.OutputBytes)
	lower(&l.OutputFiles, h.OutputFiles)
	lower(&l.SnapshotBytes, h.SnapshotBytes)
	return l
}

// Min returns l and h combined field by field, each the lower of the set
// (non-zero) values, WallTime included: it composes the resources: blocks
// of a base chain, where zero means "not set".
func (l Limits) Min(h Limits) Limits {
	minSet(&l.WallTime, h.WallTime)
	minSet(&l.MemoryBytes, h.MemoryBytes)
	minSet(&l.Pids, h.Pids)
	minSet(&l.CPUs, h.CPUs)
	minSet(&l.TmpBytes, h.TmpBytes)
	minSet(&l.WorkspaceBytes, h.WorkspaceBytes)
	minSet(&l.OutputBytes, h.OutputBytes)
	minSet(&l.OutputFiles, h.OutputFiles)
	minSet(&l.SnapshotBytes, h.SnapshotBytes)
	return l
}

type limitValue interface {
	~int | ~int64 | ~float64
}

// lower replaces *v by h when h is set (positive) and below *v.
func lower[T limitValue](v *T, h T) {
	if h > 0 && h < *v {
		*v = h
	}
}

// minSet replaces *v by h when h is set and *v is not, or h is lower.
func minSet[T limitValue](v *T, h T) {
	if h > 0 && (*v == 0 || h < *v) {
		*v = h
	}
}

// orDefault replaces a zero *v by def.
func orDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// ErrOutputLimit is wrapped by the error of a Download that would copy more
// than Limits.OutputBytes (nothing is left at the destination) and of an
// Exec whose stdout and stderr together exceeded it (the command is killed;
// the ExecResult holds the output up to the limit).
var ErrOutputLimit = errors.New("output limit exceeded")

// OutputLimitError returns the error for what (e.g. "download /sandbox/x",
// "exec sh") exceeding limit bytes; it wraps ErrOutputLimit and names the
// output_size setting.
func OutputLimitError(what string, limit int64) error {
	return fmt.Errorf("%s: more than output_size (%s): %w", what, FormatBytes(limit), ErrOutputLimit)
}

// ErrOutputFilesLimit is wrapped by the error of a Download that would
// create more than Limits.OutputFiles files and directories on the host
// (nothing is left at the destination).
var ErrOutputFilesLimit = errors.New("output file count limit exceeded")

// OutputFilesLimitError returns the error for what (e.g. "download
// /sandbox/output") holding more than limit files and directories; it wraps
// ErrOutputFilesLimit and names the output_files setting.
func OutputFilesLimitError(what string, limit int) error {
	return fmt.Errorf("%s: more than output_files (%d files and directories): %w", what, limit, ErrOutputFilesLimit)
}

// ErrSnapshotLimit is wrapped by the error of a Snapshot whose files would
// keep more than Limits.SnapshotBytes (or, below /sandbox/output, more
// than Limits.OutputBytes), or more than SnapshotEntries files and
// directories; nothing is kept.
var ErrSnapshotLimit = errors.New("snapshot limit exceeded")

// SnapshotLimitError returns the error of a snapshot of more than limit
// bytes (setting names the limit: snapshot_size or output_size); it wraps
// ErrSnapshotLimit.
func SnapshotLimitError(setting string, limit int64) error {
	return fmt.Errorf("snapshot: more than %s (%s): %w", setting, FormatBytes(limit), ErrSnapshotLimit)
}

// ErrWorkspaceLimit is wrapped by the errors of a session a backend killed
// because the sandbox wrote more than Limits.WorkspaceBytes where the
// backend can only watch (host directories mounted read-write).
var ErrWorkspaceLimit = errors.New("workspace limit exceeded")

// FormatBytes renders n as an exact binary-unit size ("64MiB", "1536KiB",
// "100B") when one divides it, in bytes otherwise.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		s string
		v int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.v && n%u.v == 0 {
			return fmt.Sprintf("%d%s", n/u.v, u.s)
		}
	}
	return fmt.Sprintf("%dB", n)
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
	// MemoryLimit, PidsLimit, CPULimit: the corresponding Limits field is
	// enforced, possibly by a weaker fallback (see Limits).
	MemoryLimit, PidsLimit, CPULimit bool
	// Limits says, for each Limits field, how it is enforced on this
	// machine and whether that is the full guarantee.
	Limits LimitSupport
	// Landlock and Seccomp report defence-in-depth layers actually available.
	Landlock, Seccomp bool
	// Snapshot, Resume, AttachMount, UpdateNetwork: the optional interfaces
	// below are implemented and usable.
	Snapshot, Resume, AttachMount, UpdateNetwork bool
	// HostMounts: Spec.Mounts (directories of the runner host) can be
	// mounted. HostServices: Network.Services (endpoints on the runner
	// host) can be reached through the proxy. A Kubernetes Pod has neither.
	HostMounts, HostServices bool
	// NetworkCaveat, when set, names the condition the sandbox's network
	// isolation (no network, or egress through the proxy only) depends on
	// and the backend cannot check; a run prints it as a warning.
	NetworkCaveat string `json:",omitempty"`
	// Notes explains degraded features in one line each.
	Notes []string
}

// Enforcement grades how a limit holds.
type Enforcement int

const (
	// NotEnforced: the limit is ignored.
	NotEnforced Enforcement = iota
	// Weaker: a fallback bounds it with a weaker guarantee (LimitEnforcement.How says which).
	Weaker
	// Enforced: the documented guarantee holds.
	Enforced
)

func (e Enforcement) String() string {
	switch e {
	case Enforced:
		return "enforced"
	case Weaker:
		return "weaker"
	}
	return "not enforced"
}

// MarshalText renders the grade as its String.
func (e Enforcement) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// UnmarshalText reads a grade written by MarshalText.
func (e *Enforcement) UnmarshalText(b []byte) error {
	for _, v := range []Enforcement{NotEnforced, Weaker, Enforced} {
		if string(b) == v.String() {
			*e = v
			return nil
		}
	}
	return fmt.Errorf("unknown enforcement %q", b)
}

// LimitEnforcement describes how one limit is enforced.
type LimitEnforcement struct {
	Level Enforcement `json:"level"`
	// How names the mechanism in a few words ("cgroup v1 memory.limit_in_bytes",
	// "RLIMIT_AS per process: allocation fails, no OOM kill reported").
	How string `json:"how"`
}

// LimitSupport holds one LimitEnforcement per Limits field.
type LimitSupport struct {
	Memory    LimitEnforcement `json:"memory"`
	Pids      LimitEnforcement `json:"pids"`
	CPU       LimitEnforcement `json:"cpu"`
	Tmp       LimitEnforcement `json:"tmp"`
	Workspace LimitEnforcement `json:"workspace"`
	Output    LimitEnforcement `json:"output"`
}

// Downgrades lists, one line each ("memory: RLIMIT_AS per process (weaker)"),
// the limits that are not Enforced, for a run's warning.
func (l LimitSupport) Downgrades() []string {
	var out []string
	for _, f := range []struct {
		name string
		e    LimitEnforcement
	}{{"memory", l.Memory}, {"pids", l.Pids}, {"cpus", l.CPU}, {"tmp_size", l.Tmp}, {"workspace_size", l.Workspace}, {"output_size", l.Output}} {
		if f.e.Level != Enforced {
			out = append(out, fmt.Sprintf("%s: %s (%s)", f.name, f.e.How, f.e.Level))
		}
	}
	return out
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
	// error; err is reserved for failures to run it at all, and for output
	// beyond Limits.OutputBytes (stdout and stderr together; the command is
	// killed, err wraps ErrOutputLimit and the result holds the output up to
	// the limit).
	Exec(ctx context.Context, r ExecRequest) (ExecResult, error)
	// Upload copies a host file or directory tree to sandboxPath (which is
	// replaced/created; parents are created).
	Upload(ctx context.Context, hostPath, sandboxPath string) error
	// Download copies a sandbox file or tree to hostPath. Only regular files
	// and directories are copied; symlinks and special files are skipped.
	// When the regular files would add up to more than Limits.OutputBytes
	// it fails with an error wrapping ErrOutputLimit, when the tree holds
	// more than Limits.OutputFiles files and directories with one wrapping
	// ErrOutputFilesLimit; either way it writes nothing at hostPath (the
	// copy is staged beside it and moved into place at the end).
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
	// OOMKilled: the memory limit was reached while the command ran and
	// the kernel killed one of its processes (not necessarily the first
	// one). Only backends whose Capabilities.Limits.Memory is Enforced
	// report it.
	OOMKilled bool
}

// Optional capabilities, checked by type assertion on a Session.

// Snapshotter saves and restores a session's writable state: the tree
// under Root (/sandbox/workspace, /sandbox/output and the rest of the
// agent's home, which is Root) less the paths of skip, absolute sandbox
// paths below Root that the caller owns (e.g. its configuration, a file it
// plants), which are neither kept nor replaced.
type Snapshotter interface {
	// Snapshot writes the state to w as a tar stream: directories and
	// regular files only (symlinks and special files are left out), named
	// "./REL" relative to Root, with permission bits, size and
	// modification time. Past Limits.SnapshotBytes of file content, past
	// Limits.OutputBytes below /sandbox/output or past SnapshotEntries
	// entries it fails with an error wrapping ErrSnapshotLimit, and what
	// was written to w must be discarded.
	Snapshot(ctx context.Context, w io.Writer, skip []string) error
	// Restore replaces the state with the tar stream r, as Snapshot
	// wrote it: every entry under Root but skip is removed, then r is
	// extracted as the agent would write it (a directory the agent had
	// made read-only is filled first and gets its mode back after; one in
	// the way is made writable before it is removed). r is
	// untrusted: it passes the rules of Snapshot again (names checked, no symlink, no special file,
	// no setuid bit, the same bounds; entries under skip ignored).
	Restore(ctx context.Context, r io.Reader, skip []string) error
}

// Wrapper is a Session that adds to another one (e.g. a run's limit
// accounting); the optional interfaces are looked up on what it wraps.
type Wrapper interface {
	Unwrap() Session
}

// SnapshotterOf returns s's Snapshotter, or that of the session s wraps
// (through Wrapper, at any depth).
func SnapshotterOf(s Session) (Snapshotter, bool) {
	for s != nil {
		if sn, ok := s.(Snapshotter); ok {
			return sn, true
		}
		w, ok := s.(Wrapper)
		if !ok {
			break
		}
		s = w.Unwrap()
	}
	return nil, false
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
	// TempDir is where a backend keeps host-side session files, if it has
	// any (default os.TempDir()); local and docker keep none: /sandbox and
	// /tmp live in the sandbox's own memory-backed file systems.
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

	// Kubernetes backend (config.yaml sandbox.kubernetes; Image above is
	// its default image): namespace of the run Pods, their
	// runtimeClassName, the egress gateway's http://HOST:PORT and the key
	// that signs each run's gateway token.
	Namespace, RuntimeClass, EgressGateway string
	SigningKey                             []byte
}

// ErrUnknownBackend is returned by backends.Open for a name that is not
// one of the backends fullsend ships.
var ErrUnknownBackend = errors.New("unknown sandbox backend")

// ErrUnavailable wraps errors of backends that cannot run on this machine
// (no user namespaces, no Docker engine, ...).
var ErrUnavailable = errors.New("sandbox backend unavailable")

// NeedsLinux returns nil when goos (runtime.GOOS) is "linux", and
// otherwise the error saying that what ("the local sandbox", "fullsend
// run") needs Linux, wrapping ErrUnavailable. The sandbox backends that
// run fullsend itself inside the sandbox (local, docker) exist on Linux
// only; it takes goos so that the message is tested on every platform.
func NeedsLinux(what, goos string) error {
	if goos == "linux" {
		return nil
	}
	return fmt.Errorf("%s: %w: it needs Linux (this is %s)", what, ErrUnavailable, goos)
}
