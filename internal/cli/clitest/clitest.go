// Package clitest lets a test binary stand in for the fullsend CLI. The
// sandboxes bind the running executable as /usr/local/bin/fullsend, so
// inside a sandbox a test binary is what `fullsend scan context` or a hook
// command starts; tests also re-execute their own binary as the CLI (a
// `fullsend run` in a child process). ActAsCLI, called first in TestMain,
// makes both cases reach the real CLI. Package cli's own tests cannot
// import it (it imports cli) and keep their own TestMain.
package clitest

import (
	"context"
	"os"
	"path/filepath"

	"github.com/fullsend-ai/fullsend/internal/cli"
)

// ActAsCLI runs the fullsend CLI with the process's arguments and exits
// with its code when this test binary was started as fullsend: under that
// name, or with the environment variable env ("" for none) set to "1",
// which is then removed so the CLI's own children do not inherit it.
// Otherwise it returns, after setting GORACE so that the race-built helper
// processes the sandboxes start from this binary exit without the race
// detector's one-second sleep.
func ActAsCLI(env string) {
	if filepath.Base(os.Args[0]) == "fullsend" || (env != "" && os.Getenv(env) == "1") {
		if env != "" {
			os.Unsetenv(env)
		}
		os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Setenv("GORACE", "atexit_sleep_ms=0")
}
