package sandboxtest

import (
	"os"
	"syscall"
)

func statOwner(p string) int {
	st, err := os.Stat(p)
	if err != nil {
		return -1
	}
	return int(st.Sys().(*syscall.Stat_t).Uid)
}
