// Package local is the default sandbox backend: Linux namespaces built by
// re-executing the running binary, no daemon and no extra install.
//
// # Process tree
//
// Provision starts the binary (FULLSEND_SANDBOX_ROLE=init, handled by
// package guest, which package reexec calls first thing in main) in new
// user, mount, pid, ipc, uts, net and cgroup namespaces, as root of its user namespace mapped to one host
// uid H: the caller's uid, or — when fullsend runs as root — a dedicated
// unprivileged uid per session. The init (pid 1, non-dumpable):
//
//  1. stacks a tmpfs root in its private mount namespace with read-only binds
//     of /usr, /bin, /sbin, /lib*, a generated minimal /etc (passwd, group,
//     hosts, resolv.conf, nsswitch.conf, hostname) plus read-only binds of the
//     few host /etc entries programs need (certificates, alternatives,
//     ld.so.cache, localtime, …; never shadow, ssh, sudoers or credentials),
//     /usr/local/bin as a tmpfs replica plus the fullsend binary, /sandbox
//     and /tmp as size-limited tmpfs (see Limits), a fresh /proc, a minimal
//     /dev (null zero full random urandom tty, devpts, shm) and the spec's
//     mounts; then pivot_root, detaches the old root and makes the root
//     read-only;
//  2. sets the hostname and brings loopback up (network "none" = nothing else);
//  3. with an allowlist, listens on 127.0.0.1:3128 inside the sandbox's network
//     namespace and hands the listening socket to the host, where the egress
//     proxy serves it: connections made inside the sandbox are accepted by the
//     host process directly (no socket file inside, no forwarder hop);
//  4. starts the supervisor in a nested user namespace U as uid/gid 1000 —
//     first of all, so that its start-up overlaps steps 1-3 (it is this same
//     binary, and its root follows the pivot) — moves it into the
//     sandbox's own cgroups, sets user.max_user_namespaces=0 for everything
//     below it, reports ready and then only reaps orphans.
//
// The supervisor holds CAP_SYS_ADMIN in U only — U owns no mount, network or
// other namespace, so that capability governs nothing but namespaces the
// supervisor creates itself — carries the ProfileSupervisor seccomp filter
// (package guest) and is not dumpable. For every exec it starts a pid 1 in
// new pid and mount namespaces. That pid 1 mounts a /proc showing only its
// namespace, drops every capability on every thread, applies RLIMIT_CORE=0,
// Landlock (best-effort ABI, V5 rules: read-only system dirs and read-only
// mounts, read-write /sandbox, /tmp, /dev/shm, /dev/pts and read-write
// mounts, the /dev character files) and the ProfileAgent seccomp filter
// (EPERM for ptrace, process_vm_*, the mount family, pivot_root, chroot,
// kexec, module loading, bpf, perf_event_open, userfaultfd,
// keyctl/add_key/request_key, unshare, setns, clone(CLONE_NEWUSER), swap,
// reboot, clock setting, io_uring, handle-based opens, …; socket(2) and
// socketpair(2) of any family but AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK
// fail with EAFNOSUPPORT, so AF_VSOCK cannot bypass the network namespace;
// system calls of a foreign ABI fail with ENOSYS) and RLIMIT_FSIZE, marks
// every descriptor but the command's stdio close-on-exec, then starts the
// command in its own session and reaps until it exits. clone3 cannot be
// filtered by flags, which is why the init lowers the user namespace limit.
//
// The command starts as a second, short process, the enter step: forked by
// that pid 1, it sets the command's rlimits, says it is ready and waits;
// the pid 1 moves it into the exec's cgroups by pid (see Limits) and lets
// it go, and it becomes the command, which so runs its first instruction
// in them. The pid 1 itself never enters the exec's groups: the agent may
// have spent their pids budget (a fork bomb in another exec, say), and a Go
// process that cannot start a thread dies; a move is not a fork, so it is
// never refused. The enter step makes only raw system calls while it waits
// there, with one processor, no garbage collection and no other goroutine,
// so its runtime needs no new thread before the exec replaces it.

