//go:build unix

package scan

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user+system) this process has used. On a shared,
// oversubscribed machine wall-clock MB/s understates the per-core speed;
// the benchmarks also report MB per CPU-second ("cpu-MB/s").
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
