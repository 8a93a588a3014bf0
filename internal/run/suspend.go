package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/rundir"
	"github.com/fullsend-ai/fullsend/internal/runtime/workspace"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// SuspendDir is where a suspended interactive run keeps the snapshot of
// its sandbox (inside the run directory).
const SuspendDir = "suspend"

// ErrSuspended is returned by Agent.Suspend and Agent.Wake on a state
// they cannot act on.
var ErrSuspended = errors.New("sandbox suspend")

// IdleTimeout is sandbox.idle_timeout of the run's configuration (its
// default when unset): how long an interactive run (fullsend chat) waits
// without a turn before it suspends its sandbox.
func (a *Agent) IdleTimeout() time.Duration {
	if c := a.x.plan.Config; c != nil && c.Sandbox.IdleTimeout > 0 {
		return c.Sandbox.IdleTimeout
	}
	return config.DefaultIdleTimeout
}

// Suspended reports whether the sandbox is suspended (Wake brings it back).
func (a *Agent) Suspended() bool {
	a.sm.Lock()
	defer a.sm.Unlock()
	return a.suspended != nil
}

// Suspend takes a snapshot of the sandbox's writable state into the run
// directory (suspend/<sha256>.tar, see workspace.Save) and tears
// the sandbox down (host services, session); the runner's host side (the
// fetch service, the event log) stays. On a backend without snapshots, or
// when the snapshot fails, nothing is torn down and the error says why.
// Call it only between runs of the agent.
func (a *Agent) Suspend(ctx context.Context) error {
	a.sm.Lock()
	defer a.sm.Unlock()
	if a.suspended != nil {
		return nil
	}
	x := a.x
	if _, ok := sandbox.SnapshotterOf(x.sess); !ok {
		// Not a failed phase: this backend cannot suspend at all.
		return fmt.Errorf("%w: %w (the sandbox stays up)", ErrSuspended, workspace.ErrNoSnapshots)
	}
	return x.phase(ctx, "suspend", func(ctx context.Context) error {
		d, err := a.suspendDir()
		if err != nil {
			return err
		}
		defer d.Close()
		ref, err := workspace.Save(ctx, d, x.sess)
		if err != nil {
			return fmt.Errorf("%w: %w (the sandbox stays up)", ErrSuspended, err)
		}
		if x.stopHostServices != nil {
			x.stopHostServices()
			x.stopHostServices = nil
		}
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), TeardownTimeout)
		defer cancel()
		a.suspended = ref
		a.Session = nil
		if err := x.sess.Terminate(tctx); err != nil {
			return fmt.Errorf("%w: teardown: %w", ErrSuspended, err)
		}
		return nil
	})
}

// Wake brings a suspended sandbox back: it provisions, lays out,
// bootstraps and scans a new one as the run did at first (the same
// phases), then restores the snapshot Suspend took (verified: size and
// sha256) and removes it. A sandbox that is not suspended is left alone.
func (a *Agent) Wake(ctx context.Context) error {
	a.sm.Lock()
	defer a.sm.Unlock()
	if a.suspended == nil {
		return nil
	}
	x := a.x
	steps := []struct {
		name string
		f    func(context.Context) error
	}{
		{"provision", x.provision}, {"layout", x.layout}, {"bootstrap", x.bootstrap},
	}
	if len(x.plan.HostServices) > 0 {
		steps = append(steps, struct {
			name string
			f    func(context.Context) error
		}{"host_services", x.startHostServices})
	}
	steps = append(steps, struct {
		name string
		f    func(context.Context) error
	}{"scan_context", x.scanContext})
	for i, s := range steps {
		if err := x.phase(ctx, s.name, s.f); err != nil {
			if i > 0 { // the new sandbox is up: do not leave it behind
				a.dropWoken()
			}
			return fmt.Errorf("%w: wake: %w", ErrSuspended, err)
		}
	}
	return x.phase(ctx, "restore", func(ctx context.Context) error {
		d, err := a.suspendDir()
		if err != nil {
			return err
		}
		defer d.Close()
		if err := workspace.Restore(ctx, d, x.sess, a.suspended); err != nil {
			a.dropWoken()
			return fmt.Errorf("%w: wake: %w", ErrSuspended, err)
		}
		_ = d.Remove(a.suspended.File)
		a.suspended = nil
		a.Session = x.sess
		return nil
	})
}

// dropWoken tears down the sandbox a failed Wake provisioned (the run
// stays suspended; the next Wake starts over).
func (a *Agent) dropWoken() {
	x := a.x
	if x.stopHostServices != nil {
		x.stopHostServices()
		x.stopHostServices = nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), TeardownTimeout)
	defer cancel()
	_ = x.sess.Terminate(ctx)
}

// suspendDir opens (making it) the run directory's suspend/.
func (a *Agent) suspendDir() (*rundir.Dir, error) {
	d, err := rundir.Open(a.RunDir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if err := d.MkdirAll(SuspendDir, 0o700); err != nil {
		return nil, err
	}
	return d.Sub(SuspendDir)
}