// The supervisor starts each pid 1 ahead of its exec, a spare (see
// guest's spare.go): at the session's first transfer and after every exec
// but a one-shot session's first, it forks the next pid 1, which prepares exactly as above (its
// /proc, capabilities dropped, Landlock, seccomp, RLIMIT_FSIZE) and forks
// its enter step, both then waiting with /dev/null as stdio and an empty
// environment. The exec's request (command, environment, directory, stdio
// and cgroup descriptors) reaches them over a socket, and the pid 1 places
// the enter step as above. Each spare serves one exec, so every exec still
// has a pid namespace of its own; an exec in a live session waits for no
// start of the binary, only for its command's.
//
// The supervisor and each pid 1 mark every descriptor above stdio
// close-on-exec first: nothing they start inherits one by accident (their
// control channels, cgroup.procs files, or whatever the fullsend process
// got from its own parent without close-on-exec).
//
// So an agent command sees only the processes of its own exec, under a
// pid 1 that ignores every signal it can be sent (the kernel drops SIGKILL
// and SIGSTOP sent to a namespace's init from inside, and it catches and
// discards the rest). The init, the supervisor and other execs have no pid
// in its namespace: it cannot signal them, nor prlimit, renice or otherwise
// address them, although all share the host uid H. Uploads and downloads
// run in an archive helper hardened exactly like an agent command: one per
// session, started by the first transfer and kept (in the supervisor's pid
// namespace, outside "agent") for every later one, so a run's layout costs
// one start of the binary, not one per file or tree.
//
// # Files on the host
//
// As root, every mount source is handed to the init as a detached mount
// (open_tree); the spec's mounts are idmapped so the source owner appears as
// the agent inside, and files the agent creates belong to that owner on the
// host. Without idmapped-mount support in the file system, provisioning
// fails with the kernel's error. As an unprivileged caller, sources are bound
// by path and files belong to the caller. /sandbox and /tmp are in memory:
// nothing the agent writes there reaches the host's disks.
//
// # Limits
//
// Limits are resolved (sandbox.Limits.Resolved: zero fields get the
// package sandbox defaults) and enforced as follows; Capabilities.Limits
// reports which mechanism this machine allows.
//
//   - Pids and memory: cgroups. On the unified hierarchy (v2) the session
//     group is created under the nearest ancestor of the caller's group that
//     the caller may write and that delegates pids or memory (as root: up to
//     the root group); otherwise under the caller's group of each writable
//     v1 hierarchy (pids, memory, cpu; as root). The session group gets
//     pids.max = Pids + PidsReserve and the CPU quota; its "agent" child
//     gets pids.max = Pids and the memory limit (swap 0), and each exec's
//     commands run in a child of "agent" of their own: the exec's pid 1
//     writes the enter step's pid to its cgroup.procs before the enter
//     step becomes the command. The init, the supervisor, every exec's
//     pid 1 and the archive helpers stay outside "agent" (v2: in "sys"), so a fork bomb or an
//     allocation storm fails inside (EAGAIN, OOM kill of an agent process)
//     while the sandbox keeps starting and serving execs. A move between
//     cgroups waits for an RCU grace period (milliseconds) unless another
//     move came just before: the host moves the init while it starts, the
//     init moves the supervisor while it builds the root, and the host
//     rewrites the init's group at the start of every exec so that the pid
//     1's move finds that wait already over. Files the agent writes to
//     /sandbox and /tmp are memory and count against the memory limit;
//     files uploaded by the host are charged to the session, not to
//     "agent". An OOM kill is reported in ExecResult.OOMKilled from the exec's own group
//     (memory.events oom_kill on v2, memory.oom_control oom_kill on v1).
//   - Without a usable cgroup, the fallbacks are rlimits set on each
//     command: RLIMIT_AS = MemoryBytes per process (allocations fail inside,
//     no OOM kill is reported) and RLIMIT_NPROC = Pids for the host uid H
//     (forks fail with EAGAIN; the count includes the sandbox's own
//     processes, and for an unprivileged caller, every process of that
//     user). The supervisor has no such rlimit, so it still survives. CPU is
//     then not enforced.
//   - TmpBytes: the size= of the /tmp tmpfs; writing past it fails with
//     ENOSPC.
//   - WorkspaceBytes: the size= of the /sandbox tmpfs (ENOSPC), and
//     RLIMIT_FSIZE on every command (with SIGXFSZ ignored: a file cannot
//     grow past WorkspaceBytes anywhere, EFBIG). Read-write host mounts have
//     no file system bound: a host-side watch (package watch) measures their
//     allocated size at start and polls it; once it has grown by more than
//     WorkspaceBytes the session is ended and every later call fails with
//     sandbox.ErrWorkspaceLimit. That is weaker: the agent may overshoot by
//     what it writes between two polls (at least every 500ms, backing off
//     to 20 times a scan's duration, at most 10s).
//   - OutputBytes: host side. An exec's stdout and stderr together are
//     kept (and copied to the live writers) up to it; the first byte past
//     it kills the exec and Exec returns an error wrapping
//     sandbox.ErrOutputLimit. Download extracts into a staging directory
//     beside the destination and stops before the file that would take the
//     total past it: the error wraps sandbox.ErrOutputLimit and nothing is
//     left at the destination.
//
// # Termination
//
// A timeout (or a canceled context, or the output limit) kills the exec's
// pid 1: the kernel then kills every process of its pid namespace, including
// those that changed session or process group. When the command exits, its
// pid 1 exits and whatever it left running dies the same way. Terminate
// kills the init: the kernel then kills every process of the sandbox, the
// mount namespace and its tmpfs mounts vanish, and the session's cgroups are
// removed. A host process killed before Terminate (SIGKILL, the OOM killer)
// takes the sandbox's processes with it (the init's parent-death signal) but
// leaves its groups behind, empty; the next Provision beside them removes
// every session group older than two minutes with no process in its subtree.
//
// # Failure
//
// When user namespaces cannot be created, Provision returns an error
// wrapping sandbox.ErrUnavailable that names the sysctl to change
// (kernel.unprivileged_userns_clone, user.max_user_namespaces,
// kernel.apparmor_restrict_unprivileged_userns). Setup failures inside the
// sandbox come back as one line "local sandbox: init: <step>: <error>"; a
// failure of an exec's pid 1 before the command ran is an Exec error, its
// reason on the command's stderr.
package local
