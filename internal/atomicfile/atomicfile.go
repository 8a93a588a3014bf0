// Package atomicfile replaces a file in one step: readers see the old
// content or the new, never a part, and a failed write leaves the old file
// and no temporary behind.
//
// The temporary file is created beside the target (a rename is atomic only
// within one file system), given its mode, written, closed and renamed over
// the target. It is not synced to disk: a crash may lose the new content,
// never mix the two. (The lock file, which must survive a crash, has its
// own writer in package lock that also syncs.)
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write atomically replaces path with data, with permission bits perm.
func Write(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}
