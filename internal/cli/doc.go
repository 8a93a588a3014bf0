// Package cli holds the fullsend command tree (spf13/cobra): flag parsing and
// output formatting only. Work is done by the internal packages it calls.
//
// Every command lives in its own file and registers itself with register from
// an init function. Main turns any error into a single stderr line
// ("fullsend: <message>") and an exit code: 0 success, 1 failure, 2 bad usage,
// or the code carried by an *ExitError.
package cli
