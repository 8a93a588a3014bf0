// Package docker is the sandbox backend on the Docker Engine API (a Podman
// socket works too): one container per session, commands run with docker
// exec.
//
// Isolation: all capabilities dropped, no-new-privileges, read-only root
// file system, the spec's mounts as binds, optional OCI runtime (gVisor
// "runsc"). Images must be named by digest ("name@sha256:…" or a local image
// id "sha256:…") unless Options.AllowTags; images are never pulled.
//
// Every command (and the tar of Upload and Download) runs through the
// mounted fullsend binary in its confine role (package guest): it sets
// RLIMIT_FSIZE = WorkspaceBytes (SIGXFSZ ignored: EFBIG) and stacks
// fullsend's seccomp filter on the engine's profile, then becomes the
// command. Filters stack and the stricter answer wins. What that adds, as
// checked against moby's default profile (profiles/seccomp/default.json):
// moby allows socket(2) for every family except AF_VSOCK (EPERM) and
// socketpair(2) and socketcall(2) for all, so AF_ALG, AF_KEY, AF_XDP,
// AF_BLUETOOTH, … and AF_VSOCK through the i386 socketcall were reachable;
// with the stacked filter every family but AF_UNIX, AF_INET, AF_INET6 and
// AF_NETLINK fails with EAFNOSUPPORT, foreign system call ABIs fail with
// ENOSYS, and io_uring, bpf, userfaultfd, keyctl, … fail with EPERM whatever
// the engine's profile allows. The binary must therefore run in the image (a
// static build); Provision checks it does.
//
// Limits (sandbox.Limits, resolved with the package sandbox defaults):
// memory (swap included: MemorySwap = Memory), pids (Limits.Pids plus
// PidsReserve for the container's own processes; the whole container
// shares it, so during a fork bomb new execs may fail to start until it
// ends) and CPU map to the container's cgroup; /tmp and /sandbox are tmpfs
// mounts of TmpBytes and WorkspaceBytes (ENOSPC inside; they live in memory
// and count against the memory limit); read-write host mounts are watched
// like the local backend's (package watch: the session ends with
// sandbox.ErrWorkspaceLimit once they grew by more than WorkspaceBytes).
// OutputBytes bounds the host-side capture of an exec's stdout and stderr
// together (the exec's process tree is killed, ErrOutputLimit) and what
// Download copies (staged beside the destination, nothing left on refusal).
// OOM kills are counted from the container's memory cgroup on the host when
// the engine runs here (an exec reports OOMKilled when the count rose while
// it ran, so concurrent execs may all report one kill), else from the
// engine's per-container flag, which once set stays set.
//
// Network: the container always has network mode "none" (loopback only).
// With an allowlist, the host runs the same egress proxy as the local
// backend on a unix socket bind-mounted into the container, and the mounted
// fullsend binary runs a forwarder from 127.0.0.1:3128 to it, so the
// container has no IP route anywhere; HTTP(S)_PROXY point at the forwarder.
// sh, sleep, kill, sed and cut must exist in the image (to keep the
// container alive and to kill an exec's process tree on timeout), and tar
// (uploads and downloads).
//
// Users: commands run as the caller's uid:gid, so files written to
// read-write mounts are owned by the caller on the host; as root with a
// rootful engine that is uid 0 inside the container, with no capabilities.
// The container's own processes (docker-init, the keep-alive shell, the
// proxy forwarder) run as another uid (65534, or 65533 when the caller is
// 65534), so commands — which have no CAP_KILL — cannot signal them.
// Commands share one pid namespace and one uid with each other: unlike the
// local backend, one exec can see and signal another exec's processes. Use
// rootless Docker/Podman or userns-remap for an unprivileged host mapping.
//
// Process tree: each exec is one session (docker exec makes its process a
// session leader) and the confine role's filter (guest.ProfileSession)
// refuses setsid(2) with EPERM, the only way out of a session, so the
// session holds everything the exec starts: background jobs, orphans and
// programs that detach (setsid(1), Node's and Bun's detached spawn, as
// Claude Code uses for its tools) stay in it. When the exec ends (exit,
// timeout, output limit, cancel) every process of the session is killed,
// from the host when the engine runs here, else by a shell in the
// container; nothing an exec started survives it (a container cannot get a
// per-exec pid namespace without CAP_SYS_ADMIN, and a per-exec cgroup needs
// the engine's host).
package docker
