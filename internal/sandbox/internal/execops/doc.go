// Package execops builds a session's Exec, Upload and Download on one
// primitive, the backend's Run (a command run in the sandbox with its
// streams attached), for the backends that reach their sandboxes only
// through an exec API (docker, kubernetes).
//
// # Rules enforced here
//
//   - Exec: ExecRequest.Stdin wins over StdinReader; a zero Timeout means
//     Limits.WallTime; stdout and stderr share one OutputBytes budget
//     (package capture), and a command past it fails with
//     sandbox.ErrOutputLimit (unless ctx was canceled).
//   - Upload and Download check the sandbox path (sandbox.CheckPath) and
//     move trees as tar streams through package archive; Download is
//     bounded by OutputBytes (sandbox.ErrOutputLimit past it).
//
// # Failure
//
// Errors are one line beginning with Ops.Name ("docker sandbox ID"), except
// Run's own errors from Exec, which the backend words itself.
package execops
