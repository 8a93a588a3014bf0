//go:build unix

package run

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/fullsend-ai/fullsend/internal/openflag"
)

// lockRunDir takes a non-blocking exclusive flock on a run directory for
// the life of the run, so that `fullsend run --resume` cannot continue a
// run another process is still executing. The kernel releases it when the
// process ends, however it ends.
func lockRunDir(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|openflag.NoFollow, 0)
	if err != nil {
		return nil, err
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, fmt.Errorf("run directory %s: %w", dir, ErrRunInProgress)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("run directory %s: lock: %w", dir, err)
	}
	return func() { f.Close() }, nil
}
