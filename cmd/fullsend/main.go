// Command fullsend runs AI agents from harnesses: it resolves and verifies every
// resource a harness names, scans it, and runs the agent in a sandbox.
package main

import (
	"context"
	"os"

	"github.com/fullsend-ai/fullsend/internal/cli"
	"github.com/fullsend-ai/fullsend/internal/reexec"
)

func main() {
	// A sandbox backend re-executes this binary in a role (sandbox init,
	// supervisor, proxy or host-services forwarder...) named by an
	// environment variable: play it and exit, before the CLI.
	reexec.Main()
	os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
