package cli

import (
	"fmt"
	goruntime "runtime"
)

// hostOS is runtime.GOOS; tests set it to check the other systems' path.
var hostOS = goruntime.GOOS

// needsLinux is the error of a command that runs a sandbox (run, sandbox
// exec) on a system other than Linux, one line naming what does work
// there; nil on Linux. It takes goos so that every system's message is
// tested on Linux.
func needsLinux(command, goos string) error {
	if goos == "linux" {
		return nil
	}
	return fmt.Errorf("%s: the sandbox needs Linux (this is %s); validate, resolve, lock, graph, scan and cache work here", command, goos)
}

// thisSystemNeedsLinux is needsLinux for the running system.
func thisSystemNeedsLinux(command string) error { return needsLinux(command, hostOS) }
