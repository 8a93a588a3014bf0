package sandboxtest

import (
	"context"
	"sync"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/backends"
)

var available sync.Map // backend name -> func() error (a sync.OnceValue)

// Unavailable reports why the registered backend name cannot run sandboxes
// on this machine, or nil: it opens the backend with default options and
// provisions and terminates one empty session (within 20 s), once per
// process and name. Tests that need a real sandbox skip on its error; the
// caller must link the backend (import its package) for backends.Open to
// find it.
func Unavailable(name string) error {
	f, _ := available.LoadOrStore(name, sync.OnceValue(func() error {
		b, err := backends.Open(name, sandbox.Options{})
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		s, err := b.Provision(ctx, sandbox.Spec{})
		if err != nil {
			return err
		}
		return s.Terminate(context.Background())
	}))
	return f.(func() error)()
}
