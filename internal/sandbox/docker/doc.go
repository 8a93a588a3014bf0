// Package docker is the sandbox backend on the Docker Engine API (a Podman
// socket works too): one container per session, commands run with docker
// exec.
//
// Isolation: all capabilities dropped, no-new-privileges, read-only root
// file system, /tmp as tmpfs, the spec's mounts as binds, memory (swap
// included), pids and CPU limits from the spec, optional OCI runtime
// (gVisor "runsc"). Images must be named by digest ("name@sha256:…" or a local
// image id "sha256:…") unless Options.AllowTags; images are never pulled.
//
// Network: the container always has network mode "none" (loopback only).
// With an allowlist, the host runs the same egress proxy as the local
// backend on a unix socket bind-mounted into the container, and the mounted
// fullsend binary runs a forwarder from 127.0.0.1:3128 to it, so the
// container has no IP route anywhere; HTTP(S)_PROXY point at the forwarder.
// The fullsend binary must be runnable in the image (a static build, or an
// image with a matching libc); so must sh, sleep, kill, sed and cut (used to
// keep the container alive and to kill an exec's process tree on timeout) and
// tar (uploads).
//
// Commands run as the caller's uid:gid, so files written to read-write mounts
// are owned by the caller on the host; as root with a rootful engine that is
// uid 0 inside the container, with no capabilities. Use rootless Docker/Podman
// or userns-remap for an unprivileged mapping.
package docker
