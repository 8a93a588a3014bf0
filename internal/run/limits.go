package run

import (
	"go.opentelemetry.io/otel/attribute"

	"context"
	"errors"
	"fmt"
	"github.com/fullsend-ai/fullsend/internal/trace"
	"sync"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// ErrLimit is wrapped by the error of a run that ran into one of its
// resource limits (sandbox.limits / resources:).
var ErrLimit = errors.New("resource limit")

// LimitError is a run that failed after a command hit a resource limit: the
// message names the limit first, then what failed.
type LimitError struct {
	Limit string // "memory limit 4GiB exceeded (OOM kill)", ...
	Err   error
}

func (e *LimitError) Error() string   { return e.Limit + ": " + e.Err.Error() }
func (e *LimitError) Unwrap() []error { return []error{ErrLimit, e.Err} }

// limitWatch is the session the runtimes use: the backend's, plus a record
// of the first resource limit a command ran into, so that the run's error
// names the limit rather than its symptom (exit 137, a short read).
type limitWatch struct {
	sandbox.Session
	limits config.Limits

	mu  sync.Mutex
	hit string
}

// Unwrap implements sandbox.Wrapper (the backend session's optional
// interfaces, e.g. sandbox.Snapshotter, stay reachable).
func (w *limitWatch) Unwrap() sandbox.Session { return w.Session }

func (w *limitWatch) Exec(ctx context.Context, r sandbox.ExecRequest) (sandbox.ExecResult, error) {
	ctx, span := traceExec(ctx, r)
	res, err := w.Session.Exec(ctx, r)
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("process.exit.code", res.ExitCode), attribute.Bool("fullsend.sandbox.oom_killed", res.OOMKilled))
	}
	trace.End(span, err)
	if res.OOMKilled {
		w.record(fmt.Sprintf("memory limit %s exceeded (OOM kill)", config.FormatSize(w.limits.MemoryBytes)))
	}
	w.recordErr(err)
	return res, err
}

func (w *limitWatch) Download(ctx context.Context, sandboxPath, hostPath string) error {
	err := w.Session.Download(ctx, sandboxPath, hostPath)
	w.recordErr(err)
	return err
}

func (w *limitWatch) recordErr(err error) {
	switch {
	case errors.Is(err, sandbox.ErrOutputLimit):
		w.record(fmt.Sprintf("output limit output_size %s exceeded", config.FormatSize(w.limits.OutputBytes)))
	case errors.Is(err, sandbox.ErrOutputFilesLimit):
		w.record(fmt.Sprintf("output limit output_files %d exceeded", w.limits.OutputFiles))
	case errors.Is(err, sandbox.ErrWorkspaceLimit):
		w.record(fmt.Sprintf("workspace limit workspace_size %s exceeded", config.FormatSize(w.limits.WorkspaceBytes)))
	}
}

func (w *limitWatch) record(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.hit == "" {
		w.hit = s
	}
}

// first returns the first limit hit ("" = none).
func (w *limitWatch) first() string {
	if w == nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.hit
}

// limitErr names the resource limit a failed run ran into; a run that
// succeeded anyway gets a note instead.
func (x *execution) limitErr(err error) error {
	hit := x.watch.first()
	switch {
	case hit == "":
		return err
	case err == nil:
		x.note(hit + " during the run (the agent recovered)")
		return nil
	}
	var le *LimitError
	if errors.As(err, &le) {
		return err
	}
	return &LimitError{Limit: hit, Err: err}
}
