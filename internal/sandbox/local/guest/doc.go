// Package guest holds the roles the fullsend binary plays when a sandbox
// backend re-executes it: for the local backend the init (pid 1 of the
// sandbox: builds the root file system and the network namespace, then
// reaps), the supervisor (starts every exec and every upload or download),
// each exec's pid 1 (its own pid namespace and /proc, hardening, starting
// the command in the exec's cgroups, reaping), the enter step (sets the
// command's rlimits, waits while pid 1 moves it into the exec's cgroups,
// becomes the command), the archive helper (tar in and out, hardened like a
// command) and a user namespace holder used for idmapped mounts; for the
// docker backend the confine wrapper (the same seccomp filter on top of the
// engine's, RLIMIT_FSIZE). See package local for the whole design.
//
// The seccomp filter is built here (SeccompProgram) and nowhere else: a
// denylist of system calls (EPERM), clone(CLONE_NEWUSER) (EPERM), socket(2)
// and socketpair(2) limited to SocketFamilies (EAFNOSUPPORT otherwise) and
// every foreign system call ABI refused (ENOSYS).
//
// Package reexec calls Run with the role named by EnvRole first thing in
// cmd/fullsend's main (and in the TestMain of the test binaries that start
// sandboxes), after every package's initialisation: each initialiser in the
// fullsend binary is therefore paid by every sandbox process, and must stay
// cheap (package lazyre). The sandbox roles exist on Linux only; elsewhere
// Run fails.
//
// Failures inside the sandbox are reported to the host as one line on the
// control socket ("error" message) and on stderr; the process then exits 120.
package guest
