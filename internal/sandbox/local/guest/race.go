//go:build linux

package guest

import "os"

// RaceEnv returns "GORACE=…" when this process has GORACE set, for the
// environment of the processes the sandbox starts from its own binary and
// of the commands it runs. A race-instrumented binary otherwise sleeps a
// second at exit (the race detector's atexit_sleep_ms), which in tests
// costs that second per sandbox helper process; a normal build ignores the
// variable. Nothing else of the host environment passes.
func RaceEnv() []string {
	if v, ok := os.LookupEnv("GORACE"); ok {
		return []string{"GORACE=" + v}
	}
	return nil
}
