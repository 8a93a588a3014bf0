//go:build unix

package cas

import (
	"fmt"
	"os"
	"syscall"
)

// secureDir makes sure no other user can write to a cache directory, since
// such a user could swap an entry between Get and its use. A directory
// owned by another user (root excepted) is refused; one of ours that is
// writable by group or others loses those bits (the cache is 0700 by
// design); a root-owned one writable by others (/tmp) is refused.
func secureDir(path string, fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	uid := uint32(os.Geteuid())
	if st.Uid != uid && st.Uid != 0 {
		return fmt.Errorf("%s is owned by uid %d, not by this user (uid %d)", path, st.Uid, uid)
	}
	perm := fi.Mode().Perm()
	if perm&0o022 == 0 {
		return nil
	}
	if st.Uid != uid {
		return fmt.Errorf("%s is writable by group or others (mode %04o)", path, perm)
	}
	if err := os.Chmod(path, perm&^0o022); err != nil {
		return fmt.Errorf("%s is writable by group or others (mode %04o) and chmod failed: %v", path, perm, err)
	}
	return nil
}
