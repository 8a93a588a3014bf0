package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"time"

	"github.com/fullsend-ai/fullsend/internal/openflag"
)

// ScriptError is a host script (pre_script, post_script,
// validation_loop.script) that failed.
type ScriptError struct {
	Field    string // "pre_script", ...
	Script   string
	ExitCode int // -1: did not run to completion (timeout, signal, cancel)
	Log      string
	Err      error
}

func (e *ScriptError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s %s: %v (log: %s)", e.Field, e.Script, e.Err, e.Log)
	}
	return fmt.Sprintf("%s %s: exited with status %d (log: %s)", e.Field, e.Script, e.ExitCode, e.Log)
}

func (e *ScriptError) Unwrap() error { return e.Err }

// runHostScript runs a local script on the runner host: the runner's
// environment plus env (env.runner and FULLSEND_* values), stdout and stderr
// captured into logFile, bounded by timeout. The script runs in its own
// process group, killed as a whole on timeout or cancellation. A script
// without the executable bit runs through /bin/sh.
//
// Trust: the working directory is a fresh, empty, private directory made for
// this script and removed after it, never the run directory, whose output/
// holds files the agent wrote (a relative path in a script, or a loader
// variable, must not reach them). The agent's output reaches the script only
// as data: a path in FULLSEND_OUTPUT_DIR / FULLSEND_RESULT_FILE.
func runHostScript(ctx context.Context, field, script, logFile string, env map[string]string, timeout time.Duration) error {
	return runHostScriptTee(ctx, field, script, logFile, env, timeout, nil, nil)
}

// runHostScriptTee is runHostScript that also copies the script's stdout
// and stderr to the given writers (nil: the log only).
func runHostScriptTee(ctx context.Context, field, script, logFile string, env map[string]string, timeout time.Duration, stdout, stderr io.Writer) error {
	log, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|openflag.NoFollow, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	dir, err := os.MkdirTemp("", "fullsend-script-")
	if err != nil {
		return &ScriptError{Field: field, Script: script, ExitCode: -1, Log: logFile, Err: fmt.Errorf("working directory: %w", err)}
	}
	defer os.RemoveAll(dir)
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	args := []string{script}
	if st, err := os.Stat(script); err != nil {
		return &ScriptError{Field: field, Script: script, ExitCode: -1, Log: logFile, Err: err}
	} else if st.Mode()&0o111 == 0 {
		args = []string{"/bin/sh", script}
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = io.Writer(log), io.Writer(log)
	if stdout != nil {
		cmd.Stdout = io.MultiWriter(log, stdout)
	}
	if stderr != nil {
		cmd.Stderr = io.MultiWriter(log, stderr)
	}
	ownGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = 2 * time.Second
	cmd.Env = os.Environ()
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cmd.Env = append(cmd.Env, k+"="+env[k])
	}
	err = cmd.Run()
	// Whatever happened, leave no member of the group behind.
	if cmd.Process != nil {
		_ = killGroup(cmd)
	}
	if err == nil {
		return nil
	}
	se := &ScriptError{Field: field, Script: script, ExitCode: -1, Log: logFile}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		se.Err = fmt.Errorf("timed out after %s", timeout)
	case ctx.Err() != nil:
		se.Err = ctx.Err()
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		se.ExitCode = ee.ExitCode()
	default:
		se.Err = err
	}
	return se
}
