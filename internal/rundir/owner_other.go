//go:build !unix

package rundir

import "io/fs"

// ownedByUser: this platform has no uid in its file info; the os.Root
// confinement and the symlink checks are the guard.
func ownedByUser(fs.FileInfo) bool { return true }
