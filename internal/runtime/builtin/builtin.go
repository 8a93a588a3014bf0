// Package builtin is the one list of the agent runtimes fullsend ships:
// script, claude and native. internal/run and the CLI look runtimes up here
// and know them only through package runtime's interfaces; adding a
// runtime is one package and one entry in entries.
package builtin

import (
	"slices"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/claude"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
	"github.com/fullsend-ai/fullsend/internal/runtime/script"
)

type entry struct {
	name string
	new  runtime.Factory
}

// entries are the runtimes, in the order their command-line flags are
// checked (a flag of several runtimes is reported under the first).
var entries = []entry{
	{native.Name, func() runtime.Runtime { return native.New(native.Options{}) }},
	{claude.Name, func() runtime.Runtime { return claude.New() }},
	{script.Name, func() runtime.Runtime { return script.New() }},
}

// Get returns a fresh Runtime named name, or a *runtime.UnknownError that
// lists the known names.
func Get(name string) (runtime.Runtime, error) {
	for _, e := range entries {
		if e.name == name {
			return e.new(), nil
		}
	}
	return nil, &runtime.UnknownError{Name: name, Known: Names()}
}

// Names lists the runtimes, sorted.
func Names() []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.name)
	}
	slices.Sort(out)
	return out
}

// Resumable lists the runtimes that can continue a run (runtime.Resumer),
// sorted.
func Resumable() []string {
	var out []string
	for _, n := range Names() {
		rt, _ := Get(n)
		if _, ok := rt.(runtime.Resumer); ok {
			out = append(out, n)
		}
	}
	return out
}
