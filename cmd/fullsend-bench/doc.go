//go:build linux

// Command fullsend-bench measures fullsend the way a user pays for it: as
// whole processes, started from a shell, on this machine. Each measurement
// alternates a fullsend command with its yardstick (a hello-world Go binary
// for start-up, bubblewrap for the sandbox) in one loop, so both see the same
// machine load, and prints medians, min–max ranges, ratios of the medians,
// CPU time and peak resident memory.
//
//	go run ./cmd/fullsend-bench            # text table
//	go run ./cmd/fullsend-bench -markdown  # the table in README's Performance section
//
// It builds the fullsend binary (or takes -fullsend PATH) and the hello
// binary into a temporary directory, copies examples/hello into a temporary
// workspace, and writes a generated markdown file (-scan-mb, default 50 MB)
// for the scan row. Nothing it runs reaches beyond this machine: resolve and
// run use the local example harness, and the sandbox has no network.
//
// Rows: `fullsend version` vs hello; `fullsend sandbox exec -- true` vs
// `bwrap --unshare-all … true`; `fullsend scan` of the generated file with
// GOMAXPROCS=1; a warm `fullsend resolve` and a `fullsend run` of
// examples/hello (script runtime, local sandbox); a `fullsend run` of the
// agents library's code harness (-corpus, $FULLSEND_CORPUS or
// ../shared/corpus/fullsend-agents; the script runtime stands in for the
// agent, and the row reports the time around it); the claude runtime's hook
// processes for one Bash tool call; and the binary's size. -only picks rows.
package main
