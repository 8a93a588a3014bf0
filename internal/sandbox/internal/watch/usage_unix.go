//go:build unix

package watch

import (
	"io/fs"
	"syscall"
)

// usage returns the device fi lives on and the bytes it occupies there
// (allocated blocks, not its apparent size).
func usage(fi fs.FileInfo) (dev uint64, n int64) {
	st := fi.Sys().(*syscall.Stat_t)
	return uint64(st.Dev), int64(st.Blocks) * 512
}
