//go:build !linux

package guest

import (
	"fmt"
	"os"
	"runtime"
)

// Run fails: the sandbox roles exist on Linux only.
func Run(role string) int {
	fmt.Fprintf(os.Stderr, "fullsend sandbox %s: the sandbox roles need Linux (this is %s)\n", role, runtime.GOOS)
	return 120
}

// LandlockABI is 0: Landlock is a Linux security module.
func LandlockABI() int { return 0 }
