// Package backends is the one list of the sandbox backends fullsend ships:
// local, docker and kubernetes. internal/run, the CLI and the tests open
// backends here by name; adding a backend is one entry in list.
//
// The local and docker backends re-execute the fullsend binary inside the
// sandbox and exist on Linux only: elsewhere Open fails for them with
// sandbox.ErrUnavailable and a line saying they need Linux. An unknown
// name fails with sandbox.ErrUnknownBackend and the known names.
package backends

import (
	"fmt"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/kubernetes"
)

// The names of the backends (sandbox.BackendNames, the one list).
const (
	Local      = sandbox.BackendLocal
	Docker     = sandbox.BackendDocker
	Kubernetes = sandbox.BackendKubernetes
)

// list is sorted by name.
var list = []struct {
	name string
	open func(sandbox.Options) (sandbox.Backend, error)
}{
	{Docker, openDocker},
	{Kubernetes, func(o sandbox.Options) (sandbox.Backend, error) { return kubernetes.New(o) }},
	{Local, openLocal},
}

// Names lists the backends, sorted.
func Names() []string {
	out := make([]string, len(list))
	for i, b := range list {
		out[i] = b.name
	}
	return out
}

// Open returns the named backend built with o.
func Open(name string, o sandbox.Options) (sandbox.Backend, error) {
	for _, b := range list {
		if b.name == name {
			return b.open(o)
		}
	}
	return nil, fmt.Errorf("sandbox backend %q: %w (known: %v)", name, sandbox.ErrUnknownBackend, Names())
}
