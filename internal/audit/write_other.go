//go:build !unix

package audit

import (
	"fmt"
	"os"
	"path/filepath"
)

// appendLine appends line to path with one File.Write. There is no
// O_NOFOLLOW here, but a non-regular file is still refused after opening
// it; without write(2) a record may in principle be split on a short write.
func appendLine(path string, line []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("%w (the log must be a regular file, not a symlink)", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return err
	} else if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
	}
	n, err := f.Write(line)
	if err == nil && n != len(line) {
		err = fmt.Errorf("short write (%d of %d bytes)", n, len(line))
	}
	return err
}
