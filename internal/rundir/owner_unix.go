//go:build unix

package rundir

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByUser reports whether fi belongs to the effective user.
func ownedByUser(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Uid == uint32(os.Geteuid())
}
