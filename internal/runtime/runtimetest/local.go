package runtimetest

import (
	"context"
	"errors"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/backends"
)

// LocalSession provisions spec in a real local-backend sandbox (temporary
// files under t.TempDir) and terminates it when the test ends. The test is
// skipped where the local backend is unavailable (sandbox.ErrUnavailable:
// not Linux, no user namespaces) and fails on any other error. The test
// binary's TestMain must call reexec.Main first: the sandbox runs it in its
// roles.
func LocalSession(t testing.TB, spec sandbox.Spec) sandbox.Session {
	t.Helper()
	b, err := backends.Open(backends.Local, sandbox.Options{TempDir: t.TempDir()})
	if err == nil {
		var s sandbox.Session
		if s, err = b.Provision(context.Background(), spec); err == nil {
			t.Cleanup(func() { _ = s.Terminate(context.Background()) })
			return s
		}
	}
	if errors.Is(err, sandbox.ErrUnavailable) {
		t.Skip(err)
	}
	t.Fatal(err)
	return nil
}
