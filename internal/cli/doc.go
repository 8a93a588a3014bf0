// Package cli holds the fullsend command tree (spf13/cobra): flag parsing and
// output formatting only. Work is done by the internal packages it calls.
//
// Every command lives in its own file; root.go's commands is the one list
// of them. cmd/fullsend's main first lets package reexec play the role a
// sandbox re-executed the binary as, then calls Main. Main turns any error into a single stderr line
// ("fullsend: <message>") and an exit code: 0 success, 1 failure, 2 bad usage,
// or the code carried by an *ExitError. A command stopped by SIGINT or
// SIGTERM (Main's signal context) prints "fullsend: interrupted" instead of
// whatever error the cancellation surfaced as, and exits 130.
//
// Progress (Env.Progress, package progress) goes to stderr: a live status
// line on a terminal, timestamped lines elsewhere, nothing but warnings
// with the global --quiet; --verbose shows more. Notes and warnings go
// through Env.notef and Env.warnf so they never tangle with the status
// line; a command calls finishProgress before writing its result on
// stdout, and run does before the error line.
//
// Nothing the CLI writes may show up in `git status` of the user's tree:
// the run directories and the cache get a .gitignore holding "*" (see
// ignore.go); the fullsend dir itself (config, harnesses, lock.yaml) is
// meant to be committed and is never ignored. lock.yaml lives in the
// fullsend dir the harness resolves against, as every other command sees
// it (HarnessTarget.Root).
package cli
