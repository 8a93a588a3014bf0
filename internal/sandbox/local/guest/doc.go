// Package guest holds the roles the local backend's re-executed binary plays
// inside the sandbox: the init (pid 1, builds the root file system and the
// network namespace, then reaps), the agent supervisor (locks itself down with
// rlimits, Landlock and seccomp, then starts every exec'd command) and a user
// namespace holder used for idmapped mounts. See package local for the whole
// design.
//
// It imports neither package net nor anything heavy: Go initialises packages
// in import-path order as soon as their imports are ready, so this package's
// init function — which takes over the process when EnvRole is set — runs
// before the expensive initialisers elsewhere in the fullsend binary (a JSON
// Schema compiler, image reference regexps), keeping sandbox start-up cheap.
//
// Failures inside the sandbox are reported to the host as one line on the
// control socket ("error" message) and on stderr; the process then exits 120.
package guest
