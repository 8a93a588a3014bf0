// Package clitest lets a test binary stand in for the fullsend CLI. The
// sandboxes bind the running executable as /usr/local/bin/fullsend, so
// inside a sandbox a test binary is what `fullsend scan context` or a hook
// command starts; tests also re-execute their own binary as the CLI (a
// `fullsend run` in a child process); and the sandboxes re-execute it in
// their roles (package reexec). ActAsCLI, called first in TestMain, makes
// all of these reach the real code. Package cli's own tests cannot
// import it (it imports cli) and keep their own TestMain.
package clitest

import (
	"context"
	"os"
	"path/filepath"

	"github.com/fullsend-ai/fullsend/internal/cli"
	"github.com/fullsend-ai/fullsend/internal/reexec"
)

// ActAsCLI makes this test binary what cmd/fullsend's main is. First it
// plays the role a sandbox re-executed it as, if any (reexec.Main: the
// sandboxes' init, supervisor and forwarders), and exits. Then it runs the
// fullsend CLI with the process's arguments and exits with its code when
// this test binary was started as fullsend: under that name, or with the
// environment variable env ("" for none) set to "1", which is then removed
// so the CLI's own children do not inherit it. Otherwise it returns, after
// setting GORACE so that the race-built helper processes the sandboxes
// start from this binary exit without the race detector's one-second sleep.
func ActAsCLI(env string) {
	reexec.Main()
	if filepath.Base(os.Args[0]) == "fullsend" || (env != "" && os.Getenv(env) == "1") {
		if env != "" {
			os.Unsetenv(env)
		}
		os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Setenv("GORACE", "atexit_sleep_ms=0")
}
