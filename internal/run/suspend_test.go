//go:build linux

package run_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/local"
)

// plainBackend hides the optional interfaces of its sessions (a backend
// without snapshots).
type plainBackend struct{ sandbox.Backend }

type plainSession struct{ sandbox.Session }

func (b plainBackend) Provision(ctx context.Context, s sandbox.Spec) (sandbox.Session, error) {
	ss, err := b.Backend.Provision(ctx, s)
	if err != nil {
		return nil, err
	}
	return plainSession{ss}, nil
}

func sh(ctx context.Context, s sandbox.Session, script string) (string, error) {
	res, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"sh", "-c", script}})
	return string(res.Stdout) + string(res.Stderr), err
}

// TestAgentSuspendWake: an interactive run suspends its sandbox (the
// session is gone) and wakes it (a new one, laid out and scanned again)
// with the files the agent wrote; on a backend without snapshots Suspend
// refuses, records no phase, and the sandbox stays up.
func TestAgentSuspendWake(t *testing.T) {
	f := newFixture(t)
	p := f.mustPlan(baseHarness, run.Options{})
	var firstID, secondID string
	rep, _ := f.mustExecute(p, run.ExecOptions{Interactive: func(ctx context.Context, a *run.Agent) error {
		if out, err := sh(ctx, a.Session, "printf kept > /sandbox/workspace/note && mkdir -p /sandbox/.cache && printf h > /sandbox/.cache/h"); err != nil {
			return errors.New(out)
		}
		firstID = a.Session.ID()
		if err := a.Suspend(ctx); err != nil {
			return err
		}
		if !a.Suspended() || a.Session != nil {
			return errors.New("not suspended")
		}
		if err := a.Wake(ctx); err != nil {
			return err
		}
		secondID = a.Session.ID()
		out, err := sh(ctx, a.Session, "cat /sandbox/workspace/note /sandbox/.cache/h")
		if err != nil || out != "kepth" {
			return errors.New("after wake: " + out)
		}
		return nil
	}})
	if firstID == secondID || firstID == "" {
		t.Errorf("the woken sandbox is the same session %q", firstID)
	}
	var names []string
	for _, ph := range rep.Phases {
		names = append(names, ph.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "suspend,provision,layout,bootstrap,scan_context,restore") {
		t.Errorf("phases %v", names)
	}

	b, err := local.New(sandboxOpts(f.tmp))
	if err != nil {
		t.Skip(err)
	}
	rep, _ = f.mustExecute(f.mustPlan(baseHarness, run.Options{}), run.ExecOptions{Backend: plainBackend{b}, Interactive: func(ctx context.Context, a *run.Agent) error {
		err := a.Suspend(ctx)
		if !errors.Is(err, native.ErrNoSnapshots) || a.Suspended() || a.Session == nil {
			return errors.New("suspend without snapshots: " + errString(err))
		}
		_, err = sh(ctx, a.Session, "true")
		return err
	}})
	names = names[:0]
	for _, ph := range rep.Phases {
		names = append(names, ph.Name)
	}
	if slices.Contains(names, "suspend") {
		t.Errorf("a refused suspend recorded a phase: %v", names)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
