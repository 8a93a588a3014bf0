// Package builtin is the one list of the agent runtimes fullsend ships:
// script, claude and native. internal/run and the CLI look runtimes up here;
// adding a runtime is one entry in factories.
package builtin

import (
	"maps"
	"slices"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/claude"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
	"github.com/fullsend-ai/fullsend/internal/runtime/script"
)

var factories = map[string]runtime.Factory{
	script.Name: func() runtime.Runtime { return script.New() },
	claude.Name: func() runtime.Runtime { return claude.New() },
	native.Name: func() runtime.Runtime { return native.New(native.Options{}) },
}

// Get returns a fresh Runtime named name, or a *runtime.UnknownError that
// lists the known names.
func Get(name string) (runtime.Runtime, error) {
	f, ok := factories[name]
	if !ok {
		return nil, &runtime.UnknownError{Name: name, Known: Names()}
	}
	return f(), nil
}

// Names lists the runtimes, sorted.
func Names() []string { return slices.Sorted(maps.Keys(factories)) }
