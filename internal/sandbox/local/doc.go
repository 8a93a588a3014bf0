// Package local is the default sandbox backend: Linux namespaces built by
// re-executing the running binary, no daemon and no extra install.
//
// # Process tree
//
// Provision starts the binary (FULLSEND_SANDBOX_ROLE=init, handled by the
// init function of package guest before main — see guest for why that
// package stays light) in new user, mount, pid, ipc, uts,
// net and cgroup namespaces, as root of its user namespace mapped to one host
// uid H: the caller's uid, or — when fullsend runs as root — a dedicated
// unprivileged uid per session. The init (pid 1, non-dumpable):
//
//  1. stacks a tmpfs root in its private mount namespace with read-only binds
//     of /usr, /bin, /sbin, /lib*, a generated minimal /etc (passwd, group,
//     hosts, resolv.conf, nsswitch.conf, hostname) plus read-only binds of the
//     few host /etc entries programs need (certificates, alternatives,
//     ld.so.cache, localtime, …; never shadow, ssh, sudoers or credentials),
//     /usr/local/bin as a tmpfs replica plus the fullsend binary, /sandbox, a
//     fresh /proc, a minimal /dev (null zero full random urandom tty, devpts,
//     shm), /tmp as tmpfs and the spec's mounts; then pivot_root, detaches the
//     old root and makes the root read-only;
//  2. sets the hostname and brings loopback up (network "none" = nothing else);
//  3. with an allowlist, listens on 127.0.0.1:3128 inside the sandbox's network
//     namespace and hands the listening socket to the host, where the egress
//     proxy serves it: connections made inside the sandbox are accepted by the
//     host process directly (no socket file inside, no forwarder hop);
//  4. starts the supervisor in a nested user namespace as uid/gid 1000 (no
//     capabilities anywhere), sets user.max_user_namespaces=0 for everything
//     below it, reports ready and then only reaps orphans.
//
// The supervisor applies RLIMIT_CORE=0, Landlock (best-effort ABI, V5 rules: read-only
// system dirs and read-only mounts, read-write /sandbox, /tmp, /dev/shm,
// /dev/pts and read-write mounts, the /dev character files) and a seccomp
// filter synchronised to all threads (EPERM for ptrace, process_vm_*, the
// mount family, pivot_root, chroot, kexec, module loading, bpf,
// perf_event_open, userfaultfd, keyctl/add_key/request_key, unshare, setns,
// clone(CLONE_NEWUSER), swap, reboot, clock setting, io_uring, handle-based
// opens, …). clone3 cannot be filtered by flags, which is why the init lowers
// the user namespace limit. Every exec'd command is started by the
// supervisor in its own session and inherits all of this.
//
// # Files on the host
//
// As root, every mount source is handed to the init as a detached mount
// (open_tree); the spec's mounts are idmapped so the source owner appears as
// the agent inside, and files the agent creates belong to that owner on the
// host. Without idmapped-mount support in the file system, provisioning
// fails with the kernel's error. As an unprivileged caller, sources are bound
// by path and files belong to the caller.
//
// # Limits and termination
//
// Memory, pids and CPU use cgroup v2 when the caller's group is delegated,
// else the v1 controllers when writable (as root), else rlimits
// (RLIMIT_AS per process, RLIMIT_NPROC per sandbox uid; CPU is then not
// enforced). The rlimits are set on each command, not on the supervisor,
// through a short re-execution of the binary in the "limit" role. The pids
// limit counts tasks (threads); the sandbox's own two Go processes are given
// a reserve on top (PidsReserve plus their tasks at ready time). A timeout kills
// every process of the command's session (process-group kill, then a /proc
// scan by session id until none is left); a command that detached into a new
// session survives only until Terminate. When an exec's main process exits,
// what remains of its session is killed too. Terminate kills the init: the
// kernel then kills every process of the pid namespace, the mount namespace
// and its mounts vanish, and the session's cgroups and temp dir are removed.
//
// # Failure
//
// When user namespaces cannot be created, Provision returns an error
// wrapping sandbox.ErrUnavailable that names the sysctl to change
// (kernel.unprivileged_userns_clone, user.max_user_namespaces,
// kernel.apparmor_restrict_unprivileged_userns). Setup failures inside the
// sandbox come back as one line "local sandbox: init: <step>: <error>".
package local
