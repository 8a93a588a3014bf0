// Package sandbox is the contract between fullsend and the places agents run:
// a Spec (mounts, network policy, limits, env, working dir, labels, image), a
// Backend that provisions Sessions from it, and Sessions that exec commands,
// move files and trees in and out, and terminate.
//
// # Rules enforced here
//
//   - Check validates every Spec before a backend sees it: absolute mount
//     sources; absolute sandbox targets without "..", not duplicated and not
//     on a path the backend owns (/, /proc, /dev, /sys, /sandbox,
//     /usr/local/bin/fullsend); network allowlist entries "host[:port]" with an
//     explicit leading "*." for subdomains (netguard.CheckHostPattern) and
//     runner Services as loopback "IP:PORT"; POSIX env names; non-negative
//     limits. Errors wrap ErrInvalidSpec.
//   - Every sandbox has /sandbox (read-write, at most Limits.WorkspaceBytes,
//     released by Terminate) and the running fullsend binary, read-only, at
//     /usr/local/bin/fullsend.
//   - Limits: a zero field means the Default* value (Limits.Resolved);
//     WallTime zero means no timeout. Each backend reports in
//     Capabilities.Limits how it enforces each one (Enforced, Weaker with
//     the fallback named, NotEnforced), so a run can warn. Past
//     OutputBytes, Exec kills the command and Download copies nothing
//     (ErrOutputLimit); past OutputFiles files and directories Download
//     copies nothing either (ErrOutputFilesLimit); past TmpBytes and WorkspaceBytes writes fail inside
//     (ENOSPC, EFBIG) or, for read-write host mounts only watched by the
//     backend, the session ends (ErrWorkspaceLimit); an OOM kill is
//     reported in ExecResult.OOMKilled.
//   - Agent commands may create sockets of the families AF_UNIX, AF_INET,
//     AF_INET6 and AF_NETLINK only; socket(2) and socketpair(2) of any
//     other family (AF_VSOCK, which no network namespace confines, first)
//     fail with EAFNOSUPPORT.
//   - Agent commands cannot signal or otherwise address the sandbox's own
//     processes (local: separate pid namespaces; docker: another uid).
//   - Network "none" (no Allow, no Services) means no network at all.
//     Otherwise egress goes only through the host-side proxy of package
//     egress, which admits allowlisted destinations with public addresses (or
//     addresses in Options.AllowedPrivateNetworks) and the runner Services.
//     HTTP_PROXY/HTTPS_PROXY/ALL_PROXY/NO_PROXY are set in both cases (curl
//     ignores upper-case HTTP_PROXY). Denials are written to Network.Log.
//
// # Backends
//
// Backends live in subpackages, listed once in package backends, whose
// Open looks them up by name: "local" (namespaces, Landlock, seccomp; see
// package local), "docker" (Docker Engine or Podman API; see package
// docker) and "kubernetes" (one Pod per session; see package kubernetes).
// local and docker exist on Linux only (NeedsLinux gives the error
// elsewhere).
// Optional features are interfaces checked by type assertion on a Session
// (Snapshotter, Resumer, MountAttacher, NetworkUpdater) and announced in
// Capabilities. Snapshotter (local and docker) saves the writable state
// under /sandbox as a filtered tar stream and restores it into another
// session: both directions keep directories and regular files only,
// check names as uploads do, drop setuid bits and stop at
// Limits.SnapshotBytes (snapshot_size), Limits.OutputBytes below
// /sandbox/output and SnapshotEntries entries (ErrSnapshotLimit); a
// restore first empties /sandbox but the caller's skip paths. Package sandboxtest is the conformance suite every backend
// runs.
//
// # Failure
//
// Exec returns an error only when the command could not be run or awaited;
// a failing command is a non-zero ExitCode (127 not found, 126 not
// executable, 128+N killed by signal N, -1 with TimedOut on timeout). A
// timeout kills the command's whole process tree. Terminate always releases
// every host resource and is idempotent. Errors are one line naming the
// backend, the session and the reason; ErrUnavailable marks a backend this
// machine cannot run (with the setting to change).
package sandbox
