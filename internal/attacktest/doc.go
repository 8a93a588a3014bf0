// Package attacktest is fullsend's adversarial end-to-end suite. It holds no
// code of its own: its tests run hostile harnesses and hostile agents
// through `fullsend run` (the CLI entry point, in process) in the real local
// sandbox, one test per attack that SECURITY.md lists, and assert two
// things each time: the attack failed, and the host is unchanged (marker
// files absent, no process of the run left, the process's temp directory
// back to its baseline, host disk usage back to its baseline).
//
// The hostile agent is the script runtime: a YAML file of shell steps that
// does what a prompt-injected model would try. Where an attack needs a
// system call no shell tool makes (a vsock socket, a signal to a given
// pid), the step runs /usr/local/bin/fullsend — inside the sandbox that is
// this test binary — with FULLSEND_ATTACK_HELPER naming the probe (see
// helper_test.go).
//
// Remote content comes from the in-process fake forge (package forgetest)
// on loopback; those cases drive package resolve directly, since the fake
// forge's CA and resolver are injected below the CLI. Every other case
// goes through the CLI exactly as a user's command line would.
//
// The suite needs the local sandbox; where user namespaces are unavailable
// it skips with one line saying so (README's testing section lists it).
package attacktest
