// Package capture bounds what a sandbox backend keeps of a command's output
// on the host: stdout and stderr of one Exec share one byte budget
// (sandbox.Limits.OutputBytes). Output past the budget is neither kept nor
// copied to the caller's live writers; the first byte past it triggers the
// backend's kill callback once.
package capture
