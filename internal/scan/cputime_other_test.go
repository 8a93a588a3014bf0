//go:build !unix

package scan

import "time"

// cpuTime is 0 here (no getrusage): the CPU-time metrics are left out.
func cpuTime() time.Duration { return 0 }
