package builtin

import "github.com/fullsend-ai/fullsend/internal/runtime"

// Register adds a runtime for the length of a test, exactly as a runtime
// that ships is added: one entry in entries. It returns the undo.
func Register(name string, f runtime.Factory) (undo func()) {
	saved := entries
	entries = append(entries[:len(entries):len(entries)], entry{name, f})
	return func() { entries = saved }
}
