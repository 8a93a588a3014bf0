// Command fullsend runs AI agents from harnesses: it resolves and verifies every
// resource a harness names, scans it, and runs the agent in a sandbox.
package main

import (
	"context"
	"os"

	"github.com/fullsend-ai/fullsend/internal/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
