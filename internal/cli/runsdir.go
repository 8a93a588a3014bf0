package cli

import (
	"fmt"

	"github.com/fullsend-ai/fullsend/internal/rundir"
)

// RunsDir is where this command's runs live (package rundir):
// FULLSEND_RUNS_DIR, else <workspace>/.fullsend/runs when --workspace
// was given, else the workspace's directory in the user's state
// directory. run, chat, runs ls|show and --resume all read it here.
func (e *Env) RunsDir() (string, error) {
	getenv := e.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	d, err := rundir.RunsDir(getenv, e.Workspace, e.WorkspaceGiven)
	if err != nil {
		return "", fmt.Errorf("runs directory: %w", err)
	}
	return d, nil
}
