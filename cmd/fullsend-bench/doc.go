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
// `bwrap --unshare-all … true`; one exec in a live session (a run of
// examples/hello with 20 more `true` steps in its script, alternating with
// the plain run: the difference of the medians over 20); `fullsend scan` of
// the generated file with GOMAXPROCS=1; a warm `fullsend resolve`; a
// `fullsend run` of examples/hello (script runtime, local sandbox) vs the
// same agent commands as one script in one `sandbox exec`; the fullsend
// binary starts of that run, counted with `strace -f -e trace=execve` by
// role; a 1 GiB dd (-dd-mb, -n-dd rounds) into the memory-backed /sandbox
// vs bubblewrap writing into a tmpfs; package resolve's cold resolution
// benchmark (a fake forge on loopback, 50 ms per request; -n-cold runs) vs
// its physical limit of three round trips; a `fullsend run` of the
// agents library's code harness (-corpus, $FULLSEND_CORPUS or
// ../shared/corpus/fullsend-agents; the script runtime stands in for the
// agent, and the row reports the time around it); the claude runtime's hook
// processes for one Bash tool call; and the binary's size. -only picks rows.
// The load average at the start and at the end heads the table.
package main
