// Package runtimetest provides an in-process stand-in for a sandbox session
// so runtime tests run without namespaces or containers: commands run on the
// host in a temp directory that plays /sandbox. It is for tests only and
// isolates nothing.
//
// Path mapping: every "/sandbox" path prefix (at a path boundary) in Exec
// arguments, environment values and Cwd, and in Upload/Download sandbox
// paths, is rewritten to the session's host root; extra prefixes can be
// mapped with Mount (e.g. /usr/local/bin/fullsend → a stub). Output is mapped
// back: occurrences of the host root in stdout/stderr read as "/sandbox".
//
// Helpers: NewSession(t) (root is t.TempDir(), Terminate at cleanup),
// Root/HostPath, Mount, AddBinary (PATH), WriteFile/ReadFile at sandbox
// paths, Execs (requests seen), WriteScript (fake executables). A missing
// program exits 127, a timeout gives ExitCode -1 and TimedOut, calls after
// Terminate fail.
//
// LocalSession is the real thing for the tests that need it: a session of
// the local namespaces backend, skipping the test where that backend is
// unavailable.
//
// CheckVerdicts is the verdict contract's conformance check, run by every
// runtime that has security checks (native, claude): a block, a denial and
// a canary trip the runtime's test provoked must each be an EventVerdict
// of its call. A runtime without tool-call checks declares
// runtime.Unguarded (script); package builtin's tests fail for a runtime
// that does neither.
package runtimetest
